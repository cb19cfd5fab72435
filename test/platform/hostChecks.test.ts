// What an endpoint needs of the platform's host beyond CPUs and GPUs, with real workers: a GPU driver below
// min_cuda_version keeps GPU workers from starting (the health says why; jobs wait), and system_dependencies
// that the host lacks are named in the endpoint's notes and health (nothing is installed). The GPUs and the
// driver's CUDA version are given the way an operator overrides detection: STRATO_GPUS, STRATO_CUDA_VERSION.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';
import { tooFewGpus } from '../../engine/src/platform/workers/gpus';
import { READY_TIMEOUT_MS, waitForWorkers } from '../../engine/src/deploy/deploy';

let tp: TestPlatform;
before(async () => {
  process.env.STRATO_GPUS = 'NVIDIA H100 80GB HBM3';
  process.env.STRATO_CUDA_VERSION = '12.4';
  tp = await startTestPlatform();
});
after(() => tp?.close());

test('GPU workers do not start on a driver below min_cuda_version; at or above it they do', async () => {
  const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
    queueSpec('needs128', 'env_info', { gpu: 'any', resource: { min_cuda_version: '12.8' } }),
    queueSpec('needs124', 'env_info', { gpu: 'any', resource: { min_cuda_version: '12.4' } }),
  ]);
  const eps = await deploy(tp.cp, art);
  const ok = await call('POST', `${eps.needs124.url}/runsync?wait=30000`, { body: { input: {} } });
  assert.equal((ok.json as { status: string }).status, 'COMPLETED', ok.text);
  assert.equal((ok.json as { output: { cuda: string } }).output.cuda, '0', 'the worker holds the GPU');

  const queued = await call('POST', `${eps.needs128.url}/run`, { body: { input: {} } });
  const id = (queued.json as { id: string }).id;
  await new Promise((r) => setTimeout(r, 1500));
  const h = (await tp.cp.endpointHealth(eps.needs128.id))!;
  assert.equal(h.idle + h.running + h.initializing, 0, 'no worker started');
  assert.match(h.hardwareNote ?? '', /needs CUDA 12\.8 \(min_cuda_version\) and this machine's GPU driver supports CUDA 12\.4/);
  assert.equal(((await call('GET', `${eps.needs128.url}/status/${id}`)).json as { status: string }).status, 'IN_QUEUE', 'the job waits');
  assert.deepEqual(eps.needs128.notes.length, 1);
  assert.match(h.blocked ?? '', /needs CUDA 12\.8/, 'blocked as long as the driver stays as it is');
  assert.equal((await tp.cp.endpointHealth(eps.needs124.id))?.blocked, null);
});

test('deploy --wait (and the extension after a deploy) reports workers that cannot start while the hosts stay as they are, without waiting its 20 s', async () => {
  const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
    queueSpec('pair', 'env_info', { gpu: 'any', workers: [1, 1], resource: { gpu_count: 2, min_cuda_version: '12.4' } }),
    queueSpec('cpu', 'noop', { workers: [1, 1] }),
  ]);
  const eps = await deploy(tp.cp, art);
  const started = Date.now();
  const r = await waitForWorkers({ baseUrl: tp.url, apiKey: tp.key }, [eps.pair, eps.cpu]);
  assert.ok(Date.now() - started < READY_TIMEOUT_MS / 2, `answered in ${Date.now() - started} ms`);
  assert.deepEqual(r, {
    problems: [{ endpoint: 'pair', error: 'the endpoint asks for 2 GPUs per worker (gpu_count) and this machine has 1: its workers cannot start here' }],
    starting: [],
  });
});

test('system_dependencies missing on the host are named, installed ones are not; nothing is installed', async () => {
  const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
    queueSpec('media', 'noop', { resource: { system_dependencies: ['bash', 'strato-no-such-package-xyz'] } }),
    queueSpec('plain', 'noop', { resource: { system_dependencies: ['bash'] } }),
  ]);
  const eps = await deploy(tp.cp, art);
  assert.equal(eps.media.notes.length, 1, eps.media.notes.join('\n'));
  assert.match(eps.media.notes[0], /system_dependencies strato-no-such-package-xyz is not installed on the platform's host/);
  assert.doesNotMatch(eps.media.notes[0], /\bbash\b/);
  assert.deepEqual(eps.plain.notes, []);
  // The endpoint still runs (the package may not matter for every call), and its health says the same.
  const r = await call('POST', `${eps.media.url}/runsync?wait=30000`, { body: { input: {} } });
  assert.equal((r.json as { status: string }).status, 'COMPLETED');
  const h = await waitUntil('the health note', async () => (await tp.cp.endpointHealth(eps.media.id))?.hardwareNote);
  assert.match(h, /strato-no-such-package-xyz/);
});

test('gpu_count is compared with the GPUs of the kind the endpoint asks for, not with all of the machine (deploy notes and health say the same)', () => {
  const inv = { count: 2, names: ['NVIDIA L4', 'NVIDIA RTX A4000'] };
  assert.equal(
    tooFewGpus(inv, { count: 2, gpuIds: 'NVIDIA L4' }),
    'the endpoint asks for 2 GPUs per worker (gpu_count) and this machine has 1 NVIDIA L4: its workers cannot start here',
  );
  assert.equal(tooFewGpus(inv, { count: 1, gpuIds: 'NVIDIA L4' }), null);
  assert.equal(tooFewGpus(inv, { count: 2, gpuIds: undefined }), null, 'any GPU: both count');
  assert.match(tooFewGpus(inv, { count: 3, gpuIds: undefined }) ?? '', /asks for 3 GPUs per worker \(gpu_count\) and this machine has 2: /);
  assert.equal(tooFewGpus({ count: 0, names: [] }, { count: 4, gpuIds: undefined }), null, 'no GPUs: its workers run on the CPU (another note)');
});
