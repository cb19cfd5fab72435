// Work goes where workers are free (cluster nodes): a node whose workers of an endpoint wait for work asks the node
// with the most queued jobs of that endpoint (found in SQL) to hand some over. The giver takes them out of its queue
// and moves their rows to the taker in one UPDATE (`owner`, still IN_QUEUE), so a job is never in two queues; the
// taker queues them for its waiting workers. A node with more queued jobs than its workers take says so on the
// LISTEN/NOTIFY channel, so idle nodes ask at once rather than at their next look.
import type { Cluster } from './cluster';
import type { ControlPlane } from './controlPlane/service';
import type { Job } from './jobs/job';
import type { JobEngine } from './jobs/jobEngine';
import type { JobWriter } from './store/jobWriter';
import type { JobRow, PlatformStore } from './store/types';

export const HANDOFF_PATH = '/_cluster/handoff';
/** How often a node looks for work when its workers wait. */
const LOOK_EVERY_MS = 250;
/** After a hand-off whose answer was lost, this node looks for rows it owns but does not hold, this long. */
const ORPHAN_WATCH_MS = 30_000;

export interface WorkSharingDeps {
  nodeId: string;
  store: PlatformStore;
  engine: JobEngine;
  writer: JobWriter;
  cp: ControlPlane;
  cluster: Cluster;
  log(line: string): void;
}

export class WorkSharing {
  private timer: NodeJS.Timeout | undefined;
  /** Hand-offs this node asked for, per endpoint, until their jobs are queued here (or the ask failed). */
  private asking = new Map<string, Promise<void>>();
  private announced = new Map<string, number>();
  private watchOrphansUntil = 0;
  private looking = false;

  constructor(private readonly d: WorkSharingDeps) {}

