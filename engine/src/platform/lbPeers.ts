// Load-balanced requests across the nodes of a cluster: which other live nodes hold worker slots of an endpoint (a
// store lookup, shared by the requests of one moment; lbRouter.ts asks only when this node has no ready worker), which
// of them takes a request (in proportion to their slots; never a node it came through, nor one that did not answer
// lately), and the forwarding itself (cluster.ts). The embedded database (one node) has none of this.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Cluster } from './cluster';
import type { ForwardEnd } from './clusterForward';
import type { PlatformStore, SlotHolder } from './store/types';

/** How old a lookup of an endpoint's slot holders may be for a request that finds no worker here. */
export const HOLDERS_MAX_AGE_MS = 1000;

export interface LbPeersDeps {
  store: Pick<PlatformStore, 'slotHolders'>;
  cluster: Cluster;
  /** A node whose heartbeat is older than this is lost: one that did not answer is left out that long. */
  lostMs: number;
  log(line: string): void;
}

export class LbPeers {
  private looked = new Map<string, { at: number; holders: Promise<SlotHolder[]> }>();
  /** Nodes that could not be reached, until when they are not chosen (by then they are lost, or answer again). */
  private silent = new Map<string, number>();
  private rr = 0;
  /** Connections of its own: as many requests may wait on other nodes' workers as on this node's (lbRouter.ts). */
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

  constructor(private readonly d: LbPeersDeps) {}

  /** The live nodes other than this one that hold slots of the endpoint, from a lookup made at `since` or later. */
  private holders(endpointId: string, since: number): Promise<SlotHolder[]> {
    const l = this.looked.get(endpointId);
    if (l && l.at >= since) return l.holders;
    // The database out of reach: no node is known, and the request is served here (as on one node).
    const holders = this.d.store.slotHolders(endpointId).catch(() => []);
    this.looked.set(endpointId, { at: Date.now(), holders });
    return holders;
  }

  /** The holders changed (a slot was freed somewhere): the next request looks again. */
  forget(endpointId: string): void {
    this.looked.delete(endpointId);
  }

  /**
   * The node that takes a request of the endpoint: one holding its slots, chosen round robin in proportion to them,
   * and neither in `skip` (the nodes the request went through) nor silent lately; null when there is none. The holders
   * are those of a lookup made at `since` or later (by default, at most HOLDERS_MAX_AGE_MS ago).
   */
  async choose(endpointId: string, skip: ReadonlySet<string>, since = Date.now() - HOLDERS_MAX_AGE_MS): Promise<SlotHolder | null> {
    const now = Date.now();
    const fit = (await this.holders(endpointId, since)).filter((h) => !skip.has(h.id) && !((this.silent.get(h.id) ?? 0) > now));
    const total = fit.reduce((n, h) => n + h.slots, 0);
    if (total === 0) return null;
    let k = this.rr++ % total;
    for (const h of fit) {
      if (k < h.slots) return h;
      k -= h.slots;
    }
    return null;
  }

  /** Forwards the request to the node (cluster.ts); a node it cannot reach is left out for a while. */
  async forward(endpointId: string, node: SlotHolder, req: IncomingMessage, res: ServerResponse, via: string[], idleMs: number): Promise<ForwardEnd> {
    const end = await this.d.cluster.forward(node, req, res, via, { idleMs, agent: this.agent });
    if (end.outcome === 'unreachable') {
      this.silent.set(node.id, Date.now() + this.d.lostMs);
      this.forget(endpointId);
      this.d.log(`strato platform: node ${node.id} at ${node.url}, which holds workers of endpoint ${endpointId}, did not answer (${end.why})`);
    }
    return end;
  }

  close(): void {
    this.agent.destroy();
  }
}
