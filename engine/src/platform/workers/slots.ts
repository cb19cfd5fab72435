// An endpoint's `workers.max` and `workers.min` hold for the whole service, not per node: every worker holds one of
// the endpoint's slots 0 .. max-1 in the store (`worker_slots`), claimed before its process starts and released once
// the process is gone, so that at most `max` exist across the nodes (and the worker hosts they place on), whichever
// node starts them, in scale-up races and while a revision rolls (an old worker keeps its slot until it exited).
// Slots below `min` are the minimum's: any node may hold them, and their workers never stop for being idle. The
// embedded database has one node and pays one local statement per worker start (see docs/operations.md).
import type { PlatformStore } from '../store/types';

/** After a claim found every slot held, the next try waits this long, or until a slot is released somewhere. */
export const SLOT_RETRY_MS = 2000;

export interface WorkerSlotsDeps {
  store: Pick<PlatformStore, 'claimSlot' | 'releaseSlots' | 'syncSlots'>;
  /** A slot of the endpoint was released here: other nodes waiting for one may ask again (clusters). */
  released?(endpointId: string): void;
  log(line: string): void;
}

export class WorkerSlots {
  /** Per endpoint: claims below this bound found no free slot, the last at `at`; none is tried again before `until`. */
  private full = new Map<string, { below: number; at: number; until: number }>();
  /**
   * This node's statements on its slots, one after the other: a claim comes after the releases before it (a
   * replacement finds the slot its predecessor held), and a sync sees no claim half done.
   */
  private chain: Promise<unknown> = Promise.resolve();
  /** Workers that claimed (or are claiming) a slot and are not among the scheduler's workers yet: a sync keeps their rows. */
  private pending = new Set<string>();

  /** Releases seen per endpoint, here or elsewhere: a claim that ran meanwhile may have missed one. */
  private releases = new Map<string, number>();

  constructor(private readonly d: WorkerSlotsDeps) {}

  /** True when a claim below `below` is known to find nothing now (no statement is spent on it). */
  knownFull(endpointId: string, below: number): boolean {
    return this.fullSince(endpointId, below) !== null;
  }

  /** When a claim last found every slot below `below` held, while that is taken for true; else null. */
  fullSince(endpointId: string, below: number): number | null {
    const f = this.full.get(endpointId);
    if (!f) return null;
    if (Date.now() >= f.until) {
      this.full.delete(endpointId);
      return null;
    }
    return below <= f.below ? f.at : null;
  }

  /**
   * The lowest free slot below `below`, now held by the worker; null when all are held (with `fair`: or this node holds
   * its share of them, SqlStore.claimSlot) or the database is out of reach.
   */
  async claim(endpointId: string, below: number, workerId: string, fair = false): Promise<number | null> {
    if (below <= 0 || this.knownFull(endpointId, below)) return null;
    this.pending.add(workerId);
    let slot: number | null = null;
    for (let releases = -1; slot === null && releases !== (this.releases.get(endpointId) ?? 0);) {
      // A slot of the endpoint released while the claim ran (a worker that exited just now: the one an idle stop left
      // behind, as the next request comes) makes it ask again, after that release; else it waits SLOT_RETRY_MS.
      releases = this.releases.get(endpointId) ?? 0;
      slot = await this.serial(async () => {
        // A lost race (another node took the slot picked) is asked again; full is full.
        for (let attempt = 0; attempt < 3; attempt++) {
          const n = await this.d.store.claimSlot(endpointId, below, workerId, fair);
          if (n !== null) return n;
        }
        return null;
      }).catch((e: Error) => {
        this.d.log(`strato platform: could not claim a worker slot (${e.message}); trying again`);
        return null;
      });
    }
    if (slot !== null) {
      this.full.delete(endpointId);
      return slot;
    }
    this.pending.delete(workerId);
    const f = this.full.get(endpointId);
    const at = Date.now();
    this.full.set(endpointId, { below: Math.max(below, f && at < f.until ? f.below : 0), at, until: at + SLOT_RETRY_MS });
    return null;
  }

  /** The worker that claimed a slot is now among the scheduler's workers (a sync finds it there). */
  settled(workerId: string): void {
    this.pending.delete(workerId);
  }

  /** The worker is gone (or never started): its slot is free again. */
  release(endpointId: string, workerId: string): void {
    this.pending.delete(workerId);
    this.full.delete(endpointId);
    this.released(endpointId);
    // A release that fails (database out of reach) is done by the next sync, which deletes every row of a gone worker.
    void this.serial(() => this.d.store.releaseSlots([workerId])).then(
      () => this.d.released?.(endpointId),
      () => undefined,
    );
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Another node released a slot of the endpoint: a claim may find it. */
  freedElsewhere(endpointId: string): void {
    this.full.delete(endpointId);
    this.released(endpointId);
  }

  private released(endpointId: string): void {
    this.releases.set(endpointId, (this.releases.get(endpointId) ?? 0) + 1);
  }

  /**
   * Deletes this node's rows of workers that are gone, and answers which of `live` lost their slot: taken from this
   * node while it was out of reach of the database long enough to count as lost (their slots went to other nodes).
   */
  async sync(live: () => string[]): Promise<string[]> {
    return this.serial(async () => {
      const now = live();
      const held = new Set(await this.d.store.syncSlots([...now, ...this.pending]));
      return now.filter((id) => !held.has(id));
    });
  }
}
