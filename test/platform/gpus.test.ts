// GPUs are exclusive resources (issue #11): with two GPUs (STRATO_GPUS names two fake ones), workers of GPU endpoints
// each hold their gpu_count GPUs alone; a worker that would need a held GPU does not start (its jobs wait and the
// health says why) and starts once a GPU is free; a CPU endpoint never sees a GPU; an endpoint that needs more GPUs
// than the machine has says so.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';
import { gpuModelNote } from '../../engine/src/catalog';
import { getEnvironment, workersText } from '../../engine/src/deploy/environments';

const GPU_PY = `
import os
import time


def hold(seconds=1.0):
    time.sleep(seconds)
    return {"cuda": os.environ.get("CUDA_VISIBLE_DEVICES"), "pid": os.getpid()}
`;

type Health = { jobs: Record<string, number>; workers: { idle: number; running: number; initializing: number } };
const total = (h: Health) => h.workers.idle + h.workers.running + h.workers.initializing;
let tp: TestPlatform;
let eps: Awaited<ReturnType<typeof deploy>>;

before(async () => {
  process.env.STRATO_GPUS = 'fake-a,fake-b';
  tp = await startTestPlatform();
  const scaler = { scaler_type: 'REQUEST_COUNT', scaler_value: 1 }; // one worker per job: the scheduler wants more than fit
  const art = await buildTestArtifact({ 'gpu.py': GPU_PY, 'worker.py': WORKER_PY }, [
    queueSpec('wide', 'hold', { file: 'gpu.py', gpu: 'any', workers: [0, 3], idleTimeout: 1, resource: scaler }),
    queueSpec('other', 'hold', { file: 'gpu.py', gpu: 'any', workers: [0, 1], idleTimeout: 1, resource: scaler }),
    queueSpec('cpu', 'env_info'),
    queueSpec('huge', 'hold', { file: 'gpu.py', gpu: 'any', resource: { ...scaler, gpu_count: 3 } }),
  ]);
  eps = await deploy(tp.cp, art);
});
after(() => tp?.close());

test('three workers of a one-GPU endpoint never share a GPU; another endpoint waits for one, saying why', async () => {
  const run = async (url: string, seconds: number) => ((await call('POST', `${url}/run`, { body: { input: { seconds } } })).json as { id: string }).id;
  const wide = await Promise.all([run(eps.wide.url, 3), run(eps.wide.url, 3), run(eps.wide.url, 3)]);
  const other = await run(eps.other.url, 0.2);
  let peak = 0;
  let sawWaiting = false;
  await waitUntil(
    'the wide jobs',
    async () => {
      const h = (await call('GET', `${eps.wide.url}/health`)).json as Health;
      peak = Math.max(peak, total(h));
      const note = (await tp.cp.endpointHealth(eps.other.id))?.hardwareNote ?? '';
      if (/waiting for a free GPU: all 2 GPUs are held by workers of 1 endpoint/.test(note)) sawWaiting = true;
      return h.jobs.completed === 3;
    },
    40_000,
    100,
  );
  assert.ok(peak <= 2, `two GPUs, at most two workers (saw ${peak})`);
  assert.ok(sawWaiting, "the other endpoint's health said it waits for a GPU");
  const outputs = await Promise.all(
    wide.map(async (id) => ((await call('GET', `${eps.wide.url}/status/${id}`)).json as { output: { cuda: string; pid: number } }).output),
  );
  const byWorker = new Map(outputs.map((o) => [o.pid, o.cuda]));
  assert.equal(byWorker.size, 2, 'the third job ran in one of the two workers');
  assert.deepEqual([...byWorker.values()].sort(), ['0', '1'], 'each worker holds its own GPU');
  // Once the wide workers idle out, the other endpoint gets a GPU and its job runs.
  const done = await waitUntil(
    'the other job',
    async () => {
      const s = (await call('GET', `${eps.other.url}/status/${other}`)).json as { status: string; output?: { cuda: string } };
      return s.status === 'COMPLETED' ? s : null;
    },
    30_000,
    200,
  );
  assert.match(done.output!.cuda, /^[01]$/);
});

test('a CPU endpoint never sees a GPU; an endpoint that needs more GPUs than the machine has says so', async () => {
  const r = await call('POST', `${eps.cpu.url}/runsync`, { body: { input: {} } });
  assert.equal((r.json as { output: { cuda: string | null } }).output.cuda, '');
  await call('POST', `${eps.huge.url}/run`, { body: { input: {} } });
  const note = await waitUntil('the note', async () => (await tp.cp.endpointHealth(eps.huge.id))?.hardwareNote);
  assert.match(note, /asks for 3 GPUs per worker \(gpu_count\) and this machine has 2/);
  assert.equal(total((await call('GET', `${eps.huge.url}/health`)).json as Health), 0);
  assert.deepEqual(eps.huge.notes, ['the endpoint asks for 3 GPUs per worker (gpu_count) and this machine has 2: its workers cannot start here']);
  // strato env get says it too: the workers line, and the JSON's workers.note.
  const target = { baseUrl: tp.url, apiKey: tp.key };
  const appName = (await tp.cp.listApps()).find((a) => a.id === eps.huge.appId)!.name;
  const env = await getEnvironment(target, appName, undefined);
  const huge = env.endpoints.find((e) => e.name === 'huge')!;
  assert.match(huge.workers?.note ?? '', /asks for 3 GPUs per worker \(gpu_count\) and this machine has 2/);
  assert.match(workersText(huge.workers!), /^workers 0 ready \(min 0, max \d+\); the endpoint asks for 3 GPUs per worker/);
});

test("a GPU name given for nvidia-smi's (--gpus, STRATO_GPUS) that is no catalog model gets a note saying what to write", () => {
  assert.equal(gpuModelNote('NVIDIA H100 80GB HBM3'), null);
  assert.equal(gpuModelNote('nvidia h100 80gb hbm3'), null);
  const short = gpuModelNote('H100') ?? '';
  assert.match(short, /GPU "H100" is not a model name as nvidia-smi reports it/);
  assert.match(short, /write "NVIDIA H100 80GB HBM3" or "NVIDIA H100 PCIe" or "NVIDIA H100 NVL"$/);
  assert.match(gpuModelNote('NVIDIA H10 80GB HBM3') ?? '', /write "NVIDIA H100 80GB HBM3"$/);
  assert.match(gpuModelNote('fake-a') ?? '', /it serves endpoints that take any GPU, and others only where no host has a GPU of their type/);
  // The brand without the product line is that model, not the nearest string (an RTX A4000, another generation).
  assert.match(gpuModelNote('NVIDIA RTX 4090') ?? '', /write "NVIDIA GeForce RTX 4090"$/);
});
