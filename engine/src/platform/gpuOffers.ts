// GPUs across a cluster's nodes. A node sees only its own machine's GPUs and those of the worker hosts that joined it;
// each node tells the others which of its hosts have GPUs (on the LISTEN/NOTIFY channel, every REPEAT_MS). Then a node
// with no GPU for a queue endpoint that asks for one starts no worker on its CPU while another node has one: its queued
// jobs are counted by the node with the GPUs (queueBound.ts tells the counts), which starts a worker there, and the
// jobs move to that worker (workSharing.ts). Load-balanced endpoints run on the node their request reached (their
// requests wait there), so they keep the per-node rule.
import type { DeployedEndpoint } from './controlPlane/service';
import type { Cluster } from './cluster';
import type { QueueBound } from './queueBound';
import { mayRunOn, type GpuOffer, type HostPool } from './workers/hosts';

const REPEAT_MS = 2000;
/** What a node told is dropped after this long without news (it stopped). */
const FORGET_MS = 3 * REPEAT_MS;

export interface GpuOffersDeps {
  nodeId: string;
  cluster: Pick<Cluster, 'notify'>;
  hosts: HostPool;
  queueBound: Pick<QueueBound, 'queuedAt'>;
}

/** Whether the cluster rule applies: a queue endpoint that asks for a GPU. */
const wantsGpu = (ep: DeployedEndpoint) => !ep.config.cpu && ep.config.kind === 'QUEUE';

export class GpuOffers {
  private timer: NodeJS.Timeout | undefined;
  private heardFrom = new Map<string, { at: number; offers: GpuOffer[] }>();

  constructor(private readonly d: GpuOffersDeps) {}

  start(): void {
    void this.publish();
    this.timer = setInterval(() => void this.publish(), REPEAT_MS);
    this.timer.unref();
    this.d.hosts.elsewhere = (ep) => {
      const node = wantsGpu(ep) ? this.nodeFor(ep) : null;
      return node
        ? `no worker host of this node has a GPU; its jobs go to node ${node}, whose worker hosts have GPUs (a worker starts there and takes them)`
        : null;
    };
  }

  close(): void {
    clearInterval(this.timer);
    this.d.hosts.elsewhere = undefined;
  }

  /** Another node's offers, as it told them (`gpus <offers> <node>`: JSON, %-encoded, as a payload has no spaces). */
  heard(from: string, encoded: string): void {
    try {
      const offers = JSON.parse(decodeURIComponent(encoded)) as GpuOffer[];
      if (Array.isArray(offers)) this.heardFrom.set(from, { at: Date.now(), offers });
    } catch {
      /* a payload of another version: ignored */
    }
  }

  /** A node other than this one whose hosts have GPUs the endpoint may use (the first told), or null. */
  nodeFor(ep: DeployedEndpoint): string | null {
    for (const [node] of this.fresh()) if (this.offersFor(node, ep)) return node;
    return null;
  }

  /**
   * Jobs of a GPU queue endpoint queued on nodes that have no GPU for it, when this node has one: the backlog its
   * workers take over (the scheduler counts it as work here).
   */
  backlog(ep: DeployedEndpoint): number {
    if (!wantsGpu(ep) || !this.d.hosts.hasGpuFor(ep)) return 0;
    let n = 0;
    for (const [node, queued] of this.d.queueBound.queuedAt(ep.id)) if (!this.offersFor(node, ep)) n += queued;
    return n;
  }

  private offersFor(node: string, ep: DeployedEndpoint): boolean {
    const h = this.heardFrom.get(node);
    return !!h && Date.now() - h.at <= FORGET_MS && h.offers.some((o) => mayRunOn(o, ep));
  }

  private *fresh(): Iterable<[string, GpuOffer[]]> {
    const now = Date.now();
    for (const [node, h] of this.heardFrom) {
      if (now - h.at > FORGET_MS) this.heardFrom.delete(node);
      else yield [node, h.offers];
    }
  }

  private async publish(): Promise<void> {
    await this.d.cluster.notify(`gpus ${encodeURIComponent(JSON.stringify(this.d.hosts.gpuOffers()))} ${this.d.nodeId}`).catch(() => undefined);
  }
}
