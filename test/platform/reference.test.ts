// The reference product's parameters doing real work on the embedded platform, with real Python workers:
// network volumes shared by every worker of every endpoint that mounts them and kept across redeploys and
// undeploys (removed only on purpose, quota reported), scaler types driving the scheduler (QUEUE_DELAY on a
// controlled clock, REQUEST_COUNT), datacenters the platform does not serve and images it cannot run refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ControlPlaneError } from '../../engine/src/api/controlPlane';
import { ManualClock } from '../../engine/src/platform/clock';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';

const VOLUME_PY = `
import os


def write(name, text):
    with open(os.path.join(os.environ["STRATO_VOLUME_PATH"], name), "w") as f:
        f.write(text)
    return {"path": os.environ["STRATO_VOLUME_PATH"], "pid": os.getpid()}


def read(name):
    with open(os.path.join(os.environ["STRATO_VOLUME_PATH_SHARED_MODELS"], name)) as f:
        return {"text": f.read(), "pid": os.getpid()}


def wipe():
    # A cache clean-up: everything in the volume goes, hidden files too.
    root = os.environ["STRATO_VOLUME_PATH"]
    for name in os.listdir(root):
        os.remove(os.path.join(root, name))
    return {"left": os.listdir(root)}


def grow(gb):
    # A sparse file: its size counts against the quota without using the disk.
    with open(os.path.join(os.environ["STRATO_VOLUME_PATH"], "big.bin"), "wb") as f:
        f.truncate(int(gb * 1024 ** 3))
    return {"ok": True}
`;

const SHARED = [{ name: 'shared-models', size: 10, datacenter: 'EU-RO-1' }];
type Health = { jobs: Record<string, number>; workers: { idle: number; running: number; initializing: number } };
const total = (h: Health) => h.workers.idle + h.workers.running + h.workers.initializing;
const health = async (u: string) => (await call('GET', `${u}/health`)).json as Health;
const runsync = async (url: string, input: unknown) => {
  const r = await call('POST', `${url}/runsync?wait=30000`, { body: { input } });
  assert.equal(r.status, 200, r.text);
  const job = r.json as { status: string; output: Record<string, unknown>; error?: string };
  assert.equal(job.status, 'COMPLETED', job.error);
  return job.output;
};

