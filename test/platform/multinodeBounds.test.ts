// An endpoint's worker bounds on several nodes (issue 11; multinode.test.ts has the rest of the three-node service):
// `workers.max` holds for the whole service while slow jobs arrive through every node (worker processes counted on
// the machine while they run), and the slot of a node that is SIGKILLed goes to another node, which starts the worker.
// Real PostgreSQL (a cluster of the test's own), real nodes, real Python workers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, TEST_KEY, waitUntil, type PlatformProcess } from '../helpers/platform';
import { clusterBed, liveWorkers, on } from '../helpers/clusterBed';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';

const { skip, platforms, postgres, nodeProcesses } = clusterBed('strato-bounds-');

type JobJson = { id: string; status: string; output?: { pid: number; start: number; end: number } };
type Health = { jobs: Record<string, number>; workers: { idle: number; running: number; initializing: number } };

describe('worker bounds of the whole service', { skip: skip ?? false }, () => {
  test('workers (0, 2) on three nodes: slow jobs through every node never have more than 2 workers, and all complete', async () => {
    const database = await postgres().createDatabase();
    // Plain worker processes (no templates), so that each one's environment names its endpoint in /proc.
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database, workerTemplates: false })));
    platforms.push(...nodes);
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('slow', 'sleep', { workers: [0, 2], maxConcurrency: 1, idleTimeout: 1 })]);
    const eps = await deploy(nodes[0].cp, art);
    let most = 0;
    let mostHealth = 0;
    let sampling = true;
    const sampler = (async () => {
      for (let i = 0; i < 2000 && sampling; i++) {
        most = Math.max(most, liveWorkers(eps.slow.id).size);
        const h = (await call('GET', `${on(nodes[i % 3], eps.slow.url)}/health`)).json as Health;
        mostHealth = Math.max(mostHealth, h.workers.idle + h.workers.running + h.workers.initializing);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const N = 24;
    const ids = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const r = await call('POST', `${on(nodes[i % 3], eps.slow.url)}/run`, { body: { input: { seconds: 0.3, i } } });
        assert.equal(r.status, 200, r.text);
        return (r.json as JobJson).id;
      }),
    );
    const outputs: NonNullable<JobJson['output']>[] = [];
    try {
      for (const [i, id] of ids.entries()) {
        const j = await waitUntil(
          `job ${id} to end`,
          async () => {
            const x = (await call('GET', `${on(nodes[(i + 1) % 3], eps.slow.url)}/status/${id}`)).json as JobJson;
            return ['IN_QUEUE', 'IN_PROGRESS'].includes(x.status) ? null : x;
          },
          60_000,
        );
        assert.equal(j.status, 'COMPLETED', JSON.stringify(j));
        outputs.push(j.output!);
      }
    } finally {
      sampling = false;
      await sampler;
    }
    assert.ok(most <= 2, `at most 2 workers alive at once, saw ${most}`);
    assert.ok(mostHealth <= 2, `health never counted more than 2 workers, saw ${mostHealth}`);
    assert.ok(most >= 1, 'the sampler saw the workers');
    // At no moment did three jobs run (each worker runs one at a time): look at every job's start.
    for (const o of outputs) {
      const running = outputs.filter((x) => x.start <= o.start && x.end > o.start);
      assert.ok(running.length <= 2, `${running.length} jobs ran at once`);
    }
  });

  test('a node process SIGKILLed while it holds the one slot: its worker goes with it, another node takes the slot and starts one', async () => {
    const { database, nodes } = await nodeProcesses(3);
    const cp = new ControlPlaneClient({ baseUrl: nodes[0].url, apiKey: TEST_KEY });
    const eps = await deploy(cp, await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('one', 'sleep', { workers: [1, 1] })]));
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    try {
      const holder = async () =>
        (await db.query<{ node_id: string }>('select node_id from worker_slots where endpoint_id = $1', [eps.one.id])).rows.map((r) => r.node_id);
      const health = async (n: PlatformProcess) => (await call('GET', `${on(n, eps.one.url)}/health`)).json as Health;
      await waitUntil('the one worker to be idle', async () => (await health(nodes[0])).workers.idle === 1, 60_000);
      const [held] = await holder();
      assert.deepEqual(await holder(), [held], 'one slot, held by one node');
      const victim = nodes.find((n) => n.output().includes(`(node ${held})`));
      assert.ok(victim, `the node ${held} is one of the three: ${nodes.map((n) => n.output()).join('\n')}`);
      const [before] = [...liveWorkers(eps.one.id)];
      assert.ok(before, 'the worker runs on this machine');
      await victim.crash(); // the node's process alone: its worker watches a pipe from it
      await waitUntil("the dead node's worker to exit", async () => !liveWorkers(eps.one.id).has(before), 5000);
      const survivors = nodes.filter((n) => n !== victim);
      const next = await waitUntil(
        'another node to hold the slot',
        async () => {
          const h = await holder();
          return h.length === 1 && h[0] !== held ? h[0] : null;
        },
        30_000,
      );
      assert.ok(survivors.some((n) => n.output().includes(`(node ${next})`)));
      assert.match(survivors.map((n) => n.output()).join('\n'), /freed the worker slots of lost nodes/);
      await waitUntil('the new worker to be idle', async () => (await health(survivors[0])).workers.idle === 1, 60_000);
      assert.equal(liveWorkers(eps.one.id).size, 1, 'one worker in all');
      // Jobs through both survivors run on it.
      for (const n of survivors) {
        const r = await call('POST', `${on(n, eps.one.url)}/runsync`, { body: { input: { seconds: 0 } } });
        assert.equal(r.status, 200, r.text);
        assert.equal((r.json as JobJson).status, 'COMPLETED', r.text);
      }
    } finally {
      await db.end();
    }
  });
});
