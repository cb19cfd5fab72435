// Load-balanced endpoints. Each has its own base URL `{base_url}/lb/<endpoint_id>`; a request to
// `{base_url}/lb/<endpoint_id>/<route>` is checked for the key (and its scope) and proxied, body and response as they are, to
// the least busy ready worker's HTTP server. In a cluster, a node without a ready worker sends the request to a node
// that has the endpoint's workers (lbPeers.ts) rather than start one. Platform-side errors are `{error, detail}`.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { mayInvoke, refusal } from './auth';
import { FORWARDED_HEADER, forwardedVia, MAX_HOPS, NODE_CALL_TIMEOUT_MS } from './clusterForward';
import type { KeyRing } from './controlPlane/keys';
import type { ControlPlane, DeployedEndpoint } from './controlPlane/service';
import { BODY_IDLE_MS, sendJson, stalledMessage, watchBodyIdle } from './http';
import type { LbPeers } from './lbPeers';
import type { SlotHolder } from './store/types';
import type { Scheduler } from './workers/scheduler';
import { FAILURES_BEFORE_FAILING_JOBS } from './workers/startFailures';
import type { Worker } from './workers/worker';
import { limits } from './options';

export interface LbRouterDeps {
  keys: KeyRing;
  cp: ControlPlane;
  scheduler: Scheduler;
  /** How long a request may wait for a worker to become ready (cold start). */
  coldStartWaitMs: number;
  /** The other nodes of a cluster and their workers (none on one node, and until the node joined its cluster). */
  peers(): LbPeers | undefined;
}

/** The header a load-balanced worker's token goes in (the Python runtime's _lb.TOKEN_HEADER). */
export const WORKER_TOKEN_HEADER = 'x-strato-worker-token';
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);

export class LbRouter {
  private pending = new Map<string, number>();
  private agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private rr = 0;

  constructor(private readonly d: LbRouterDeps) {}

  /** Requests waiting for a worker, per endpoint (the scheduler scales on them). */
  pendingOf(endpointId: string): number {
    return this.pending.get(endpointId) ?? 0;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const m = /^\/lb\/([^/?]+)(\/[^?]*)?(\?.*)?$/.exec(url);
    if (!m) return fail(res, 404, 'not found', 'load-balanced URLs look like {base_url}/lb/<endpoint_id>/<route>');
    const auth = this.d.keys.authenticate(req);
    if ('refused' in auth) return fail(res, 401, 'unauthorized', auth.refused);
    const endpointId = decodeURIComponent(m[1]);
    const ep = this.d.cp.endpoint(endpointId) ?? (await this.d.cp.endpointFresh(endpointId));
    if (!ep) return fail(res, 404, 'endpoint not found', `endpoint ${endpointId} does not exist; check the URL`);
    const app = this.d.cp.app(ep.appId)?.name ?? '';
    if (!mayInvoke(auth.principal, app)) return fail(res, 403, 'forbidden', refusal.invoke(auth.principal, app, endpointId));
    if (ep.config.kind !== 'LOAD_BALANCED')
      return fail(res, 404, 'not a load-balanced endpoint', `endpoint ${endpointId} is queue-based: use {base_url}/v2/${endpointId}/run or /runsync`);
    const path = (m[2] || '/') + (m[3] ?? '');
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limits.runsyncBodyBytes)
      return fail(res, 413, 'payload too large', `the body is larger than ${limits.runsyncBodyBytes / 1048576} MB`);

