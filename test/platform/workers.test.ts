// Worker processes under the scheduler: workers.min always up, more started while jobs wait (never above
// workers.max), idle ones above the minimum stopped after idle_timeout, max_concurrency jobs at once in one
// worker, and a clear error when workers cannot start.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';
import { BROKEN_PY, queueSpec, WORKER_PY } from '../helpers/testWorkers';

const ENVDUMP_PY = 'import os\n\ndef handler(**kw):\n    return dict(os.environ)\n';

let tp: TestPlatform;
let eps: Record<string, { url: string; id: string }>;

type Health = { jobs: Record<string, number>; workers: { idle: number; running: number; initializing: number } };
const health = async (u: string) => (await call('GET', `${u}/health`)).json as Health;
const total = (h: Health) => h.workers.idle + h.workers.running + h.workers.initializing;

before(async () => {
  process.env.STRATO_GPUS = ''; // this machine has no GPU, whatever nvidia-smi says
  tp = await startTestPlatform();
  const art = await buildTestArtifact({ 'worker.py': WORKER_PY, 'broken.py': BROKEN_PY, 'envdump.py': ENVDUMP_PY }, [
    queueSpec('warm', 'noop', { workers: [1, 1] }),
    queueSpec('elastic', 'sleep', { workers: [0, 3], idleTimeout: 1 }),
    queueSpec('concurrent', 'sleep', { workers: [0, 1], maxConcurrency: 4 }),
    queueSpec('aconcurrent', 'asleep', { workers: [0, 1], maxConcurrency: 8, isAsync: true }),
    { name: 'broken', file: 'broken.py', fn: 'handler', workers: [0, 1] },
    queueSpec('gpu', 'env_info', { gpu: 'ADA_24' }),
    queueSpec('cpu-env', 'env_info', { workers: [0, 1] }),
    { name: 'envdump', file: 'envdump.py', fn: 'handler', workers: [0, 1], env: { MY_VAR: 'from-endpoint' } },
  ]);
  eps = await deploy(tp.cp, art);
});
after(() => tp?.close());

test('workers.min are always up, idle between jobs', async () => {
  const h = await waitUntil('the warm worker', async () => ((await health(eps.warm.url)).workers.idle === 1 ? health(eps.warm.url) : null));
  assert.equal(total(h), 1);
});

test('workers are started while jobs wait, up to workers.max, and stop after idle_timeout', async () => {
  const u = eps.elastic.url;
  assert.equal(total(await health(u)), 0);
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push(((await call('POST', `${u}/run`, { body: { input: { seconds: 1 } } })).json as { id: string }).id);
  let peak = 0;
  const pids = new Set<number>();
  await waitUntil(
    'all jobs to finish',
    async () => {
      const h = await health(u);
      peak = Math.max(peak, total(h));
      assert.ok(total(h) <= 3, `more than workers.max: ${JSON.stringify(h.workers)}`);
      return h.jobs.completed === 6;
    },
    30_000,
  );
  for (const id of ids) pids.add(((await call('GET', `${u}/status/${id}`)).json as { output: { pid: number } }).output.pid);
  assert.equal(peak, 3);
  assert.ok(pids.size >= 2, `the jobs ran in ${pids.size} worker(s)`);
  // idle_timeout = 1 s: with workers.min = 0 every worker stops.
  await waitUntil('idle workers to stop', async () => total(await health(u)) === 0, 10_000);
});

test('max_concurrency jobs run at once in one worker (sync and async handlers)', async () => {
  for (const [name, n] of [
    ['concurrent', 4],
    ['aconcurrent', 8],
  ] as const) {
    const u = eps[name].url;
    const answers = await Promise.all(Array.from({ length: n }, () => call('POST', `${u}/runsync`, { body: { input: { seconds: 1 } } })));
    const jobs = answers.map((a) => a.json as { status: string; output: { start: number; end: number } });
    for (const j of jobs) assert.equal(j.status, 'COMPLETED');
    // All n ran at once: some instant lies inside every job's run (the handler's own clock, so load does not matter).
    const lastStart = Math.max(...jobs.map((j) => j.output.start));
    const firstEnd = Math.min(...jobs.map((j) => j.output.end));
    assert.ok(lastStart < firstEnd, `${name}: the ${n} jobs did not run at once: ${JSON.stringify(jobs.map((j) => j.output))}`);
    const h = await health(u);
    assert.equal(total(h), 1);
  }
});