describe('network volumes', () => {
  let tp: TestPlatform;
  before(async () => {
    tp = await startTestPlatform();
  });
  after(() => tp?.close());

  test('every worker of every endpoint that mounts a volume sees the same files, across a redeploy and an undeploy', async () => {
    const specs = [
      queueSpec('writer', 'write', { file: 'volume.py', resource: { volumes: SHARED } }),
      queueSpec('reader', 'read', { file: 'volume.py', resource: { volumes: SHARED } }),
    ];
    const art = await buildTestArtifact({ 'volume.py': VOLUME_PY }, specs);
    const eps = await deploy(tp.cp, art, { app: 'volapp' });
    assert.deepEqual(eps.writer.volumes, [{ name: 'shared-models', datacenter: 'EU-RO-1', sizeGb: 10 }]);
    const written = await runsync(eps.writer.url, { name: 'weights.txt', text: 'v1' });
    assert.equal((await runsync(eps.reader.url, { name: 'weights.txt' })).text, 'v1', 'the other endpoint reads what the first wrote');
    assert.notEqual((await runsync(eps.reader.url, { name: 'weights.txt' })).pid, written.pid);

    // A new build of the app: same volume, same files.
    const again = await deploy(tp.cp, await buildTestArtifact({ 'volume.py': VOLUME_PY + '\n# v2\n' }, specs), { app: 'volapp' });
    assert.equal(again.reader.id, eps.reader.id);
    assert.equal((await runsync(again.reader.url, { name: 'weights.txt' })).text, 'v1', 'kept across a redeploy');

    const app = (await tp.cp.findApp('volapp'))!;
    const [listed] = await tp.cp.listVolumes(app.id);
    assert.deepEqual([listed.name, listed.datacenter, listed.sizeGb, [...listed.endpoints].sort()], ['shared-models', 'EU-RO-1', 10, ['reader', 'writer']]);

    // Deleting a mounted volume is refused with the endpoints that mount it.
    await assert.rejects(
      tp.cp.deleteVolume(app.id, 'shared-models'),
      (e: ControlPlaneError) => e.code === 'CONFLICT' && /mounted by reader, writer/.test(e.message),
    );
    // Undeploy: the endpoints go, the volume and its files stay.
    for (const e of Object.values(again)) await tp.cp.deleteEndpoint(e.id);
    const kept = await tp.cp.listVolumes(app.id);
    assert.deepEqual(
      kept.map((v) => [v.name, v.endpoints]),
      [['shared-models', []]],
    );
    const folder = path.join(tp.dataDir, 'volumes', app.id, 'EU-RO-1', 'shared-models');
    assert.equal(fs.readFileSync(path.join(folder, 'weights.txt'), 'utf8'), 'v1');
    // Removed only on purpose.
    await tp.cp.deleteVolume(app.id, 'shared-models');
    assert.deepEqual(await tp.cp.listVolumes(app.id), []);
    assert.equal(fs.existsSync(folder), false);
    await assert.rejects(tp.cp.deleteVolume(app.id, 'shared-models'), (e: ControlPlaneError) => e.code === 'NOT_FOUND');
  });

  test("the volume is the code's alone: it sees only its own files, and emptying it loses nothing of the volume", async () => {
    const specs = [
      queueSpec('writer', 'write', { file: 'volume.py', resource: { volumes: SHARED } }),
      queueSpec('wiper', 'wipe', { file: 'volume.py', resource: { volumes: SHARED } }),
    ];
    const eps = await deploy(tp.cp, await buildTestArtifact({ 'volume.py': VOLUME_PY }, specs), { app: 'wipeapp' });
    await runsync(eps.writer.url, { name: 'cache.bin', text: 'x' });
    assert.deepEqual((await runsync(eps.wiper.url, {})).left, [], 'only the file it wrote was there, and it is gone');
    const app = (await tp.cp.findApp('wipeapp'))!;
    assert.deepEqual(
      (await tp.cp.listVolumes(app.id)).map((v) => [v.name, v.sizeGb, [...v.endpoints].sort()]),
      [['shared-models', 10, ['wiper', 'writer']]],
    );
    for (const e of Object.values(eps)) await tp.cp.deleteEndpoint(e.id);
    await tp.cp.deleteVolume(app.id, 'shared-models');
    assert.deepEqual(await tp.cp.listVolumes(app.id), []);
  });

  test('a volume recorded inside its folder by an earlier release is found, and its record moves out of the folder', async () => {
    const app = await tp.cp.createApp('legacyapp');
    const folder = path.join(tp.dataDir, 'volumes', app.id, 'EU-RO-1', 'old-cache');
    fs.mkdirSync(folder, { recursive: true });
    const record = { appId: app.id, name: 'old-cache', datacenter: 'EU-RO-1', sizeGb: 20, createdAt: 1 };
    fs.writeFileSync(path.join(folder, '.strato-volume.json'), JSON.stringify(record));
    fs.writeFileSync(path.join(folder, 'weights.bin'), 'w');
    const [found] = await tp.cp.listVolumes(app.id);
    assert.deepEqual([found?.name, found?.sizeGb], ['old-cache', 20]);
    assert.deepEqual(fs.readdirSync(folder), ['weights.bin'], "the folder holds the user's files only");
  });

  test("a volume over its size is reported in the endpoint's health", async () => {
    const art = await buildTestArtifact({ 'volume.py': VOLUME_PY }, [queueSpec('filler', 'grow', { file: 'volume.py', resource: { volumes: SHARED } })]);
    const eps = await deploy(tp.cp, art, { app: 'quotaapp' });
    await runsync(eps.filler.url, { gb: 11 });
    const note = await waitUntil(
      'the quota note',
      async () => (await tp.cp.endpointHealth(eps.filler.id))?.hardwareNote?.match(/volume "shared-models" \(EU-RO-1\) holds 11\.0 GB, over its 10 GB size/),
      40_000,
      250,
    );
    assert.ok(note);
  });
});

