// The development server's HTTP side: health at /, Swagger UI at /docs over /openapi.json, queue functions at
// POST /<module>/runsync and load-balanced routes at /<module>/<route>, each call run on a live- endpoint.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Endpoint } from '../api/controlPlane';
import { send } from '../api/http';
import { limits } from '../catalog';
import { memberText } from '../util/jsonText';
import { combine } from '../project';
import { devOpenApiDocument } from '../clientgen/openapi';
import { checkOrigin } from './origin';
import { matchRoute, type DevRoute } from './routes';
import { describeDevError, projectWide, type DevSession } from './session';
import { listenError } from '../util/errors';
import { swaggerAsset, swaggerHtml } from './swagger';
import { PlatformError } from '../platform/errors';
import { readBody } from '../platform/http';

type Reply = { status: number; body: unknown; type?: string };

const json = (status: number, body: unknown): Reply => ({ status, body });

/**
 * The call's body, within the limit the platform sets a `/runsync` body: read as the platform reads it (a body over it
 * is answered 413 and the connection closed after the answer, not reset before it), or the answer saying why not.
 */
async function readCallBody(req: http.IncomingMessage, what: string): Promise<Buffer | Reply> {
  try {
    return await readBody(req, limits.runsyncBodyBytes, what);
  } catch (e) {
    if (e instanceof PlatformError) return json(e.status, { error: e.message });
    throw e;
  }
}

/** `listenHost` is the --host the server listens on: a name other than localhost that its Host header may carry. */
export function createDevServer(session: DevSession, listenHost = 'localhost'): http.Server {
  return http.createServer((req, res) => {
    const verdict = checkOrigin(req.headers as Parameters<typeof checkOrigin>[0], listenHost);
    const reply = verdict.ok ? handle(session, req) : Promise.resolve(json(403, { error: verdict.reason }));
    reply
      .catch((e: Error): Reply => json(502, { error: 'the call could not be run on the platform', detail: e.message }))
      .then((r) => {
        if (res.headersSent) return;
        const isBuffer = Buffer.isBuffer(r.body);
        const payload = isBuffer ? (r.body as Buffer) : typeof r.body === 'string' && r.type ? r.body : JSON.stringify(r.body);
        res.writeHead(r.status, { 'content-type': r.type ?? 'application/json', 'cache-control': 'no-store' });
        res.end(payload);
      });
  });
}

async function handle(session: DevSession, req: http.IncomingMessage): Promise<Reply> {
  await session.started;
  const url = new URL(req.url ?? '/', 'http://dev');
  const method = (req.method ?? 'GET').toUpperCase();
  if (method === 'GET' && url.pathname === '/') {
    return json(200, { status: 'ok', app: session.appName, routes: session.routes.length, docs: '/docs', errors: session.errors.map(describeDevError) });
  }
  if (method === 'GET' && (url.pathname === '/docs' || url.pathname === '/docs/'))
    return { status: 200, body: swaggerHtml(`${session.appName} - strato dev`), type: 'text/html; charset=utf-8' };
  if (method === 'GET' && url.pathname.startsWith('/docs/static/')) {
    const a = swaggerAsset(url.pathname.slice('/docs/static/'.length));
    return a ? { status: 200, body: a.body, type: a.type } : json(404, { error: 'not found', detail: url.pathname });
  }
  if (method === 'GET' && url.pathname === '/openapi.json')
    return json(200, devOpenApiDocument(session.appName, session.model ?? combine(session.root, []), session.routes));

  await session.settled();
  const { route, pathMatched, endpointPath } = matchRoute(session.routes, method, url.pathname);
  if (!route) {
    const list = session.routes.map((r) => `${r.method} ${r.path}`).join(', ');
    return pathMatched
      ? json(405, { error: 'method not allowed', detail: `${method} is not declared for ${url.pathname}; routes: ${list}` })
      : json(404, { error: 'not found', detail: `no function is served at ${method} ${url.pathname}; routes: ${list} (see /docs)` });
  }
  const errors = session.errorsFor(route);
  if (errors.length) {
    const where = projectWide(errors) ? 'the project' : route.endpoint.file;
    return json(400, { error: `${where} has an error; fix it and save`, detail: errors.map(describeDevError).join('\n') });
  }
  const body = await readCallBody(req, `a call to ${route.endpoint.name}`);
  if (!Buffer.isBuffer(body)) return body;
  return route.kind === 'QUEUE'
    ? callQueue(session, route, body)
    : callRoute(session, route, method, endpointPath ?? '/', url.search, body, req.headers['content-type']);
}

