// Load-balanced endpoints. Each has its own base URL `{base_url}/lb/<endpoint_id>`; a request to
// `{base_url}/lb/<endpoint_id>/<route>` is checked for the key (and its scope) and proxied, body and response as they are, to
// the least busy ready worker's HTTP server. Platform-side errors are `{error, detail}` like the worker's own.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { mayInvoke, refusal } from './auth';
import type { KeyRing } from './controlPlane/keys';
import type { ControlPlane } from './controlPlane/service';
import { sendJson } from './http';
import type { Scheduler } from './workers/scheduler';
import type { Worker } from './workers/worker';
import { limits } from './options';

export interface LbRouterDeps {
  keys: KeyRing;
  cp: ControlPlane;
  scheduler: Scheduler;
  /** How long a request may wait for a worker to become ready (cold start). */
  coldStartWaitMs: number;
}

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

    let w = this.pick(endpointId, ep.revision);
    if (!w && req.method === 'GET' && (m[2] ?? '/') === '/ping' && ep.config.workersMin === 0) {
      // Scaled to zero: the endpoint is healthy without waking a worker for a health check.
      return sendJson(res, 200, { status: 'healthy' });
    }
    if (!w) {
      this.pending.set(endpointId, this.pendingOf(endpointId) + 1);
      try {
        const deadline = Date.now() + this.d.coldStartWaitMs;
        while (!w && Date.now() < deadline && !res.destroyed) {
          this.d.scheduler.demand(endpointId);
          await this.d.scheduler.whenReady(endpointId, Math.min(1000, deadline - Date.now()));
          w = this.pick(endpointId, ep.revision);
        }
      } finally {
        this.pending.set(endpointId, this.pendingOf(endpointId) - 1);
      }
      if (!w) {
        const why = this.d.scheduler.lastError(endpointId);
        return fail(res, 503, 'no worker available', why ?? `no worker of endpoint ${endpointId} became ready in time; try again`);
      }
    }
    this.forward(req, res, w, path, ep.config.executionTimeoutMs);
  }

  /** The least busy ready worker of the current revision (round robin among equals). */
  private pick(endpointId: string, revision: number): Worker | null {
    const ready = this.d.scheduler.workersOf(endpointId).filter((w) => w.phase === 'ready' && w.port && w.revision === revision);
    if (ready.length === 0) return null;
    const least = Math.min(...ready.map((w) => w.inFlight));
    const best = ready.filter((w) => w.inFlight === least);
    return best[this.rr++ % best.length];
  }

  private forward(req: IncomingMessage, res: ServerResponse, w: Worker, path: string, timeoutMs: number): void {
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_HEADERS.has(k) && k !== 'authorization') headers[k] = v;
    headers.host = `${w.host ?? '127.0.0.1'}:${w.port}`;
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