  start(): void {
    this.d.cluster.serve(HANDOFF_PATH, (body) => this.give(body as { endpointId: string; max: number; to: string }));
    this.timer = setInterval(() => void this.look(), LOOK_EVERY_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Room the workers parked on the endpoint's empty queue here have for jobs. */
  private idleRoom(endpointId: string): number {
    const q = this.d.engine.endpointJobs(endpointId).queue;
    return q.queued > 0 ? 0 : q.room();
  }

  /**
   * Resolves once the hand-off of the endpoint's jobs this node asked for, if any, is over: a request for a job that
   * may be on its way here (its row names this node already, or not yet) waits for it rather than chase it.
   */
  arriving(endpointId: string): Promise<void> | undefined {
    return this.asking.get(endpointId);
  }

  /** Another node has queued jobs of this endpoint its workers do not take: ask now if workers wait here. */
  wake(endpointId: string): void {
    if (this.idleRoom(endpointId) > 0) void this.look([endpointId]);
  }

  private async look(only?: string[]): Promise<void> {
    if (this.looking && !only) return;
    this.looking = true;
    try {
      const queueEndpoints = this.d.cp.listEndpoints().filter((e) => e.config.kind === 'QUEUE');
      this.announce(queueEndpoints.map((e) => e.id));
      const idle = (only ?? queueEndpoints.map((e) => e.id)).filter((id) => !this.asking.has(id) && this.idleRoom(id) > 0);
      if (Date.now() < this.watchOrphansUntil) await this.adoptOrphans();
      if (idle.length === 0) return;
      for (const h of await this.d.store.queuedElsewhere(idle)) void this.ask(h.endpoint_id, h.owner);
    } catch {
      /* the database is out of reach: the next look tries again */
    } finally {
      this.looking = false;
    }
  }

  /** Says on the channel which endpoints have jobs queued here and no worker waiting, at most once a second each. */
  private announce(endpointIds: string[]): void {
    const now = Date.now();
    for (const id of endpointIds) {
      const q = this.d.engine.endpointJobs(id).queue;
      if (q.queued === 0 || q.room() > 0 || now - (this.announced.get(id) ?? 0) < 1000) continue;
      this.announced.set(id, now);
      void this.d.cluster.notify(`queued ${id} ${this.d.nodeId}`);
    }
  }

  private async ask(endpointId: string, owner: string): Promise<void> {
    const room = this.idleRoom(endpointId);
    if (room <= 0 || this.asking.has(endpointId)) return;
    let done = () => undefined as void;
    this.asking.set(endpointId, new Promise<void>((r) => (done = r)));
    try {
      const node = (await this.d.cluster.nodes()).find((n) => n.id === owner && n.alive);
      if (!node) return;
      const rows = await this.d.cluster.call<JobRow[]>(node, HANDOFF_PATH, { endpointId, max: room, to: this.d.nodeId });
      if (rows.length > 0) this.d.engine.adopt(rows);
    } catch (e) {
      // The giver may have moved rows to this node without the answer arriving: look for them for a while.
      this.watchOrphansUntil = Date.now() + ORPHAN_WATCH_MS;
      this.d.log(`strato platform: asking node ${owner} for queued jobs failed (${(e as Error).message})`);
    } finally {
      this.asking.delete(endpointId);
      done();
    }
  }

  /** Queues the live rows this node owns but does not hold (a hand-off whose answer was lost); between group commits. */
  private async adoptOrphans(): Promise<void> {
    const rows = await this.d.writer.exclusive(async () => {
      const pending = new Set(this.d.writer.pendingIds());
      return (await this.d.store.loadLiveJobs()).filter((r) => !pending.has(r.id) && !this.d.engine.jobs.has(r.id));
    });
    if (rows.length > 0) this.d.engine.adopt(rows);
  }

  /** The giving side: `POST /_cluster/handoff {endpointId, max, to}` answers the rows moved to `to`. */
  private async give(body: { endpointId: string; max: number; to: string }): Promise<JobRow[]> {
    const max = Math.max(0, Math.min(Number(body.max) || 0, 1000));
    if (!this.d.cp.endpoint(body.endpointId) || max === 0 || body.to === this.d.nodeId) return [];
    const jobs = takeForHandOff(this.d.engine, body.endpointId, max);
    if (jobs.length === 0) return [];
    let rows: JobRow[] = [];
    try {
      rows = await this.d.store.handOffJobs(
        jobs.map((j) => j.id),
        body.to,
      );
    } finally {
      handedOff(this.d.engine, body.endpointId, jobs, new Set(rows.map((r) => r.id)), body.to);
    }
    return rows;
  }
}

/**
 * Takes up to `max` queued jobs of the endpoint whose rows are durable, to hand them to another node. A `/runsync`
 * request waiting here on one of them asks the taker for its end (jobsApi.ts). They leave the queue (not counted there
 * meanwhile); `handedOff` settles them.
 */
function takeForHandOff(engine: JobEngine, endpointId: string, max: number): Job[] {
  const queue = engine.endpointJobs(endpointId).queue;
  const out: Job[] = [];
  const keep: Job[] = [];
  for (const job of queue.take(max)) {
    if (job.storeState === 'stored' && !engine.deps.writer.pending(job)) out.push(job);
    else keep.push(job);
  }
  for (const job of keep.reverse()) queue.pushFront(job);
  for (const job of out) job.handingOff = true;
  return out;
}

/** The hand-off is over: the jobs in `moved` belong to another node now and leave memory; the others queue again. */
function handedOff(engine: JobEngine, endpointId: string, jobs: Job[], moved: Set<string>, to: string): void {
  const e = engine.endpointJobs(endpointId);
  for (const job of [...jobs].reverse()) {
    job.handingOff = false;
    if (moved.has(job.id)) {
      // What this node still says of it (a cancel that came meanwhile) is not written: the row is not its own.
      engine.jobs.delete(job.id);
      e.retried -= job.retries;
      job.storeState = 'gone';
      job.handedTo = to;
    } else if (job.status === 'IN_QUEUE' && job.storeState !== 'gone') e.queue.pushFront(job);
    job.notify(); // a request that waited for the hand-off to end (jobsApi.ts) looks again
  }
}
