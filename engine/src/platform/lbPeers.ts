// Load-balanced requests across the nodes of a cluster: which other live nodes hold worker slots of an endpoint (a
// store lookup, shared by the requests of one moment; lbRouter.ts asks only when this node has no ready worker), which
// of them takes a request (in proportion to their slots; never a node it came through, nor one that did not answer
// lately), and the forwarding itself (cluster.ts). The embedded database (one node) has none of this.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Cluster, ForwardEnd } from './cluster';
import type { PlatformStore, SlotHolder } from './store/types';

/** How old a lookup of an endpoint's slot holders may be for a request that finds no worker here. */
export const HOLDERS_MAX_AGE_MS = 1000;

export interface LbPeersDeps {
  store: Pick<PlatformStore, 'slotHolders'>;
  cluster: Cluster;
  /** A node whose heartbeat is older than this is lost: one that did not answer is left out that long. */
  lostMs: number;
  /** How often the nodes that requests wait on are looked at while some wait (the heartbeat's period). */
  watchMs: number;
  log(line: string): void;
}

export class LbPeers {
  private looked = new Map<string, { at: number; holders: Promise<SlotHolder[]> }>();
  /** Nodes that could not be reached, until when they are not chosen (by then they are lost, or answer again). */
  private silent = new Map<string, number>();
  private rr = 0;
  /** Requests forwarded and not answered yet, by the node they wait on. */
  private waiting = new Map<string, Set<AbortController>>();
  private watcher: NodeJS.Timeout | null = null;
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

  /**
   * Forwards the request to the node (cluster.ts); a node it cannot reach is left out for a while. A node that stops
   * heartbeating (a hung or cut-off machine keeps its connections open) is given up once it counts as lost, rather than
   * when the answer's idle bound passes (minutes).
   */
  async forward(endpointId: string, node: SlotHolder, req: IncomingMessage, res: ServerResponse, via: string[], idleMs: number): Promise<ForwardEnd> {
    const waiting = new AbortController();
    const onNode = this.waiting.get(node.id) ?? this.waiting.set(node.id, new Set()).get(node.id)!;
    onNode.add(waiting);
    this.watch();
    let end: ForwardEnd;
    try {
      end = await this.d.cluster.forward(node, req, res, via, { idleMs, agent: this.agent, signal: waiting.signal });
    } finally {
      onNode.delete(waiting);
      if (onNode.size === 0) this.waiting.delete(node.id);
    }
    if (end.outcome === 'unreachable') {
      this.silent.set(node.id, Date.now() + this.d.lostMs);
      this.forget(endpointId);
      this.d.log(`strato platform: node ${node.id} at ${node.url}, which holds workers of endpoint ${endpointId}, did not answer (${end.why})`);
    }
    return end;
  }

  /** While requests wait on other nodes, gives up on those waiting on a node that is lost (no heartbeat for lostMs). */
  private watch(): void {
    if (this.watcher) return;
    this.watcher = setInterval(() => {
      if (this.waiting.size === 0) {
        clearInterval(this.watcher!);
        this.watcher = null;
        return;
      }
      void this.d.cluster.nodes(true).then(
        (nodes) => {
          for (const [id, requests] of this.waiting) {
            const n = nodes.find((x) => x.id === id);
            if (n?.alive !== false) continue; // alive, or not listed (its row is gone: a clean leave answers its requests)
            const why = `node ${id} at ${n.url} stopped heartbeating for over ${this.d.lostMs / 1000} s and counts as lost`;
            this.d.log(`strato platform: ${why}: giving up the ${requests.size} load-balanced request(s) forwarded to it`);
            for (const r of requests) r.abort(why);
          }
        },
        () => undefined, // the database out of reach: nothing is known, the requests wait on
      );
    }, this.d.watchMs);
    this.watcher.unref();
  }

  close(): void {
    if (this.watcher) clearInterval(this.watcher);
    for (const requests of this.waiting.values()) for (const r of requests) r.abort('the platform is stopping');
    this.agent.destroy();
  }
}