test('a worker that cannot start fails the queued jobs saying so and where its error output is; deploy keys read that output in health, invoke keys do not', async () => {
  const u = eps.broken.url;
  const { id } = (await call('POST', `${u}/run`, { body: { input: {} } })).json as { id: string };
  const job = await waitUntil(
    'the job to fail',
    async () => {
      const j = (await call('GET', `${u}/status/${id}`)).json as { status: string; error?: string };
      return j.status === 'FAILED' ? j : null;
    },
    30_000,
  );
  // Every caller of the endpoint reads its jobs: the worker's own output (which may quote a secret) is not in them.
  assert.match(
    job.error ?? '',
    /^the endpoint's worker failed to start: worker \S+ exited with code 1; its error output is in the endpoint's logs \(strato logs broken\); fix the endpoint and deploy it again \(under strato dev: save the fix\), then retry the job$/,
  );
  const h = await tp.cp.endpointHealth(eps.broken.id);
  assert.match(h?.lastError ?? '', /^the endpoint's worker failed to start: worker \S+ exited with code 1; its last error output: .*not_a_module_that_exists/);
  const invoker = new ControlPlaneClient({ baseUrl: tp.url, apiKey: (await tp.cp.createKey('caller', 'invoke')).secret });
  const seen = await invoker.endpointHealth(eps.broken.id);
  assert.match(
    seen?.lastError ?? '',
    /^the endpoint's worker failed to start: worker \S+ exited with code 1; its error output is in the endpoint's logs \(strato logs broken\)$/,
  );
});

test('a GPU endpoint runs without a GPU, and its health says the hardware is absent', async () => {
  const r = (await call('POST', `${eps.gpu.url}/runsync`, { body: { input: {} } })).json as { status: string; output: { cuda: string } };
  assert.equal(r.status, 'COMPLETED');
  assert.equal(r.output.cuda, '');
  const h = await tp.cp.endpointHealth(eps.gpu.id);
  assert.match(h?.hardwareNote ?? '', /asks for a GPU \(ADA_24\) but this machine has none/);
  assert.equal((await tp.cp.endpointHealth(eps.warm.id))?.hardwareNote, null);
  // A CPU endpoint is told so on a machine without GPUs too, whatever the platform's own environment says.
  const cpu = (await call('POST', `${eps['cpu-env'].url}/runsync`, { body: { input: {} } })).json as { output: { cuda: string | null } };
  assert.equal(cpu.output.cuda, '');
});

test("workers get the allow-list, the endpoint env and the STRATO_* variables, not the operator's other variables", async () => {
  process.env.OPERATOR_SECRET_TOKEN = 'do-not-leak';
  process.env.AWS_SECRET_ACCESS_KEY = 'do-not-leak';
  process.env.STRATO_WORKER_PASS_ENV = 'PASSED_ON_PURPOSE';
  process.env.PASSED_ON_PURPOSE = 'yes';
  try {
    const r = (await call('POST', `${eps.envdump.url}/runsync`, { body: { input: {} } })).json as { status: string; output: Record<string, string> };
    assert.equal(r.status, 'COMPLETED', JSON.stringify(r));
    const env = r.output;
    assert.equal(env.OPERATOR_SECRET_TOKEN, undefined);
    assert.equal(env.AWS_SECRET_ACCESS_KEY, undefined);
    assert.equal(env.PASSED_ON_PURPOSE, 'yes');
    assert.equal(env.MY_VAR, 'from-endpoint');
    assert.ok(env.PATH.endsWith(process.env.PATH!), env.PATH); // a pyenv shim may prepend its folders
    assert.equal(env.STRATO_ENDPOINT_NAME, 'envdump');
    assert.ok(env.STRATO_WORKER_TOKEN);
    const allowed =
      /^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|TZ|TMPDIR|TEMP|TMP|TERM|LD_LIBRARY_PATH|SSL_CERT_FILE|SSL_CERT_DIR|LC_.*|STRATO_.*|PYTHON.*|CUDA_VISIBLE_DEVICES|MY_VAR|PASSED_ON_PURPOSE)$/;
    const allowedByPython = /^(LC_CTYPE|_?PYENV_.*|PWD|SHLVL|_)$/; // Python (PEP 538) or a pyenv shell shim may set these itself
    assert.deepEqual(
      Object.keys(env).filter((k) => !allowed.test(k) && !allowedByPython.test(k)),
      [],
    );
  } finally {
    for (const k of ['OPERATOR_SECRET_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'STRATO_WORKER_PASS_ENV', 'PASSED_ON_PURPOSE']) delete process.env[k];
  }
});