describe('scalers', () => {
  let tp: TestPlatform;
  const clock = new ManualClock();
  before(async () => {
    tp = await startTestPlatform({ clock });
  });
  after(() => tp?.close());

  test('QUEUE_DELAY adds a worker only when the oldest queued job has waited more than scaler_value seconds', async () => {
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
      queueSpec('delayed', 'sleep', { workers: [0, 3], resource: { scaler_type: 'QUEUE_DELAY', scaler_value: 4 } }),
    ]);
    const u = (await deploy(tp.cp, art)).delayed.url;
    for (let i = 0; i < 4; i++) assert.equal((await call('POST', `${u}/run`, { body: { input: { seconds: 6 } } })).status, 200);
    // Cold: the first worker starts at once.
    await waitUntil('the first worker', async () => total(await health(u)) === 1);
    await new Promise((r) => setTimeout(r, 1200)); // several scheduler ticks on a clock that does not move
    assert.equal(total(await health(u)), 1, 'no second worker before the queue delay passes');
    clock.advance(4500);
    await waitUntil('a second worker', async () => total(await health(u)) === 2, 5000);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(total(await health(u)), 2, 'at most one worker per scaler_value seconds');
    clock.advance(4500);
    await waitUntil('a third worker', async () => total(await health(u)) === 3, 5000);
    clock.advance(4500);
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(total(await health(u)), 3, 'never above workers.max');
  });

  test('REQUEST_COUNT keeps one worker per scaler_value requests', async () => {
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
      queueSpec('counted', 'sleep', { workers: [0, 5], resource: { scaler_type: 'REQUEST_COUNT', scaler_value: 2 } }),
    ]);
    const u = (await deploy(tp.cp, art)).counted.url;
    for (let i = 0; i < 6; i++) await call('POST', `${u}/run`, { body: { input: { seconds: 3 } } });
    let peak = 0;
    await waitUntil(
      'all six jobs',
      async () => {
        const h = await health(u);
        peak = Math.max(peak, total(h));
        return h.jobs.completed === 6;
      },
      40_000,
      100,
    );
    assert.equal(peak, 3, 'six requests, two per worker: three workers, not five');
  });
});

describe('what a platform can run', () => {
  test('an endpoint pinned to datacenters the platform does not serve is refused, naming both', async () => {
    const tp = await startTestPlatform({ datacenters: ['us_ks_2'] });
    try {
      const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
        queueSpec('romania', 'noop', { resource: { datacenters: ['EU-RO-1'], volumes: SHARED } }),
        queueSpec('kansas', 'noop', { resource: { datacenters: ['US-KS-2'] } }),
        queueSpec('anywhere', 'noop'),
      ]);
      // Refused before anything changes (the build's other endpoints are not saved, the environment keeps its build):
      // refused at its own save, a deploy left some endpoints on the new build and the others on the old.
      await assert.rejects(deploy(tp.cp, art, { app: 'dcs' }), (e: Error) =>
        /endpoint "romania" runs only in EU-RO-1 \(where its volumes are\), and this platform serves US-KS-2/.test(e.message),
      );
      const app = (await tp.cp.findApp('dcs'))!;
      assert.deepEqual(
        app.environments.map((e) => [e.name, e.activeBuildId ?? null]),
        [['production', null]],
      );
      assert.deepEqual(await tp.cp.listEndpoints(app.environments[0].id), []);
      const runnable = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
        queueSpec('kansas', 'noop', { resource: { datacenters: ['US-KS-2'] } }),
        queueSpec('anywhere', 'noop'),
      ]);
      const ok = await deploy(tp.cp, runnable, { app: 'dcs' });
      assert.deepEqual(ok.kansas.datacenters, ['US-KS-2']);
      assert.equal(ok.anywhere.datacenters, null);
      assert.deepEqual((await tp.cp.query<{ platform: { datacenters: string[] } }>('{ platform { datacenters } }')).platform.datacenters, ['US-KS-2']);
    } finally {
      await tp.close();
    }
  });

  test('an endpoint with its own image is refused where workers are local processes, with what to do instead', async () => {
    const tp = await startTestPlatform();
    try {
      const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('custom', 'noop', { resource: { image: 'ghcr.io/acme/worker:1.2' } })]);
      await assert.rejects(deploy(tp.cp, art), (e: Error) => /runs its own image ghcr\.io\/acme\/worker:1\.2.*strato deploy --preview/.test(e.message));
    } finally {
      await tp.close();
    }
  });
});
