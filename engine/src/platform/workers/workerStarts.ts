// How a worker comes to be: this node claims one of the endpoint's slots in the store (slots.ts), then starts the
// worker's process on it (supervisor.ts) — for the work waiting here (slots below `workers.max`), then for any slot of
// the minimum still free in the whole service (below `workers.min`), spread over the nodes. All held elsewhere is
// normal: the other nodes' workers take this node's queued jobs (workSharing.ts).
import type { ControlPlane, DeployedEndpoint } from '../controlPlane/service';
import type { Dispatcher } from '../jobs/dispatch';
import type { Supervisor } from './supervisor';
import type { WorkerSlots } from './slots';
import { isLive, type EndpointWorkers } from './endpointWorkers';
import type { Worker } from './worker';

/** A node that holds its share of the minimum's slots claims more only this long after (the others may be fetching the build). */
const MIN_SPREAD_MS = 10_000;

export interface WorkerStartsDeps {
  cp: ControlPlane;
  dispatch: Dispatcher;
  supervisor: Supervisor;
  slots: WorkerSlots;
  log(line: string): void;
  closing(): boolean;
  /** Every slot of the endpoint is held: load-balanced requests waiting here look for another node's worker (lbRouter.ts). */
  allHeld(endpointId: string): void;
  /** The system refused to start a worker of this revision: a start failure, counted as those of workers that exit early. */
  refused(ep: DeployedEndpoint, s: EndpointWorkers, error: string): void;
  /** Look at the endpoint again (what changed during a claim). */
  demand(endpointId: string): void;
}

export class WorkerStarts {
  constructor(private readonly d: WorkerStartsDeps) {}

  /**
   * A slot below the minimum may be free for this node: it holds not all of them, and no claim found them held lately.
   * `workers`: the endpoint's workers here, of any phase and revision (those live on the current revision count).
   */
  minimumOpen(ep: DeployedEndpoint, workers: Iterable<Worker>): boolean {
    const min = ep.config.workersMin;
    if (min === 0 || this.d.slots.knownFull(ep.id, min)) return false;
    let held = 0;
    for (const w of workers) if (isLive(w) && w.revision === ep.revision && (w.slot ?? min) < min) held++;
    return held < min;
  }

  /** Claims slots and starts a worker on each: `more` for the work waiting here (below max), then the minimum's. */
  async claimAndStart(first: DeployedEndpoint, s: EndpointWorkers, more: number): Promise<void> {
    s.claiming = true;
    let again = false;
    try {
      for (let ep = first; !this.d.closing();) {
        const below = more > 0 ? ep.config.workersMax : this.minimumOpen(ep, s.workers) ? ep.config.workersMin : 0;
        if (below === 0) return;
        const id = this.d.supervisor.newId(ep);
        // The minimum's slots spread over the live nodes: each takes its share first, and any free one only once the
        // others had MIN_SPREAD_MS to take theirs (a node that is gone or cannot start workers leaves them free).
        const fair = more <= 0 && (s.fairUntil === 0 || Date.now() < s.fairUntil);
        const slot = await this.d.slots.claim(ep.id, below, id, fair);
        if (slot === null) {
          if (fair) s.fairUntil ||= Date.now() + MIN_SPREAD_MS;
          if (below === ep.config.workersMax) {
            this.d.allHeld(ep.id);
            return; // every slot is held: nothing more, for the minimum either
          }
          continue; // the minimum is held elsewhere, or this node holds its share; knownFull ends the loop
        }
        const now = this.d.cp.endpoint(ep.id);
        const why = this.d.closing() || !now || now.revision !== ep.revision || slot >= now.config.workersMax ? 'gone' : this.d.supervisor.cannotStart(now);
        if (why) {
          this.d.slots.release(ep.id, id);
          if (why !== 'gone') s.waiting = why;
          again = why === 'gone';
          return;
        }
        ep = now!;
        let w: Worker;
        try {
          w = this.d.supervisor.spawn(ep, id);
        } catch (e) {
          // The system refused to start the process (its environment too large for exec): a start failure of this
          // revision, backed off and shown in health, not an error of the platform's.
          this.d.slots.release(ep.id, id);
          this.d.refused(ep, s, `the endpoint's worker could not be started: ${(e as Error).message}`);
          return;
        }
        w.slot = slot;
        this.d.dispatch.register(w);
        s.workers.add(w);
        this.d.slots.settled(id);
        more--;
        again = true;
      }
    } finally {
      s.claiming = false;
      if (again) this.d.demand(first.id); // what changed meanwhile (more work, a worker gone) is looked at again
    }
  }
}
