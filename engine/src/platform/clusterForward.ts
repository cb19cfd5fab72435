// Requests one node sends on to another (cluster.ts): a request for a job another node owns, a load-balanced request
// for a node with the endpoint's workers (lbPeers.ts). The request goes as it is, the answer comes back as it is sent,
// and a node that stops answering ends it with an outcome the caller turns into its own error: refused or silent
// before anything went out (another node may take it), broken after, idle too long, or hung until it counts as lost.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { NodeRow } from './store/types';

/**
 * Set on a request one node forwards to another: the nodes it went through. The receiver forwards it again only to a
 * node it has not been through (the job was handed on meanwhile), at most MAX_HOPS times in all.
 */
export const FORWARDED_HEADER = 'x-strato-forwarded-by';
export const MAX_HOPS = 3;
/** The longest a call from one node to another may take (a hand-off, a node's health or purge), and a connection. */
export const NODE_CALL_TIMEOUT_MS = 5000;

/** The nodes a request was forwarded through (FORWARDED_HEADER), first first; [] when a client sent it here. */
export function forwardedVia(req: IncomingMessage): string[] {
  return String(req.headers[FORWARDED_HEADER] ?? '')
    .split(',')
    .filter(Boolean);
}

/**
 * How a forwarded request ended: `answered` (the node's answer went back, or the client left), else why not, in `why`:
 * `unreachable` (no connection: nothing of the request went out, so another node may take it), `failed` (the
 * connection broke after the request went out, or the node was lost meanwhile: it may have run), `timeout` (nothing
 * came for the idle bound).
 */
export interface ForwardEnd {
  outcome: 'answered' | 'unreachable' | 'failed' | 'timeout';
  why?: string;
}

export interface ForwardOptions {
  /** The longest wait for each next byte of the answer; none by default. */
  idleMs?: number;
  /** Connections of the caller's own (load-balanced requests); by default the cluster's. */
  agent?: http.Agent;
}

export interface ForwarderDeps {
  nodeId: string;
  agent: http.Agent;
  /** A node whose heartbeat is older than this is lost; the nodes are looked at every heartbeatMs while requests wait. */
  lostMs: number;
  heartbeatMs: number;
  /** The nodes as the database sees them now. */
  nodes(): Promise<NodeRow[]>;
  log(line: string): void;
}

export class Forwarder {
  constructor(private readonly d: ForwarderDeps) {}

  /**
   * Sends the request on to another node as it is (method, path, query, headers, body), with this node added to
   * FORWARDED_HEADER, and passes its answer back as it comes (streamed). The body is read only once the connection
   * is made, so a node that cannot be reached leaves the request whole for another node. `idleMs` bounds the wait for
   * each next byte of the answer; `agent` holds the connections (by default the cluster's own). A node that hangs (its
   * connections stay open) is given up once it counts as lost (`waitingOn`). The caller answers for every outcome but
   * `answered`.
   */
  forward(node: Pick<NodeRow, 'id' | 'url'>, req: IncomingMessage, res: ServerResponse, via: string[], o: ForwardOptions = {}): Promise<ForwardEnd> {
    const idleMs = o.idleMs;
    return new Promise((resolve) => {
      let sent = false;
      let over = false;
      const lost = this.waitingOn(node.id);
      const end = (e: ForwardEnd) => {
        if (over) return;
        over = true;
        lost.done();
        resolve(e);
      };
      const target = new URL(req.url ?? '/', node.url);
      const headers = { ...req.headers, host: target.host, [FORWARDED_HEADER]: [...via, this.d.nodeId].join(',') };
      const up = http.request(target, { method: req.method, headers, agent: o.agent ?? this.d.agent }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
        r.on('end', () => end({ outcome: 'answered' }));
        r.on('error', (e) => {
          res.destroy();
          end({ outcome: 'failed', why: e.message });
        });
      });
      const send = () => {
        sent = true;
        req.pipe(up);
      };
      up.on('socket', (s) => {
        if (!s.connecting) return send(); // a kept-alive connection
        // A stopped node refuses at once; a machine that is gone does not answer at all: the connection gets a bound.
        const t = setTimeout(() => up.destroy(new Error(`no connection within ${NODE_CALL_TIMEOUT_MS} ms`)), NODE_CALL_TIMEOUT_MS);
        s.once('connect', () => {
          clearTimeout(t);
          send();
        });
        s.once('close', () => clearTimeout(t));
      });
      if (idleMs)
        up.setTimeout(idleMs, () => {
          up.destroy();
          end({ outcome: 'timeout', why: `nothing came from it for ${idleMs} ms` });
        });
      up.on('error', (e) => end({ outcome: sent ? 'failed' : 'unreachable', why: e.message }));
      lost.signal.addEventListener('abort', () => up.destroy(new Error(String(lost.signal.reason))), { once: true });
      res.on('close', () => {
        if (!res.writableFinished) up.destroy();
        end({ outcome: 'answered' });
      });
    });
  }

  /** Requests forwarded and not answered yet, by the node they wait on. */
  private waiting = new Map<string, Set<AbortController>>();
  private watcher: NodeJS.Timeout | null = null;

  /**
   * A request now waits on the node: its signal aborts once the node counts as lost (no heartbeat for lostMs), looked
   * at every heartbeat while some request waits. `done` when the request ended.
   */
  private waitingOn(nodeId: string): { signal: AbortSignal; done(): void } {
    const waiting = new AbortController();
    const onNode = this.waiting.get(nodeId) ?? this.waiting.set(nodeId, new Set()).get(nodeId)!;
    onNode.add(waiting);
    this.watcher ??= setInterval(() => void this.giveUpOnLost(), this.d.heartbeatMs).unref();
    return {
      signal: waiting.signal,
      done: () => {
        onNode.delete(waiting);
        if (onNode.size === 0) this.waiting.delete(nodeId);
      },
    };
  }

  private async giveUpOnLost(): Promise<void> {
    if (this.waiting.size === 0) {
      clearInterval(this.watcher!);
      this.watcher = null;
      return;
    }
    const nodes = await this.d.nodes().catch(() => null); // the database out of reach: nothing is known, they wait on
    for (const [id, requests] of this.waiting) {
      const n = nodes?.find((x) => x.id === id);
      if (n?.alive !== false) continue; // alive, or not listed (its row is gone: a node that left answered its requests)
      const why = `node ${id} at ${n.url} stopped heartbeating for over ${this.d.lostMs / 1000} s and counts as lost`;
      this.d.log(`strato platform: ${why}: giving up the ${requests.size} request(s) forwarded to it`);
      for (const r of requests) r.abort(why);
    }
  }

  /** This node stops: the requests still waiting on others end. */
  close(): void {
    if (this.watcher) clearInterval(this.watcher);
    for (const requests of this.waiting.values()) for (const r of requests) r.abort('this node is stopping');
  }
}
