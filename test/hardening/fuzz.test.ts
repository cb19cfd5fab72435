// Issue #16: a bounded fuzz of the platform on 127.0.0.1. 10,000 requests across every route, with and without
// keys, malformed paths (%-escapes, traversal, long and non-ASCII segments), bodies and encodings: none may get a
// 5xx or hang. A stalled body is given up instead of being held. Figures are printed; only behaviour is asserted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../engine/src/platform/http';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, type TestPlatform } from '../helpers/platform';
import { LB_PY, queueSpec, WORKER_PY } from '../helpers/testWorkers';

const REQUESTS = 10_000;
const CONCURRENCY = 16;
const HANG_MS = 15_000;

let tp: TestPlatform;
let queueId = '';
let lbId = '';

before(async () => {
  tp = await startTestPlatform();
  const art = await buildTestArtifact({ 'lb_worker.py': LB_PY, 'worker.py': WORKER_PY }, [
    { name: 'api', file: 'lb_worker.py', fn: 'process', routes: { 'POST /process': 'process', 'GET /items/{item_id}': 'item' }, workers: [1, 1] },
    queueSpec('echo', 'echo', { workers: [1, 1] }),
  ]);
  const eps = await deploy(tp.cp, art);
  queueId = eps.echo.id;
  lbId = eps.api.id;
});
after(() => tp?.close());

/** A small deterministic generator, so that a failing request can be replayed from its index. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Req {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

function request(i: number): Req {
  const r = rng(i + 1);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const ids = [queueId, lbId, 'nope', '%ZZ', '%E0%A4%A', '..%2F..', 'x'.repeat(300), '%00', 'é', ''];
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
  const auth = pick([undefined, `Bearer ${tp.key}`, tp.key, 'Bearer wrong', 'Bearer ', 'Basic eDp5', `Bearer ${tp.key}\u00e9`]);
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

/** Why requests ended without an answer (the client's side of a connection the server closed), by error code. */
const socketErrors = new Map<string, number>();

function send(agent: http.Agent, base: URL, q: Req): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request({ host: base.hostname, port: base.port, method: q.method, path: q.path, headers: q.headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(-1));
    });
    req.setTimeout(HANG_MS, () => {
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

test(`${REQUESTS} fuzzed requests across every route: no 5xx, no hang`, async () => {
  const base = new URL(tp.url);
  const agent = new http.Agent({ keepAlive: false, maxSockets: CONCURRENCY });
  const heapBefore = process.memoryUsage().heapUsed;
  const started = Date.now();
  const statuses = new Map<number, number>();
  const bad: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        const q = request(i);
        const status = await send(agent, base, q);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status >= 500 || status === -2) bad.push(`#${i} ${q.method} ${q.path} -> ${status === -2 ? 'no answer' : status}`);
      }
    }),
  );
  agent.destroy();
  const heapAfter = process.memoryUsage().heapUsed;
  const summary = [...statuses]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s}: ${n}`)
    .join(', ');
  console.log(
    `fuzz: ${REQUESTS} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${summary}; ` +
      `heap ${(heapBefore / 1048576).toFixed(0)} -> ${(heapAfter / 1048576).toFixed(0)} MB (platform in this process); ` +
      `connections closed before an answer: ${JSON.stringify(Object.fromEntries(socketErrors))}`,
  );
  assert.deepEqual(bad.slice(0, 20), [], `${bad.length} requests got a 5xx or no answer`);
  const fiveXX = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
  assert.equal(fiveXX, 0);
  // Every kind of answer the fuzz aims at was seen: accepted, refused for bad input, for the key, and unknown.
  for (const s of [200, 400, 401, 404]) assert.ok(statuses.get(s), `no ${s} among ${summary}`);
  const logged500 = tp.logs.filter((l) => / failed: /.test(l));
  assert.deepEqual(logged500.slice(0, 5), [], 'no request was logged as a platform failure');
});

test('one GraphQL operation of 20,000 aliases or deep nesting is refused before it runs', async () => {
  const post = (query: string) => call('POST', `${tp.url}/graphql`, { body: { query } });
  const aliases = `{ ${Array.from({ length: 20_000 }, (_, k) => `a${k}: apps { id }`).join(' ')} }`;
  const started = Date.now();
  const wide = await post(aliases);
  const ms = Date.now() - started;
  assert.equal(wide.status, 200);
  const errors = (wide.json as { errors: Array<{ message: string; extensions: { code: string } }> }).errors;
  assert.match(errors[0].message, /more th[ae][nt]/);
  assert.equal(errors[0].extensions.code, 'BAD_REQUEST');
  const deep = await post(`{ ${'apps { environments { '.repeat(8)}id${' } }'.repeat(8)} }`);
  assert.match(JSON.stringify(deep.json), /nests more than 12 levels/);
  const ok = await post('{ apps { id name } }');
  assert.ok((ok.json as { data: { apps: unknown[] } }).data.apps.length >= 1);
  console.log(`a 20,000-alias operation was refused in ${ms} ms`);
});

test('a body that stalls is given up, so unfinished requests do not pile up', async () => {
  const server = http.createServer((req, res) => {
    readBody(req, 1024 * 1024, 'a test body', 300).then(
      () => res.end('read'),
      (e: Error) => {
        if (!res.destroyed) res.end(e.message);
      },
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const closed = await Promise.all(
    Array.from({ length: 20 }, () => {
      return new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => s.write('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n'));
        const t = setTimeout(() => {
          s.destroy();
          resolve(false);
        }, 5000);
        s.on('close', () => {
          clearTimeout(t);
          resolve(true);
        });
        s.on('error', () => undefined);
      });
    }),
  );
  server.close();
  assert.equal(closed.filter(Boolean).length, 20, 'every stalled request was closed by the server');
});
