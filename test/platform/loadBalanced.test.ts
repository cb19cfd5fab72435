// Load-balanced endpoints over real HTTP: each has its own base URL ({base_url}/lb/<id>), declared routes
// with direct JSON bodies, responses passed through, `{error, detail}` errors, GET /ping, the key checked,
// and requests spread over the endpoint's workers.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, TEST_KEY, waitUntil, type TestPlatform } from '../helpers/platform';
import { LB_PY, queueSpec, WORKER_PY } from '../helpers/testWorkers';
import { callRoute, RouteError } from '../../engine/src/api/loadBalanced';

let tp: TestPlatform;
let lb: string;
let lbId: string;
let cold: string;
let queueUrl: string;
let broken: string;

const routes = {
  'POST /process': 'process',
  'GET /health': 'health',
  'GET /items/{item_id}': 'item',
  'POST /boom': 'boom',
  'GET /slow': 'slow',
};

before(async () => {
  tp = await startTestPlatform();
  const brokenPy = 'import not_a_module_anywhere\n\n\ndef health():\n    return {"status": "ok"}\n';
  const art = await buildTestArtifact({ 'lb_worker.py': LB_PY, 'worker.py': WORKER_PY, 'broken_lb.py': brokenPy }, [
    { name: 'api', file: 'lb_worker.py', fn: 'process', routes, workers: [2, 2] },
    { name: 'cold-api', file: 'lb_worker.py', fn: 'process', routes: { 'GET /health': 'health' }, workers: [0, 1] },
    queueSpec('echo', 'echo'),
    { name: 'broken-api', file: 'broken_lb.py', fn: 'health', routes: { 'GET /health': 'health' }, workers: [0, 1] },
  ]);
  const eps = await deploy(tp.cp, art);
  lb = eps.api.url;
  lbId = eps.api.id;
  cold = eps['cold-api'].url;
  queueUrl = eps.echo.url;
  broken = eps['broken-api'].url;
});
after(() => tp?.close());

test('a load-balanced endpoint has its own base URL under /lb/<id>', () => {
  assert.equal(lb, `${tp.url}/lb/${lbId}`);
});

test('POST routes take the direct JSON body (no input wrapper) and answer the function result', async () => {
  const r = await call('POST', `${lb}/process`, { body: { text: 'ab', times: 2 } });
  assert.equal(r.status, 200);
  assert.equal((r.json as { result: string }).result, 'abab');
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
});

test('GET routes take path and query parameters', async () => {
  const r = await call('GET', `${lb}/items/42?q=x`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { item_id: '42', q: 'x' });
});

test('errors are {error, detail}: unknown route 404, wrong method 405, handler exception 500', async () => {
  const nf = await call('GET', `${lb}/nope`);
  assert.equal(nf.status, 404);
  assert.deepEqual(Object.keys(nf.json as object).sort(), ['detail', 'error']);
  const wm = await call('GET', `${lb}/process`);
  assert.equal(wm.status, 405);
  assert.deepEqual(Object.keys(wm.json as object).sort(), ['detail', 'error']);
  const ex = await call('POST', `${lb}/boom`, { body: {} });
  assert.equal(ex.status, 500);
  assert.match((ex.json as { detail: string }).detail, /kaboom/);
  assert.doesNotMatch((ex.json as { detail: string }).detail, /Traceback/);
});

test('GET /ping answers {"status": "healthy"}', async () => {
  const r = await call('GET', `${lb}/ping`);
  assert.equal(r.status, 200);
  assert.deepEqual(r.json, { status: 'healthy' });
});

test('the key is required (Bearer or bare); a missing one is 401 {error, detail}', async () => {
  const r = await call('GET', `${lb}/health`, { key: null });
  assert.equal(r.status, 401);
  assert.deepEqual(Object.keys(r.json as object).sort(), ['detail', 'error']);
  assert.equal((await call('GET', `${lb}/health`, { auth: TEST_KEY })).status, 200);
});

test('unknown endpoints and the wrong API kind are 404', async () => {
  assert.equal((await call('GET', `${tp.url}/lb/nosuch/health`)).status, 404);
  const q = queueUrl.replace('/v2/', '/lb/');
  assert.equal((await call('GET', `${q}/health`)).status, 404);
  assert.equal((await call('POST', `${tp.url}/v2/${lbId}/run`, { body: { input: {} } })).status, 404);
});

test('requests are spread over the endpoint workers', async () => {
  // Both minimum workers must be up first: on a loaded machine the second may still be importing.
  await waitUntil(
    'both workers ready',
    async () => {
      const h = await tp.cp.endpointHealth(lbId);
      return h !== null && h.idle + h.running >= 2;
    },
    30_000,
  );
  const pids = new Set<number>();
  const answers = await Promise.all(Array.from({ length: 8 }, () => call('GET', `${lb}/slow?seconds=0.3`)));
  for (const a of answers) {
    assert.equal(a.status, 200);
    pids.add((a.json as { pid: number }).pid);
  }
  assert.equal(pids.size, 2);
});

test('a scaled-to-zero endpoint starts a worker for the first request', async () => {
  const r = await call('GET', `${cold}/health`, { timeoutMs: 30_000 });
  assert.equal(r.status, 200);
  assert.equal((r.json as { status: string }).status, 'ok');
});

test("a route whose worker cannot start answers 503 with the start's error once starts failed, as queued jobs fail: no wait for the cold-start bound", async () => {
  // The cold-start bound is 120 s; the client gives up at 60: before, the request waited out the bound.
  const r = await call('GET', `${broken}/health`, { timeoutMs: 60_000 });
  assert.equal(r.status, 503, r.text);
  assert.equal((r.json as { error: string }).error, 'no worker available');
  assert.match((r.json as { detail: string }).detail, /failed to start.*ModuleNotFoundError: No module named 'not_a_module_anywhere'/s);
});

test('the typed client calls routes and raises RouteError with error and detail', async () => {
  const target = { baseUrl: tp.url, apiKey: TEST_KEY };
  const out = await callRoute<{ result: string }>(target, lbId, 'POST', '/process', { text: 'z', times: 3 });
  assert.equal(out.result, 'zzz');
  await assert.rejects(callRoute(target, lbId, 'POST', '/boom', {}), (e: unknown) => e instanceof RouteError && e.status === 500 && /kaboom/.test(e.detail));
});
