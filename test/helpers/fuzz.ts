// The bounded fuzz of a platform's HTTP surface, shared by test/hardening/fuzz.test.ts and bench/fuzz.ts: the two
// endpoints it aims at, a deterministic request generator (request i is always the same, so a failure can be
// replayed from its index), and the run itself with what it saw (statuses, 5xx or unanswered requests).
import http from 'node:http';
import type { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { buildTestArtifact } from './artifact';
import { deploy } from './platform';
import { LB_PY, queueSpec, WORKER_PY } from './testWorkers';

/** What the requests aim at: a queue endpoint, a load-balanced one, and the key that opens both. */
export interface FuzzTargets {
  queueId: string;
  lbId: string;
  key: string;
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface FuzzOptions {
  requests: number;
  concurrency: number;
  /** A request with no answer after this long counts as a hang. */
  hangMs: number;
}

export interface FuzzOutcome {
  /** HTTP status -> count; -1: the connection was closed before an answer, -2: no answer within hangMs. */
  statuses: Map<number, number>;
  /** The requests that got a 5xx or no answer, replayable by index. */
  bad: string[];
  fiveXX: number;
  hangs: number;
  /** Why connections closed before an answer (the client's side), by error code. */
  socketErrors: Map<string, number>;
  ms: number;
}

/** Deploys the fuzz's two endpoints (a queue `echo`, a load-balanced `api`) with one worker each. */
export async function deployFuzzTargets(cp: ControlPlaneClient, key: string): Promise<FuzzTargets> {
  const art = await buildTestArtifact({ 'lb_worker.py': LB_PY, 'worker.py': WORKER_PY }, [
    { name: 'api', file: 'lb_worker.py', fn: 'process', routes: { 'POST /process': 'process', 'GET /items/{item_id}': 'item' }, workers: [1, 1] },
    queueSpec('echo', 'echo', { workers: [1, 1] }),
  ]);
  const eps = await deploy(cp, art);
  return { queueId: eps.echo.id, lbId: eps.api.id, key };
}

/** A small deterministic generator. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Request `i` of the fuzz: every route, with and without keys, malformed paths, bodies and encodings. */
export function fuzzRequest(i: number, t: FuzzTargets): FuzzRequest {
  const r = rng(i + 1);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const ids = [t.queueId, t.lbId, 'nope', '%ZZ', '%E0%A4%A', '..%2F..', 'x'.repeat(300), '%00', 'é', ''];
  const id = pick(ids);
  const job = pick(['00000000-0000-4000-8000-000000000000-u1', '%ZZ', 'x', '']);
  const path = pick([
    `/v2/${id}/run`,
    `/v2/${id}/runsync?wait=${pick(['1000', '0', 'x', '99999999', '%ZZ'])}`,
    `/v2/${id}/status/${job}?ttl=${pick(['1', '-5', 'x'])}`,
    `/v2/${id}/stream/${job}`,
    `/v2/${id}/cancel/${job}`,
    `/v2/${id}/retry/${job}`,
    `/v2/${id}/purge-queue`,
    `/v2/${id}/health`,
    `/v2/${id}/${pick(['', 'nope', '%ZZ'])}`,
    `/lb/${id}/process`,
    `/lb/${id}/items/${pick(['1', '%ZZ', '%2F'])}`,
    `/lb/${id}/${pick(['ping', '%ZZ', 'x/y/z'])}`,
    `/_worker/${id}/${pick(['take', 'done', 'stream', 'heartbeat', 'ready', 'x', '%ZZ'])}`,
    `/graphql${pick(['', '?x=%ZZ'])}`,
    `/_uploads/${pick(['x', '%ZZ', ''])}`,
    pick(['/', '/healthz', '/%ZZ', '//', '/v2', '/v2/', '/lb/', '/_worker/']),
  ]);
  const auth = pick([undefined, `Bearer ${t.key}`, t.key, 'Bearer wrong', 'Bearer ', 'Basic eDp5', `Bearer ${t.key}\u00e9`]);
  const graphqlBodies = [
    '{"query":"{ apps { id name } }"}',
    '{"query":"{ apps { id "}',
    `{"query":"{ ${Array.from({ length: 50 }, (_, k) => `a${k}: apps { id }`).join(' ')} }"}`,
    '{"query":"query($x: ID!) { app(id: $x) { id } }","variables":{"x":null}}',
    '{"query":"mutation { deleteApp(id: \\"nope\\") }"}',
  ];
  const body = pick<string | Buffer | undefined>([
    undefined,
    '',
    'null',
    '[]',
    '42',
    '{}',
    '{"input":null}',
    '{"input":{"x":1}}',
    '{"input":{"text":"\\u0000\\ud800"}}',
    '{"',
    '{"workerId":"w","jobs":null}',
    '{"text":"hi"}',
    Buffer.from([0xff, 0xfe, 0x00, 0x80]),
    'x'.repeat(100_000),
    pick(graphqlBodies),
  ]);
  const headers: Record<string, string> = {};
  if (auth !== undefined) headers.authorization = auth;
  headers['content-type'] = pick(['application/json', 'text/plain', 'application/json; charset=latin1', '']);
  if (headers['content-type'] === '') delete headers['content-type'];
  if (r() < 0.05) headers['content-encoding'] = 'gzip';
  return {
    method: pick(['GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']),
    path,
    headers,
    body: body === undefined ? undefined : Buffer.from(body),
  };
}

function send(agent: http.Agent, base: URL, q: FuzzRequest, hangMs: number, socketErrors: Map<string, number>): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request({ host: base.hostname, port: base.port, method: q.method, path: q.path, headers: q.headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(-1));
    });
    req.setTimeout(hangMs, () => {
      req.destroy();
      resolve(-2);
    });
    req.on('error', (e: NodeJS.ErrnoException) => {
      socketErrors.set(e.code ?? e.message, (socketErrors.get(e.code ?? e.message) ?? 0) + 1);
      resolve(-1);
    });
    req.end(q.body);
  });
}

/** Sends requests 0..n-1 of the fuzz to `baseUrl`, `concurrency` at a time, each on its own connection. */
export async function runFuzz(baseUrl: string, t: FuzzTargets, o: FuzzOptions): Promise<FuzzOutcome> {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: false, maxSockets: o.concurrency });
  const statuses = new Map<number, number>();
  const socketErrors = new Map<string, number>();
  const bad: string[] = [];
  const started = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (next < o.requests) {
        const i = next++;
        const q = fuzzRequest(i, t);
        const status = await send(agent, base, q, o.hangMs, socketErrors);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500 || status === -2) bad.push(`#${i} ${q.method} ${q.path} -> ${status === -2 ? 'no answer' : status}`);
      }
    }),
  );
  agent.destroy();
  const fiveXX = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
  return { statuses, bad, fiveXX, hangs: statuses.get(-2) ?? 0, socketErrors, ms: Date.now() - started };
}

/** `200: 5123, 400: 2017, ...` */
export function formatStatuses(statuses: Map<number, number>): string {
  return [...statuses]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ');
}
