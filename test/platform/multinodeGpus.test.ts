// GPUs across a cluster (gpuOffers.ts): a node whose machine and hosts have no GPU leaves a GPU endpoint's queued jobs
// to the node that has one, which starts a worker on its GPU and takes them, instead of running them on its own CPU;
// the first node's health says where they go. Two `strato platform serve` processes over one real PostgreSQL, one
// with a GPU (STRATO_GPUS) and one without, real Python workers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { buildTestArtifact } from '../helpers/artifact';
import { clusterBed, on } from '../helpers/clusterBed';
import { call, deploy, spawnPlatformProcess, TEST_KEY, waitUntil } from '../helpers/platform';
import { queueSpec } from '../helpers/testWorkers';

const { skip, tmp, processes, postgres } = clusterBed('strato-multinode-gpus-');

const GPU_PY = `
import os
import time


def where(**kw):
    return {"cuda": os.environ.get("CUDA_VISIBLE_DEVICES"), "pid": os.getpid()}


def hold(seconds=2.0, **kw):
    time.sleep(seconds)
    return {"cuda": os.environ.get("CUDA_VISIBLE_DEVICES"), "pid": os.getpid()}
`;

describe('GPUs of one node of two', { skip: skip ?? false }, () => {
  test("a GPU endpoint's jobs sent to the node without a GPU run on the other node's GPU, not on its CPU", async () => {
    const database = await postgres().createDatabase();
    const start = async (name: string, gpus: string) => {
      const p = await spawnPlatformProcess(path.join(tmp, name), ['--database', database, '--node-lost-ms', '3000'], 0, {
        STRATO_GPUS: gpus,
        STRATO_WORKER_TEMPLATES: '0',
      });
      processes.push(p);
      // The node's id is printed a moment after "listening on" (the database line follows an import).
      const id = await waitUntil('the node id line', async () => /\(node (n[0-9a-z]{10})\)/.exec(p.output())?.[1], 10_000);
      return { ...p, id };
    };
    const withGpu = await start('with-gpu', 'NVIDIA L4,NVIDIA L4,NVIDIA L4');
    const without = await start('without', '');
    const cp = new ControlPlaneClient({ baseUrl: withGpu.url, apiKey: TEST_KEY });
    const art = await buildTestArtifact({ 'gpu.py': GPU_PY }, [
      queueSpec('gpu', 'where', { file: 'gpu.py', gpu: 'any', workers: [0, 1] }),
      // More GPUs per worker than any node has: blocked for the service, though the node without GPUs has nothing against it.
      queueSpec('big', 'where', { file: 'gpu.py', gpu: 'any', workers: [0, 1], resource: { gpu_count: 4 } }),
      // QUEUE_DELAY of 1 s: a second worker once jobs waited that long, on the other GPU.
      queueSpec('pair', 'hold', { file: 'gpu.py', gpu: 'any', workers: [0, 2], resource: { scaler_type: 'QUEUE_DELAY', scaler_value: 1 } }),
    ]);
    const eps = await deploy(cp, art);

    // The node without a GPU hears of the other's within its telling period, and says where the jobs go.
    const far = new ControlPlaneClient({ baseUrl: without.url, apiKey: TEST_KEY });
    const note = await waitUntil(
      'the node without a GPU to name the node with one',
      async () => {
        const n = (await far.endpointHealth(eps.gpu.id))?.hardwareNote ?? '';
        return n.includes(`its jobs go to node ${withGpu.id}`) ? n : null;
      },
      20_000,
      200,
    );
    assert.doesNotMatch(note, /run on the CPU/);
    // Each node sees the service: the node without GPUs leaves the decision to the one it sends the jobs to.
    for (const [client, node] of [
      [far, without],
      [cp, withGpu],
    ] as const) {
      const blocked = (await client.endpointHealth(eps.big.id))?.blocked ?? '';
      assert.match(blocked, /asks for 4 GPUs per worker \(gpu_count\) and this machine has 3/, `through node ${node.id}: ${blocked}`);
    }
    assert.equal((await far.endpointHealth(eps.gpu.id))?.blocked, null, 'a GPU endpoint that fits is not blocked');
    for (let i = 0; i < 3; i++) {
      const r = await call('POST', `${on(without, eps.gpu.url)}/runsync`, { body: { input: { i } }, timeoutMs: 60_000 });
      const job = r.json as { status: string; output?: { cuda: string | null } };
      assert.equal(job.status, 'COMPLETED', r.text);
      assert.equal(job.output?.cuda, '0', `ran on the GPU of node ${withGpu.id}, not on the CPU of ${without.id}: ${r.text}`);
    }

    // Jobs queued on the node without a GPU wait there (they move only to a waiting worker), yet they have waited: the
    // node with the GPUs scales for them by QUEUE_DELAY as for its own, its second worker on another GPU (the first
    // endpoint's idle worker holds one of the three).
    const ids = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const r = await call('POST', `${on(without, eps.pair.url)}/run`, { body: { input: { seconds: 2, i } } });
        assert.equal(r.status, 200, r.text);
        return (r.json as { id: string }).id;
      }),
    );
    const outputs = await Promise.all(
      ids.map((id) =>
        waitUntil(
          `job ${id}`,
          async () => {
            const s = (await call('GET', `${on(without, eps.pair.url)}/status/${id}`)).json as { status: string; output?: { cuda: string } };
            assert.ok(['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED'].includes(s.status), JSON.stringify(s));
            return s.status === 'COMPLETED' ? s.output! : null;
          },
          60_000,
          200,
        ),
      ),
    );
    assert.equal(new Set(outputs.map((o) => o.cuda)).size, 2, `two workers, each on a GPU of its own: ${JSON.stringify(outputs)}`);
  });
});