    const w = this.pick(endpointId, ep.revision);
    if (w) return this.proxy(req, res, w, path, ep.config.executionTimeoutMs);
    if (req.method === 'GET' && (m[2] ?? '/') === '/ping' && ep.config.workersMin === 0) {
      // Scaled to zero: the endpoint is healthy without waking a worker for a health check.
      return sendJson(res, 200, { status: 'healthy' });
    }
    return this.withoutWorker(req, res, ep, path);
  }

  /**
   * No ready worker here. In a cluster a node holding slots of the endpoint (its workers ready or starting) takes the
   * request at once, unless a worker starts here already. Else this node starts one (scale from zero) and waits; when
   * its claim finds every slot held elsewhere (another node won the race), the request goes to that node after all.
   * A node that cannot be reached is left out and the next one is tried (nothing of the request went out); one that
   * breaks off later is not (the request may have run there). A forwarded request goes on at most MAX_HOPS times in
   * all, never back to a node it went through: the last node serves it itself.
   */
  private async withoutWorker(req: IncomingMessage, res: ServerResponse, ep: DeployedEndpoint, path: string): Promise<void> {
    const via = forwardedVia(req);
    const peers = via.length < MAX_HOPS ? this.d.peers() : undefined;
    const skip = new Set(via);
    const silent: string[] = [];
    const deadline = Date.now() + this.d.coldStartWaitMs;
    // The node waits for its own cold start at most as long as this one would, then for the handler.
    const idleMs = this.d.coldStartWaitMs + ep.config.executionTimeoutMs + NODE_CALL_TIMEOUT_MS;
    let target: Worker | SlotHolder | null = peers && !this.d.scheduler.starting(ep.id, ep.revision) ? await peers.choose(ep.id, skip) : null;
    for (;;) {
      target ??= await this.waitHere(ep, deadline, res, peers && ((since) => peers.choose(ep.id, skip, since)));
      if (!target) {
        const why = this.d.scheduler.lastError(ep.id);
        if (silent.length === 0) return fail(res, 503, 'no worker available', why ?? `no worker of endpoint ${ep.id} became ready in time; try again`);
        return fail(
          res,
          503,
          'no worker available',
          `${why ?? `no worker of endpoint ${ep.id} became ready here in time`}, and ${silent.join(', and ')}: if it stopped, ` +
            'its slots go to the other nodes once it counts as lost (a few seconds); try again in a moment',
        );
      }
      if (!('url' in target)) return this.proxy(req, res, target, path, ep.config.executionTimeoutMs);
      const node = `node ${target.id} at ${target.url}, which has workers of the endpoint,`;
      const end = await peers!.forward(ep.id, target, req, res, via, idleMs);
      if (end.outcome === 'answered') return;
      if (end.outcome === 'timeout') return fail(res, 504, 'timeout', `${node} sent nothing for ${idleMs} ms (the request may have run there)`);
      if (end.outcome === 'failed')
        return fail(res, 502, 'node unavailable', `${node} broke off the request (${end.why}); it may have run there: try again if that is safe`);
      skip.add(target.id);
      silent.push(`${node} did not answer (${end.why})`);
      target = await peers!.choose(ep.id, skip, Date.now());
    }
  }

  /**
   * Waits here for a ready worker (the scheduler starts one for the requests pending here) until `deadline`; or, once
   * this node's claim found every slot held elsewhere, for the node `elsewhere` finds in a lookup made since then. A
   * worker that cannot start ends the wait as it fails queued jobs: once FAILURES_BEFORE_FAILING_JOBS starts in a row
   * failed, and one of them since the request came (null: the caller answers with the start's error). A fix deployed
   * meanwhile (a new revision) is waited for: its workers are taken.
   */
  private async waitHere(
    ep: DeployedEndpoint,
    deadline: number,
    res: ServerResponse,
    elsewhere: ((since: number) => Promise<SlotHolder | null>) | undefined,
  ): Promise<Worker | SlotHolder | null> {
    this.pending.set(ep.id, this.pendingOf(ep.id) + 1);
    let before = { revision: ep.revision, failed: this.d.scheduler.failedStarts(ep.id) };
    try {
      while (Date.now() < deadline && !res.destroyed) {
        this.d.scheduler.demand(ep.id);
        await this.d.scheduler.whenReady(ep.id, Math.min(1000, deadline - Date.now()));
        const revision = this.d.cp.endpoint(ep.id)?.revision ?? ep.revision;
        const w = this.pick(ep.id, revision);
        if (w) return w;
        if (revision !== before.revision) before = { revision, failed: 0 };
        const failed = this.d.scheduler.failedStarts(ep.id);
        if (failed >= FAILURES_BEFORE_FAILING_JOBS && failed > before.failed) return null;
        const since = elsewhere ? this.d.scheduler.slotsHeldSince(ep) : null;
        const node = since !== null ? await elsewhere!(since) : null;
        if (node) return node;
      }
      return null;
    } finally {
      this.pending.set(ep.id, this.pendingOf(ep.id) - 1);
    }
  }

  /** The least busy ready worker of the current revision (round robin among equals). */
  private pick(endpointId: string, revision: number): Worker | null {
    const ready = this.d.scheduler.workersOf(endpointId).filter((w) => w.phase === 'ready' && w.port && w.revision === revision);
    if (ready.length === 0) return null;
    const least = Math.min(...ready.map((w) => w.inFlight));
    const best = ready.filter((w) => w.inFlight === least);
    return best[this.rr++ % best.length];
  }

  private proxy(req: IncomingMessage, res: ServerResponse, w: Worker, path: string, timeoutMs: number): void {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_HEADERS.has(k) && k !== 'authorization' && k !== FORWARDED_HEADER) headers[k] = v;
    headers.host = `${w.host ?? '127.0.0.1'}:${w.port}`;
    // The worker answers only requests that carry its token (_lb.py): its port is open to the host's other processes.
    headers[WORKER_TOKEN_HEADER] = w.token;
    w.inFlight++;
    w.lastBusy = Date.now();
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      w.inFlight--;
      w.lastBusy = Date.now();
      this.d.scheduler.freed(w);
    };
    const up = http.request({ host: w.host ?? '127.0.0.1', port: w.port, method: req.method, path, headers, agent: this.agent }, (wr) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(wr.headers)) if (!HOP_HEADERS.has(k)) out[k] = v;
      res.writeHead(wr.statusCode ?? 502, out);
      wr.pipe(res);
      wr.on('end', finish);
      wr.on('error', finish);
    });
    up.setTimeout(timeoutMs, () => {
      up.destroy();
      finish();
      fail(res, 504, 'timeout', `the handler did not answer within the endpoint's execution timeout of ${timeoutMs} ms`);
    });
    up.on('error', (e) => {
      finish();
      fail(res, 502, 'worker unavailable', `the request could not reach worker ${w.id}: ${e.message}; try again`);
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
      finish();
    });
    // A body that sends nothing for BODY_IDLE_MS is given up, as every route's is: it would hold the worker's slot
    // until the execution timeout.
    watchBodyIdle(req, () => {
      up.destroy();
      finish();
      fail(res, 408, 'request timeout', stalledMessage(BODY_IDLE_MS));
    });
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limits.runsyncBodyBytes && !res.headersSent) {
        // A chunked body without Content-Length: counted here, refused past the limit.
        up.destroy();
        finish();
        fail(res, 413, 'payload too large', `the body is larger than ${limits.runsyncBodyBytes / 1048576} MB`);
        req.destroy();
      }
    });
    req.pipe(up);
  }

  close(): void {
    this.agent.destroy();
  }
}

function fail(res: ServerResponse, status: number, error: string, detail: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, status, { error, detail });
}
