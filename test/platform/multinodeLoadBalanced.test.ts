// Load-balanced endpoints on several nodes (issue 11): any node answers a load-balanced request, with the worker of
// whichever node holds the endpoint's slot (workers.max is the service's): requests sent to each node in turn, a
// scale from zero through all three at once, a burst through a node without workers growing the workers of the node
// that serves it, the forwarded-by list honoured, and a SIGKILLed holder answered for with a new worker or a clear
// error. Real PostgreSQL (a cluster of the test's own), real nodes, real Python workers (plain processes, so that
// /proc shows each worker).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { FORWARDED_HEADER } from '../../engine/src/platform/clusterForward';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, TEST_KEY } from '../helpers/platform';
import { clusterBed, liveWorkers, on } from '../helpers/clusterBed';
import { LB_PY } from '../helpers/testWorkers';

const { skip, platforms, postgres, nodeProcesses } = clusterBed('strato-lbnodes-');

const routes = { 'POST /process': 'process', 'GET /health': 'health', 'GET /items/{item_id}': 'item', 'POST /boom': 'boom', 'GET /slow': 'slow' };
type Pid = { pid: number };

/** Samples the endpoint's live workers on this machine until stopped; the most seen at once. */
function sampleWorkers(endpointId: string): { stop(): Promise<number> } {
  let most = 0;
  let going = true;
  const run = (async () => {
    for (let i = 0; i < 4000 && going; i++) {
      most = Math.max(most, liveWorkers(endpointId).size);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  return {
    stop: async () => {
      going = false;
      await run;
      return most;
    },
  };
}

/** The nodes holding the endpoint's worker slots, one entry per slot. */
async function holders(database: string, endpointId: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: database });
  await db.connect();
  try {
    return (await db.query<{ node_id: string }>('select node_id from worker_slots where endpoint_id = $1 order by slot', [endpointId])).rows.map(
      (r) => r.node_id,
    );
  } finally {
    await db.end();
  }
}

describe('load-balanced endpoints on three nodes', { skip: skip ?? false }, () => {
  test('workers (0, 1): requests through every node, from zero and in turn, all get the one worker, and one worker runs', async () => {
    const database = await postgres().createDatabase();
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database, workerTemplates: false })));
    platforms.push(...nodes);
    const eps = await deploy(nodes[0].cp, await buildTestArtifact({ 'lb_worker.py': LB_PY }, [{ name: 'api', file: 'lb_worker.py', fn: 'process', routes }]));
    const api = eps.api;
    const sampler = sampleWorkers(api.id);
    let most: number;
    try {
      // From zero through all three at once: each node starts a cold start, one wins the slot, the others forward.
      const first = await Promise.all(nodes.map((n) => call('GET', `${on(n, api.url)}/health`, { timeoutMs: 60_000 })));
      for (const r of first) assert.equal(r.status, 200, r.text);
      const pid = (first[0].json as Pid).pid;
      assert.deepEqual(
        first.map((r) => (r.json as Pid).pid),
        [pid, pid, pid],
        'one worker answered all three',
      );
      const [holder] = await holders(database, api.id);
      assert.ok(nodes.some((n) => n.platform.instanceId === holder));

      // Each node in turn, GET and POST, a few at a time; a body of 200 kB goes through unchanged.
      for (let round = 0; round < 6; round++) {
        const answers = await Promise.all(
          nodes.flatMap((n, i) => [
            call('POST', `${on(n, api.url)}/process`, { body: { text: `r${round}n${i}`, times: 2 } }),
            call('GET', `${on(n, api.url)}/items/${round}${i}?q=n${i}`),
          ]),
        );
        nodes.forEach((_, i) => {
          const [post, get] = [answers[2 * i], answers[2 * i + 1]];
          assert.equal(post.status, 200, post.text);
          assert.deepEqual(post.json, { result: `r${round}n${i}`.repeat(2), pid });
          assert.equal(get.status, 200, get.text);
          assert.deepEqual(get.json, { item_id: `${round}${i}`, q: `n${i}` });
        });
      }
      const big = 'x'.repeat(200_000);
      for (const n of nodes) {
        const r = await call('POST', `${on(n, api.url)}/process`, { body: { text: big } });
        assert.equal(r.status, 200);
        assert.equal((r.json as { result: string }).result, big);
      }
      // The worker's own errors come back as it sent them, through any node.
      for (const n of nodes) {
        const nf = await call('GET', `${on(n, api.url)}/nope`);
        assert.equal(nf.status, 404);
        assert.match((nf.json as { detail: string }).detail, /no route matches GET \/nope/);
        const ex = await call('POST', `${on(n, api.url)}/boom`, { body: {} });
        assert.equal(ex.status, 500);
        assert.match((ex.json as { detail: string }).detail, /kaboom/);
      }
      assert.deepEqual(await holders(database, api.id), [holder], 'the slot never moved');
    } finally {
      most = await sampler.stop();
    }
    assert.equal(most, 1, `one worker alive at most, saw ${most}`);
  });

  test('a burst through a node without workers grows the workers of the node that serves it, up to the max', async () => {
    const database = await postgres().createDatabase();
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database, workerTemplates: false })));
    platforms.push(...nodes);
    const art = await buildTestArtifact({ 'lb_worker.py': LB_PY }, [{ name: 'grow', file: 'lb_worker.py', fn: 'process', routes, workers: [0, 2] }]);
    const grow = (await deploy(nodes[0].cp, art)).grow;
    const [a, b] = nodes;
    const sampler = sampleWorkers(grow.id);
    let most: number;
    try {
      const warm = await call('GET', `${on(a, grow.url)}/health`, { timeoutMs: 60_000 });
      assert.equal(warm.status, 200, warm.text);
      assert.deepEqual(await holders(database, grow.id), [a.platform.instanceId]);
      // Waves of slow requests through B, which has no worker: A serves them, sees them in flight and starts the second
      // (until it answers: its start takes longer on a loaded machine; bounded).
      const pids = new Set<number>();
      for (let wave = 0; wave < 4 || (pids.size < 2 && wave < 20); wave++) {
        const answers = await Promise.all(Array.from({ length: 6 }, () => call('GET', `${on(b, grow.url)}/slow?seconds=0.4`, { timeoutMs: 60_000 })));
        for (const r of answers) {
          assert.equal(r.status, 200, r.text);
          pids.add((r.json as Pid).pid);
        }
      }
      assert.equal(pids.size, 2, 'the requests through B ran on two workers');
      assert.deepEqual(await holders(database, grow.id), [a.platform.instanceId, a.platform.instanceId], 'both slots are A’s, none B’s');
    } finally {
      most = await sampler.stop();
    }
    assert.ok(most <= 2, `at most 2 workers alive, saw ${most}`);
  });

  test('a request that went through the holder is not sent back to it: the node it reaches serves it', async () => {
    const database = await postgres().createDatabase();
    const nodes = await Promise.all([0, 1].map(() => startTestPlatform({ database, workerTemplates: false })));
    platforms.push(...nodes);
    const art = await buildTestArtifact({ 'lb_worker.py': LB_PY }, [{ name: 'pair', file: 'lb_worker.py', fn: 'process', routes, workers: [0, 2] }]);
    const pair = (await deploy(nodes[0].cp, art)).pair;
    const [a, b] = nodes;
    const first = await call('GET', `${on(a, pair.url)}/health`, { timeoutMs: 60_000 });
    assert.equal(first.status, 200, first.text);
    // As if A had forwarded it: B may not choose A, so it starts the second worker itself.
    const r = await fetch(`${on(b, pair.url)}/health`, {
      headers: { authorization: `Bearer ${TEST_KEY}`, [FORWARDED_HEADER]: a.platform.instanceId },
      signal: AbortSignal.timeout(60_000),
    });
    assert.equal(r.status, 200);
    assert.notEqual(((await r.json()) as Pid).pid, (first.json as Pid).pid, 'a worker of B answered');
    assert.deepEqual((await holders(database, pair.id)).sort(), [a.platform.instanceId, b.platform.instanceId].sort());
  });

  test('the node holding the worker is SIGKILLed: requests through the others get a new worker’s answer, or a clear error, never a hang', async () => {
    const { database, nodes } = await nodeProcesses(3);
    const cp = new ControlPlaneClient({ baseUrl: nodes[0].url, apiKey: TEST_KEY });
    const api = (await deploy(cp, await buildTestArtifact({ 'lb_worker.py': LB_PY }, [{ name: 'api', file: 'lb_worker.py', fn: 'process', routes }]))).api;
    const warm = await call('GET', `${on(nodes[0], api.url)}/health`, { timeoutMs: 60_000 });
    assert.equal(warm.status, 200, warm.text);
    const [held] = await holders(database, api.id);
    const victim = nodes.find((n) => n.output().includes(`(node ${held})`));
    assert.ok(victim, `the node ${held} is one of the three`);
    const survivors = nodes.filter((n) => n !== victim);
    for (const n of survivors) assert.equal((await call('GET', `${on(n, api.url)}/health`)).status, 200, 'forwarded to the holder');
    const before = (warm.json as Pid).pid;

    // One request is running on the victim's worker when it dies: its forwarder says so at once.
    const running = call('GET', `${on(survivors[0], api.url)}/slow?seconds=3`, { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 1000)); // it reached the worker meanwhile
    await victim.crash();
    const broken = await running;
    assert.equal(broken.status, 502, broken.text);
    assert.equal((broken.json as { error: string }).error, 'node unavailable');
    assert.match((broken.json as { detail: string }).detail, new RegExp(`node ${held} at .* broke off the request`));

    // Requests through both survivors right after the kill: a worker starts on one of them once the victim counts as
    // lost, and both are answered by it.
    const started = Date.now();
    const after = await Promise.all(survivors.map((n) => call('GET', `${on(n, api.url)}/health`, { timeoutMs: 90_000 })));
    for (const r of after) {
      if (r.status !== 200) {
        assert.equal(r.status, 503, r.text);
        assert.deepEqual(Object.keys(r.json as object).sort(), ['detail', 'error']);
      }
    }
    assert.ok(
      after.every((r) => r.status === 200),
      `both answered by a new worker (${Date.now() - started} ms): ${after.map((r) => r.text).join(' | ')}`,
    );
    const pids = new Set(after.map((r) => (r.json as Pid).pid));
    assert.equal(pids.size, 1, 'one new worker answered both');
    assert.ok(!pids.has(before), 'not the dead node’s worker');
    const [next] = await holders(database, api.id);
    assert.ok(
      survivors.some((n) => n.output().includes(`(node ${next})`)),
      'a survivor holds the slot',
    );
    assert.equal(liveWorkers(api.id).size, 1, 'one worker in all');
  });
  test('the node holding the worker hangs (SIGSTOP): a request forwarded to it gets a 502 once it counts as lost, not after minutes', async () => {
    const { database, nodes } = await nodeProcesses(3);
    const cp = new ControlPlaneClient({ baseUrl: nodes[0].url, apiKey: TEST_KEY });
    const api = (await deploy(cp, await buildTestArtifact({ 'lb_worker.py': LB_PY }, [{ name: 'api', file: 'lb_worker.py', fn: 'process', routes }]))).api;
    assert.equal((await call('GET', `${on(nodes[0], api.url)}/health`, { timeoutMs: 60_000 })).status, 200);
    const [held] = await holders(database, api.id);
    const victim = nodes.find((n) => n.output().includes(`(node ${held})`))!;
    const through = nodes.find((n) => n !== victim)!;
    // A hung machine keeps its connections open: nothing tells the forwarder but the missing heartbeat.
    const running = call('GET', `${on(through, api.url)}/slow?seconds=120`, { timeoutMs: 90_000 });
    await new Promise((r) => setTimeout(r, 1000)); // it reached the victim meanwhile
    process.kill(victim.child.pid!, 'SIGSTOP');
    const stopped = Date.now();
    try {
      const r = await running;
      assert.equal(r.status, 502, r.text);
      assert.equal((r.json as { error: string }).error, 'node unavailable');
      assert.match((r.json as { detail: string }).detail, new RegExp(`node ${held} at .* stopped heartbeating .* counts as lost`));
      // Lost after 3 s without a heartbeat, looked at every 2 s: far below the 120 s the handler would take.
      assert.ok(Date.now() - stopped < 60_000, `answered ${Date.now() - stopped} ms after the node hung`);
    } finally {
      process.kill(victim.child.pid!, 'SIGCONT');
    }
  });
});
