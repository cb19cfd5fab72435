// The queue bound of an endpoint (`maxQueuedPerEndpoint`) for the whole service (clusters): `/run` and `/runsync`
// answer 429 once the service holds that many queued jobs of the endpoint, whichever nodes accepted them. Rows are
// written behind, in group commits, so a count in SQL lags; instead each node tells the others its queued counts on
// the LISTEN/NOTIFY channel (those that changed at most every PUBLISH_MS, all again every REPEAT_MS), and a node asks
// the others exactly (their `/_cluster/queued`, read from memory) only when what it heard puts the endpoint within a
// margin of the bound. Below that margin a submission costs no statement and no call.
import type { Cluster } from './cluster';
import type { ControlPlane } from './controlPlane/service';
import type { JobEngine } from './jobs/jobEngine';

export const NODE_QUEUED_PATH = '/_cluster/queued';
const PUBLISH_MS = 200;
const REPEAT_MS = 2000;
/** What a node told is dropped after this long without news (it stopped: the adopter of its jobs tells them). */
const FORGET_MS = 3 * REPEAT_MS;
/** pg_notify payloads must stay under 8000 bytes. */
const MAX_PAYLOAD = 7000;

export interface QueueBoundDeps {
  nodeId: string;
  engine: JobEngine;
  cluster: Pick<Cluster, 'serve' | 'notify' | 'callOthers'>;
  cp: Pick<ControlPlane, 'listEndpoints'>;
  /** The bound: queued jobs of one endpoint in the whole service. */
  max: number;
}

export class QueueBound {
  private timer: NodeJS.Timeout | undefined;
  private heardFrom = new Map<string, { at: number; counts: Map<string, number> }>();
  private told = new Map<string, number>();
  private toldAllAt = 0;
  private asking = new Map<string, Promise<number>>();
  /**
   * Within this many jobs of the bound the others are asked: what they told may be up to PUBLISH_MS old, and at
   * several thousand jobs/s a node accepts a few hundred in that time.
   */
  private readonly margin: number;

  constructor(private readonly d: QueueBoundDeps) {
    this.margin = Math.max(1000, Math.ceil(d.max / 20));
  }

  start(): void {
    this.d.cluster.serve(NODE_QUEUED_PATH, (body) => ({ queued: this.here(String((body as { endpointId?: unknown } | null)?.endpointId ?? '')) }));
    this.timer = setInterval(() => void this.publish(), PUBLISH_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Another node's counts, `<endpoint id>:<queued>,...`. */
  heard(from: string, entries: string): void {
    let h = this.heardFrom.get(from);
    if (!h) this.heardFrom.set(from, (h = { at: 0, counts: new Map() }));
    h.at = Date.now();
    for (const e of entries.split(',')) {
      const i = e.lastIndexOf(':');
      if (i > 0) h.counts.set(e.slice(0, i), Number(e.slice(i + 1)) || 0);
    }
  }

  /** Whether the endpoint may take one more queued job; a promise only near the bound (the others are asked). */
  admit(endpointId: string): boolean | Promise<boolean> {
    const here = this.here(endpointId);
    if (here >= this.d.max) return false;
    if (here + this.others(endpointId) < this.d.max - this.margin) return true;
    return this.exact(endpointId);
  }

  /** The queued jobs of the endpoint each other node told of lately. */
  queuedAt(endpointId: string): Array<[string, number]> {
    const now = Date.now();
    const out: Array<[string, number]> = [];
    for (const [id, h] of this.heardFrom) if (now - h.at <= FORGET_MS) out.push([id, h.counts.get(endpointId) ?? 0]);
    return out;
  }

  private here(endpointId: string): number {
    return this.d.engine.endpointJobs(endpointId).queue.queued;
  }

  private others(endpointId: string): number {
    const now = Date.now();
    let n = 0;
    for (const [id, h] of this.heardFrom) {
      if (now - h.at > FORGET_MS) this.heardFrom.delete(id);
      else n += h.counts.get(endpointId) ?? 0;
    }
    return n;
  }

  /** The others' queued jobs of the endpoint, asked now (one call per node for every submission waiting on it). */
  private async exact(endpointId: string): Promise<boolean> {
    let p = this.asking.get(endpointId);
    if (!p) {
      p = this.d.cluster
        .callOthers<{ queued: number }>(NODE_QUEUED_PATH, { endpointId })
        .then((answers) => answers.reduce((n, a) => n + (Number(a?.queued) || 0), 0))
        .finally(() => this.asking.delete(endpointId));
      this.asking.set(endpointId, p);
    }
    const others = await p;
    return this.here(endpointId) + others < this.d.max;
  }

  /** Tells the counts that changed (all of them every REPEAT_MS), in payloads NOTIFY takes. */
  private async publish(): Promise<void> {
    const now = Date.now();
    const all = now - this.toldAllAt >= REPEAT_MS;
    if (all) this.toldAllAt = now;
    const entries: string[] = [];
    for (const ep of this.d.cp.listEndpoints()) {
      if (ep.config.kind !== 'QUEUE') continue;
      const n = this.here(ep.id);
      // All again every REPEAT_MS, zeros too: a NOTIFY lost (it is not reported) is made good.
      if (!all && n === (this.told.get(ep.id) ?? 0)) continue;
      this.told.set(ep.id, n);
      entries.push(`${ep.id}:${n}`);
    }
    let payload: string[] = [];
    let size = 0;
    for (const e of [...entries, null]) {
      if (payload.length > 0 && (e === null || size + e.length + 1 > MAX_PAYLOAD)) {
        await this.d.cluster.notify(`counts ${payload.join(',')} ${this.d.nodeId}`);
        payload = [];
        size = 0;
      }
      if (e !== null) {
        payload.push(e);
        size += e.length + 1;
      }
    }
  }
}