async function callQueue(session: DevSession, route: DevRoute, body: Buffer): Promise<Reply> {
  let parsed: unknown;
  try {
    parsed = body.length ? JSON.parse(body.toString('utf8')) : undefined;
  } catch (e) {
    return json(400, { error: `the body is not valid JSON (${(e as Error).message}): send {"input": {...}}` });
  }
  const input = (parsed as { input?: unknown } | undefined)?.input;
  if (!parsed || typeof parsed !== 'object' || input === undefined || typeof input !== 'object' || input === null || Array.isArray(input)) {
    return json(400, { error: 'queue-based functions take {"input": {...}} with the function\'s arguments inside "input"' });
  }
  // The input travels as it was written, and the answer as the platform gave it: parsed and written again in
  // JavaScript, 2.0 came back 2 and 12345678901234567890 as 12345678901234567000, unlike the deployed endpoint.
  const inputText = memberText(body.toString('utf8'), 'input')!;
  const timeoutMs = callTimeoutMs(route);
  const wait = Math.max(1000, Math.min(timeoutMs, 300_000));
  const { ep, r: first } = await onLive(session, route, (ep) =>
    send(session.target, 'POST', `/v2/${encodeURIComponent(ep.id)}/runsync?wait=${wait}`, {
      raw: `{"input":${inputText}}`,
      headers: { 'content-type': 'application/json' },
      timeoutMs: wait + 10_000,
    }),
  );
  let job = first.body as { id?: string; status?: string };
  let jobText = first.text;
  const deadline = Date.now() + timeoutMs;
  const live = () => job?.status === 'IN_QUEUE' || job?.status === 'IN_PROGRESS';
  while (first.status === 200 && job?.id && live() && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    const s = await send(session.target, 'GET', `/v2/${encodeURIComponent(ep.id)}/status/${encodeURIComponent(job.id)}`);
    if (s.status !== 200) return { status: s.status, body: s.body };
    job = s.body as typeof job;
    jobText = s.text;
  }
  if (first.status === 200 && live())
    return json(504, {
      error: `${route.endpoint.name} has not ended after ${Math.round(timeoutMs / 1000)} s (job ${job.id}, ${job.status}); the dev server stopped waiting`,
    });
  return { status: first.status, body: jobText, type: 'application/json' };
}

/**
 * How long the dev server waits for a call: the platform ends a job or a route at the endpoint's execution timeout
 * (600 s unless it declares one), after a cold start of up to 2 minutes, so the call always gets the platform's
 * answer (a result, TIMED_OUT, a 504), as a client of the deployed endpoint does. A queue call waited 60 s before and
 * then answered a job id still IN_PROGRESS, which nothing on the dev server could read.
 */
export function callTimeoutMs(route: DevRoute): number {
  return (route.endpoint.config.executionTimeoutMs ?? limits.defaultExecutionLimitMs) + 120_000;
}

async function callRoute(
  session: DevSession,
  route: DevRoute,
  method: string,
  endpointPath: string,
  search: string,
  body: Buffer,
  contentType: string | undefined,
): Promise<Reply> {
  const { r } = await onLive(session, route, (ep) =>
    send(session.target, method, `/lb/${encodeURIComponent(ep.id)}${endpointPath}${search}`, {
      raw: body.length ? body : undefined,
      headers: body.length ? { 'content-type': contentType ?? 'application/json' } : {},
      timeoutMs: callTimeoutMs(route),
    }),
  );
  // As the route answered it, in its own type (an HTML page, plain text, JSON with its numbers as written).
  return { status: r.status, body: r.text, type: String(r.headers['content-type'] ?? 'application/json') };
}

/** Makes `call` on the route's live endpoint, once more on one provisioned again if a 404 says it was removed. */
async function onLive<R extends { status: number }>(session: DevSession, route: DevRoute, call: (ep: Endpoint) => Promise<R>): Promise<{ ep: Endpoint; r: R }> {
  const ep = await session.live.ensureWithPeers(route.endpoint.name);
  const r = await call(ep);
  const again = r.status === 404 ? await session.live.provisionedAgain(route.endpoint.name, ep) : null;
  return again ? { ep: again, r: await call(again) } : { ep, r };
}

/** Listens on `port`, or the next free one (up to 20 tries); returns the port used. */
export async function listen(server: http.Server, host: string, port: number, tries = 20): Promise<number> {
  for (let i = 0; i < tries; i++) {
    const ok = await new Promise<boolean>((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) => {
        server.off('listening', onListening);
        if (e.code === 'EADDRINUSE') resolve(false);
        else reject(listenError(e, host, port + i));
      };
      const onListening = () => {
        server.off('error', onError);
        resolve(true);
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(port + i, host);
    });
    if (ok) return (server.address() as AddressInfo).port;
  }
  throw new Error(`ports ${port} to ${port + tries - 1} are all taken on ${host}: free one or pass --port`);
}
