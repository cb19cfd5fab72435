// Several platform nodes over one PostgreSQL server form one service (issue #11): any node answers any request
// (control plane, jobs API, a job another node accepted), endpoint health and purge are the whole service's,
// builds uploaded through one node run on another, and
// when one of three node processes is SIGKILLed while it holds queued and running jobs, the others adopt them:
// every job ends and each result is recorded once. Real PostgreSQL (a cluster of the test's own), real nodes (in
// this process, and `strato platform serve` processes for the crash), real Python workers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { Artifacts } from '../../engine/src/platform/controlPlane/artifacts';
import { defaultNodeUrl } from '../../engine/src/platform/cluster';
import { ensureLayout, platformLayout } from '../../engine/src/protocol/layout';
import { startPlatform } from '../../engine/src/platform/platform';
import { buildTestArtifact } from '../helpers/artifact';
import { startBalancer } from '../helpers/balancer';
import { runCli } from '../helpers/cli';
import { call, deploy, spawnPlatformProcess, startTestPlatform, TEST_KEY, waitUntil, type TestPlatform } from '../helpers/platform';
import { clusterBed, on } from '../helpers/clusterBed';
import { LB_PY, queueSpec, WORKER_PY } from '../helpers/testWorkers';

const { skip, tmp, platforms, processes, postgres } = clusterBed('strato-multinode-');

type JobJson = { id: string; status: string; output?: unknown; error?: string };

async function ended(url: string, id: string, timeoutMs = 30_000): Promise<JobJson> {
  return waitUntil(
    `job ${id} to end`,
    async () => {
      const j = (await call('GET', `${url}/status/${id}`)).json as JobJson;
      return ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(j?.status) ? j : null;
    },
    timeoutMs,
  );
}

describe('three nodes on one database', { skip: skip ?? false }, () => {
  test('any node answers any request: deploy through A, run through B, status, stream and cancel through C', async () => {
    const database = await postgres().createDatabase();
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database })));
    platforms.push(a, b, c);
    const ids = [a, b, c].map((n) => n.platform.instanceId);
    assert.equal(new Set(ids).size, 3, `each node has its own instance id: ${ids.join(', ')}`);

    // The build is uploaded to A only; B and C fetch it from the database when they start workers.
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY, 'lb_worker.py': LB_PY }, [
      queueSpec('echo', 'echo'),
      queueSpec('sleep', 'sleep'),
      { name: 'api', file: 'lb_worker.py', fn: 'process', routes: { 'POST /process': 'process' }, workers: [0, 1] },
    ]);
    const eps = await deploy(a.cp, art, { app: 'multi' });
    const sync = await call('POST', `${on(b, eps.echo.url)}/runsync`, { body: { input: { n: 1 } } });
    assert.equal(sync.status, 200, sync.text);
    assert.match(sync.text, /"status":"COMPLETED"/);
    assert.match(sync.text, /"output":\{"echo":\{"n":1\}\}/);
    assert.ok((sync.json as JobJson).id.endsWith(`-${b.platform.instanceId}`), 'the node that accepted the job owns it');

    // A load-balanced route through C: C starts a worker of its own from the build it fetched.
    const lb = await call('POST', `${on(c, eps.api.url)}/process`, { body: { text: 'ab', times: 2 } });
    assert.equal(lb.status, 200, lb.text);
    assert.equal((lb.json as { result: string }).result, 'abab');

    // A job B accepted, read through C (forwarded to B): status and stream.
    const run = (await call('POST', `${on(b, eps.echo.url)}/run`, { body: { input: { n: 2 } } })).json as JobJson;
    const done = await ended(on(c, eps.echo.url), run.id);
    assert.equal(done.status, 'COMPLETED');
    assert.deepEqual(done.output, { echo: { n: 2 } });
    const stream = await call('GET', `${on(c, eps.echo.url)}/stream/${run.id}`);
    assert.equal(stream.status, 200, stream.text);
    assert.match(stream.text, /"n":2/);
    assert.equal((await call('GET', `${on(a, eps.echo.url)}/status/${run.id}`)).status, 200);
    assert.equal((await call('GET', `${on(c, eps.echo.url)}/status/00000000-0000-4000-8000-000000000000-${b.platform.instanceId}`)).status, 404);

    // Cancel through C of a job B runs.
    const long = (await call('POST', `${on(b, eps.sleep.url)}/run`, { body: { input: { seconds: 30 } } })).json as JobJson;
    await waitUntil(
      'the long job to run',
      async () => ((await call('GET', `${on(c, eps.sleep.url)}/status/${long.id}`)).json as JobJson).status === 'IN_PROGRESS',
    );
    const cancel = await call('POST', `${on(c, eps.sleep.url)}/cancel/${long.id}`);
    assert.equal(cancel.status, 200, cancel.text);
    assert.deepEqual(cancel.json, { id: long.id, status: 'CANCELLED' });
    assert.equal((await ended(on(a, eps.sleep.url), long.id)).status, 'CANCELLED');

    // Control-plane changes through B and C are seen by every node as soon as their calls answer (read-your-writes); a
    // key made on A works on C at once, and its revocation too.
    await b.cp.createApp('fromb');
    await c.cp.saveEndpoint({ environmentId: (await c.cp.findApp('multi'))!.environments[0].id, name: 'echo', env: { MY_VAR: 'from-c' } });
    const created = await a.cp.createKey('ci', 'invoke', ['multi']);
    const view = async (n: TestPlatform) =>
      JSON.stringify({
        apps: (await n.cp.listApps()).map((x) => x.name).sort(),
        endpoints: (await n.cp.listEndpoints()).map((e) => `${e.id} ${e.name} ${JSON.stringify(e.env ?? {})}`).sort(),
        keys: (await n.cp.listKeys()).map((k) => `${k.name} ${k.revokedAt ?? ''}`).sort(),
      });
    assert.equal(new Set(await Promise.all([a, b, c].map(view))).size, 1, 'every node reads the same records');
    assert.match(await view(a), /fromb/);
    assert.match(await view(a), /from-c/);
    const withKey = await call('POST', `${on(c, eps.echo.url)}/runsync`, { key: created.secret, body: { input: { k: 1 } } });
    assert.equal(withKey.status, 200, withKey.text);
    await a.cp.revokeKey('ci');
    assert.equal((await call('GET', `${on(c, eps.echo.url)}/health`, { key: created.secret })).status, 401, 'C refuses the revoked key at once');

    // `strato platform status` through any node lists the three nodes.
    const status = await runCli(['platform', 'status'], { cwd: tmp, env: { STRATO_API_URL: c.url, STRATO_API_KEY: TEST_KEY } });
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /nodes: 3 \(3 alive, 0 lost\)/);
    for (const id of ids) assert.match(status.stdout, new RegExp(`${id}\\s+alive`));
    assert.match(status.stdout, new RegExp(`${c.platform.instanceId}.*answered this`));
    // --json holds what the text shows, the worker hosts too; a key that may not list hosts is told why, in its words.
    const json = await runCli(['platform', 'status', '--json'], { cwd: tmp, env: { STRATO_API_URL: c.url, STRATO_API_KEY: TEST_KEY } });
    const j = JSON.parse(json.stdout) as { nodes: unknown[]; hosts: Array<{ local: boolean }> };
    assert.equal(j.nodes.length, 3);
    assert.ok(
      j.hosts.some((h) => h.local),
      json.stdout,
    );
    const deployKey = await a.cp.createKey('deployer', 'deploy', ['multi']);
    const limited = await runCli(['platform', 'status'], { cwd: tmp, env: { STRATO_API_URL: c.url, STRATO_API_KEY: deployKey.secret } });
    assert.match(limited.stdout, /worker hosts: not listed \(.*listing the worker hosts needs an admin key; the key "deployer" \(deploy: multi\) is not one\)/);
  });

  test('one URL in front of three nodes, each request to the next node: deploy, upload, run and read as from one service', async () => {
    const database = await postgres().createDatabase();
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database })));
    platforms.push(...nodes);
    // A round-robin balancer: consecutive requests of one client reach different nodes.
    const balancer = await startBalancer(nodes.map((n) => n.url));
    try {
      const url = balancer.url;
      const cp = new ControlPlaneClient({ baseUrl: url, apiKey: TEST_KEY });
      const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('echo', 'echo')]);
      // Create, upload (request, PUT and finalize on three nodes), deploy and save: each step on another node.
      const eps = await deploy(cp, art, { app: 'balanced' });
      const ep = on({ url }, eps.echo.url);
      for (let i = 0; i < 6; i++) {
        const r = await call('POST', `${ep}/runsync`, { body: { input: { i } } });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual((r.json as JobJson).output, { echo: { i } });
      }
      const run = (await call('POST', `${ep}/run`, { body: { input: { late: true } } })).json as JobJson;
      assert.deepEqual((await ended(ep, run.id)).output, { echo: { late: true } });
      for (let i = 0; i < 3; i++) assert.deepEqual(((await call('GET', `${ep}/status/${run.id}`)).json as JobJson).output, { echo: { late: true } });
      for (let i = 0; i < 3; i++) assert.ok(await cp.findApp('balanced'), 'every node knows the app');
    } finally {
      await balancer.close();
    }
  });

  test("each node's own platform key works on every node (a load balancer, an agent moving on), until an admin revokes it", async () => {
    const database = await postgres().createDatabase();
    const [a, b] = await Promise.all(['key-of-a', 'key-of-b'].map((apiKey) => startTestPlatform({ database, apiKey })));
    platforms.push(a, b);
    const asKey = (n: TestPlatform, apiKey: string) => new ControlPlaneClient({ baseUrl: n.url, apiKey });
    await asKey(b, 'key-of-a').createApp('made-with-a-key-on-b');
    assert.ok(await asKey(a, 'key-of-b').findApp('made-with-a-key-on-b'), "B's key reads on A");
    const shared = (await a.cp.listKeys()).filter((k) => k.name.startsWith('platform-'));
    assert.deepEqual(
      shared.map((k) => [k.name.replace(/-[0-9a-f]{6}$/, ''), k.scope, k.prefix]).sort(),
      [
        [`platform-${a.platform.instanceId}`, 'admin', ''],
        [`platform-${b.platform.instanceId}`, 'admin', ''],
      ].sort(),
    );
    // Revoked through A: every node refuses B's key, B itself included.
    await asKey(a, 'key-of-a').revokeKey(shared.find((k) => k.name.includes(b.platform.instanceId))!.name);
    for (const n of [a, b]) {
      const r = await call('POST', `${n.url}/graphql`, { key: 'key-of-b', body: { query: '{ apps { id } }' } });
      assert.equal(r.status, 401, `${n.platform.instanceId}: ${r.text}`);
      assert.match((r.json as { errors: Array<{ message: string }> }).errors[0].message, /^the API key "platform-n\w+-[0-9a-f]{6}" was revoked/);
    }
    assert.ok(await asKey(b, 'key-of-a').findApp('made-with-a-key-on-b'), "A's key still works on B");
  });

  test("a node started with a copy of a live node's node-id is refused, naming the node; the live node is untouched", async () => {
    const database = await postgres().createDatabase();
    const a = await startTestPlatform({ database, dataDir: path.join(tmp, 'original') });
    platforms.push(a);
    const copy = path.join(tmp, 'copied');
    fs.mkdirSync(copy, { recursive: true });
    fs.copyFileSync(path.join(tmp, 'original', 'node-id'), path.join(copy, 'node-id'));
    await assert.rejects(
      startTestPlatform({ database, dataDir: copy }),
      new RegExp(`node id ${a.platform.instanceId} belongs to a live node at http://127\\.0\\.0\\.1:${a.platform.port}: .*remove node-id from this data dir`),
    );
    const nodes = await call('POST', `${a.url}/graphql`, { body: { query: '{ platform { nodes { id url state } } }' } });
    assert.deepEqual((nodes.json as { data: { platform: { nodes: unknown[] } } }).data.platform.nodes, [
      { id: a.platform.instanceId, url: `http://127.0.0.1:${a.platform.port}`, state: 'alive' },
    ]);
  });

  test('a node with a shorter --node-lost-ms than the others never takes them for lost (each node is judged by its own bound too)', async () => {
    const database = await postgres().createDatabase();
    const steady = await startTestPlatform({ database, nodeLostMs: 6000 }); // heartbeats every 2 s
    const hasty = await startTestPlatform({ database, nodeLostMs: 1000 }); // would call a 1 s-old heartbeat lost
    platforms.push(steady, hasty);
    const states = new Set<string>();
    for (const until = Date.now() + 4500; Date.now() < until;) {
      const r = await call('POST', `${hasty.url}/graphql`, { body: { query: '{ platform { nodes { id state } } }' } });
      const nodes = (r.json as { data: { platform: { nodes: Array<{ id: string; state: string }> } } }).data.platform.nodes;
      states.add(nodes.find((n) => n.id === steady.platform.instanceId)?.state ?? 'missing');
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual([...states], ['alive']);
  });

  test("a node started with a live node's URL as its --node-url is refused, naming the other node", async () => {
    const database = await postgres().createDatabase();
    const a = await startTestPlatform({ database });
    platforms.push(a);
    const taken = `http://127.0.0.1:${a.platform.port}`;
    await assert.rejects(
      startTestPlatform({ database, nodeUrl: taken }),
      new RegExp(
        `another live node \\(${a.platform.instanceId}\\) is reached at ${taken.replace(/\./g, '\\.')}, the URL this node would register: .*--node-url`,
      ),
    );
  });

  test('queued jobs go where workers wait: jobs sent to one node run on the workers of the others too', async () => {
    const database = await postgres().createDatabase();
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database })));
    platforms.push(...nodes);
    // Three workers in the service, on whichever nodes hold their slots.
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('slow', 'sleep', { workers: [3, 3], maxConcurrency: 1 })]);
    const eps = await deploy(nodes[0].cp, art);
    await waitUntil('three idle workers', async () => ((await call('GET', `${eps.slow.url}/health`)).json as { workers: { idle: number } }).workers.idle === 3);
    const ids: string[] = [];
    for (let i = 0; i < 18; i++) ids.push(((await call('POST', `${eps.slow.url}/run`, { body: { input: { seconds: 0.3, i } } })).json as JobJson).id);
    const pids = new Set<number>();
    for (const [i, id] of ids.entries()) {
      const j = await ended(eps.slow.url, id); // through the node that accepted them, wherever they ran
      assert.equal(j.status, 'COMPLETED', JSON.stringify(j));
      const out = j.output as { pid: number; i: number };
      assert.equal(out.i, i);
      pids.add(out.pid);
    }
    assert.ok(pids.size >= 2, `the jobs ran on the workers of ${pids.size} node(s)`);
  });

  test('/health and /purge-queue through any node answer for the whole service; a queued job is cancelled through another node', async () => {
    const database = await postgres().createDatabase();
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database })));
    platforms.push(...nodes);
    const [a, b, c] = nodes;
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('slow', 'sleep', { workers: [3, 3], maxConcurrency: 1 })]);
    const eps = await deploy(a.cp, art);
    type Health = { jobs: Record<string, number>; workers: Record<string, number> };
    const health = async (n: TestPlatform) => (await call('GET', `${on(n, eps.slow.url)}/health`)).json as Health;
    await waitUntil('three idle workers in the service', async () => (await health(a)).workers.idle === 3);
    // The three workers busy (a job sent to a node without one goes to an idle worker elsewhere); then two jobs queued
    // on each node behind them.
    const running = await Promise.all(
      nodes.map(async (n) => ((await call('POST', `${on(n, eps.slow.url)}/run`, { body: { input: { seconds: 3 } } })).json as JobJson).id),
    );
    await waitUntil('the three jobs to run', async () => (await health(b)).jobs.inProgress === 3);
    const queued: string[] = [];
    for (const n of [...nodes, ...nodes])
      queued.push(((await call('POST', `${on(n, eps.slow.url)}/run`, { body: { input: { seconds: 0 } } })).json as JobJson).id);
    for (const n of nodes) {
      const h = await health(n);
      assert.deepEqual([h.jobs.inProgress, h.jobs.inQueue, h.workers.running], [3, 6, 3], `through ${n.platform.instanceId}: ${JSON.stringify(h)}`);
    }
    // A job A queued, cancelled through C (its owner drops it), then every other queued job purged through B.
    assert.deepEqual((await call('POST', `${on(c, eps.slow.url)}/cancel/${queued[0]}`)).json, { id: queued[0], status: 'CANCELLED' });
    const purged = await call('POST', `${on(b, eps.slow.url)}/purge-queue`);
    assert.deepEqual(purged.json, { removed: 5, status: 'completed' });
    for (const id of queued.slice(1)) assert.equal((await call('GET', `${on(c, eps.slow.url)}/status/${id}`)).status, 404, id);
    assert.equal((await health(c)).jobs.inQueue, 0);
    for (const id of running) assert.equal((await ended(on(a, eps.slow.url), id)).status, 'COMPLETED');
    const done = await health(a);
    assert.deepEqual([done.jobs.completed, done.jobs.inProgress, done.jobs.inQueue], [3, 0, 0], JSON.stringify(done));
  });

  test("a database outage longer than the lost bound: every node recovers by itself and none takes the others' jobs", async () => {
    const database = await postgres().createDatabase();
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database, nodeLostMs: 2000 })));
    platforms.push(...nodes);
    const [a, b, c] = nodes;
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('slow', 'sleep', { workers: [1, 1], maxConcurrency: 1 })]);
    const eps = await deploy(a.cp, art);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(((await call('POST', `${on(b, eps.slow.url)}/run`, { body: { input: { seconds: 0.5, i } } })).json as JobJson).id);
    try {
      postgres().pause();
      await new Promise((r) => setTimeout(r, 4000)); // twice the lost bound
    } finally {
      postgres().resume();
    }
    for (const id of ids) assert.equal((await ended(on(c, eps.slow.url), id, 60_000)).status, 'COMPLETED');
    // Changes are heard again (the LISTEN connection came back), and every node is alive.
    await a.cp.createApp('after-outage');
    await waitUntil('C to hear the change', async () => (await c.cp.findApp('after-outage')) !== null, 15_000);
    await waitUntil('every node alive', async () => (await c.cp.platformNodes()).nodes.every((n) => n.state === 'alive'), 15_000);
    for (const n of nodes) assert.ok(!n.logs.some((l) => /adopted \d+ jobs/.test(l)), `${n.platform.instanceId} adopted nothing: ${n.logs.join('\n')}`);
  });

  test('a node silent for the forget bound leaves the node list, where nodes of elastic groups piled up as lost', async () => {
    const database = await postgres().createDatabase();
    const options = { database, nodeLostMs: 1000, nodeForgetMs: 3000 };
    const a = await startTestPlatform(options);
    platforms.push(a);
    const b = await startTestPlatform(options);
    const bId = b.platform.instanceId;
    try {
      await waitUntil('A to list B', async () => (await a.cp.platformNodes()).nodes.some((n) => n.id === bId), 10_000);
    } finally {
      await b.close();
    }
    const lost = await waitUntil('A to see B lost', async () => (await a.cp.platformNodes()).nodes.find((n) => n.id === bId && n.state === 'lost'), 10_000);
    assert.ok(lost, 'listed as lost first');
    await waitUntil('B to be forgotten', async () => !(await a.cp.platformNodes()).nodes.some((n) => n.id === bId), 15_000);
    assert.ok(
      a.logs.some((l) => l.includes(`forgot node ${bId}: no heartbeat for 3 s`)),
      a.logs.join('\n'),
    );
    assert.deepEqual(
      (await a.cp.platformNodes()).nodes.map((n) => [n.id, n.state]),
      [[a.platform.instanceId, 'alive']],
    );
  });

  test('an archive received here and finalized through another node is deleted here once its location long expired', async () => {
    const layout = platformLayout(path.join(tmp, 'sweep'));
    ensureLayout(layout);
    const file = path.join(layout.uploads, 'upl_elsewhere.tar.gz');
    fs.writeFileSync(file, 'x');
    const artifacts = new Artifacts(layout);
    await artifacts.sweepUploads();
    assert.ok(fs.existsSync(file), 'kept while its location may still be used');
    await artifacts.sweepUploads(Date.now() + 3 * 3600_000);
    assert.ok(!fs.existsSync(file), 'deleted after');
  });

  test('cluster-only options are refused on the embedded database with a sentence', async () => {
    const dataDir = path.join(tmp, 'pglite');
    await assert.rejects(
      startPlatform({ dataDir, port: 0, writeStateFile: false, nodeUrl: 'http://10.0.0.5:8321', log: () => {} }),
      /--node-url is for platform nodes that share a PostgreSQL server.*add --database postgres:\/\//,
    );
    await assert.rejects(
      startPlatform({
        dataDir,
        port: 0,
        writeStateFile: false,
        nodeLostMs: 5000,
        database: 'postgres://x@127.0.0.1:1/x',
        nodeHeartbeatMs: 4000,
        log: () => {},
      }),
      /--node-lost-ms \(5000\) must be at least twice --node-heartbeat-ms \(4000\)/,
    );
  });
});

describe('a node dies', { skip: skip ?? false }, () => {
  test('SIGKILL of one of three nodes while it holds queued and running jobs: every job ends, each result is recorded once', async () => {
    const database = await postgres().createDatabase();
    const args = ['--database', database, '--node-lost-ms', '3000'];
    for (let i = 0; i < 3; i++) processes.push(await spawnPlatformProcess(path.join(tmp, `node${i}`), args));
    const [first, victim, third] = processes.slice(-3);
    const cp = new ControlPlaneClient({ baseUrl: first.url, apiKey: TEST_KEY });
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('rec', 'record', { workers: [0, 2], maxConcurrency: 2 })]);
    const eps = await deploy(cp, art);
    const marker = path.join(tmp, 'runs.log');
    const N = 600; // a third through each node (bench/multinode.ts does 10,000)
    const tags: string[] = [];
    const nodes = [first, victim, third];
    for (let i = 0; i < N; i += 30) {
      await Promise.all(
        Array.from({ length: 30 }, async (_, k) => {
          const tag = `t${i + k}`;
          const r = await call('POST', `${on(nodes[(i + k) % 3], eps.rec.url)}/run`, { body: { input: { marker, tag, seconds: 0.2 } } });
          assert.equal(r.status, 200, r.text);
          tags[i + k] = tag;
        }),
      );
    }
    await waitUntil(
      'the node to run some of its jobs',
      async () => ((await call('GET', `${on(victim, eps.rec.url)}/health`)).json as { jobs: { inProgress: number } }).jobs.inProgress > 0,
      40_000,
    );
    const victimId = /\(node (n[0-9a-z]{10})\)/.exec(victim.output())?.[1];
    assert.ok(victimId, victim.output());
    await victim.crash();

    const db = new pg.Client({ connectionString: database });
    await db.connect();
    try {
      await waitUntil(
        'every job to end',
        async () => {
          const { rows } = await db.query(`select count(*)::int as n, count(*) filter (where status in ('IN_QUEUE', 'IN_PROGRESS'))::int as live from jobs`);
          return rows[0].n === N && rows[0].live === 0;
        },
        90_000,
        250,
      );
      const { rows } = await db.query<{ id: string; status: string; output: string; owner: string }>('select id, status, output, owner from jobs');
      assert.equal(rows.length, N, 'one row a job');
      const byTag = new Map(rows.map((r) => [(JSON.parse(r.output ?? 'null') as { tag?: string } | null)?.tag, r]));
      for (const tag of tags) assert.equal(byTag.get(tag)?.status, 'COMPLETED', `${tag}: ${JSON.stringify(byTag.get(tag))}`);
      const accepted = rows.filter((r) => r.id.endsWith(`-${victimId}`));
      assert.equal(accepted.length, N / 3, 'the node that died had accepted a third of the jobs');
      // Its jobs that had not ended were adopted by the others and ran there (and some it had queued may have gone to
      // nodes whose workers waited, before it died); the ones it had ended stay its rows.
      const adopted = accepted.filter((r) => r.owner !== victimId);
      assert.ok(adopted.length > 0, 'jobs of the dead node were adopted');
      assert.match(first.output() + third.output(), /adopted \d+ jobs of lost nodes/);
      // Through a surviving node, jobs the dead node accepted answer with their one result, adopted or ended before.
      for (const r of [adopted[0], accepted.find((x) => x.owner === victimId)].filter((x) => x !== undefined)) {
        const j = (await call('GET', `${on(third, eps.rec.url)}/status/${r.id}`)).json as JobJson;
        assert.equal(j.status, 'COMPLETED');
        assert.deepEqual(j.output, JSON.parse(r.output));
      }
    } finally {
      await db.end();
    }
    const runs = fs.readFileSync(marker, 'utf8').trim().split('\n');
    assert.deepEqual([...new Set(runs)].sort(), [...tags].sort(), 'every job ran at least once');
    const nodesNow = await cp.platformNodes();
    assert.deepEqual(nodesNow.nodes.map((n) => n.state).sort(), ['alive', 'alive', 'lost']);
  });
});

test("a node listening on every interface is reached at its machine's first non-loopback address unless --node-url says otherwise", () => {
  const addr = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
    ({ address, family, internal, netmask: '', mac: '', cidr: null }) as os.NetworkInterfaceInfo;
  const machine = { lo: [addr('127.0.0.1', 'IPv4', true), addr('::1', 'IPv6', true)], eth0: [addr('fe80::1', 'IPv6'), addr('10.0.0.5', 'IPv4')] };
  assert.equal(defaultNodeUrl('0.0.0.0', 7450, machine), 'http://10.0.0.5:7450');
  assert.equal(defaultNodeUrl('::', 7450, { lo: machine.lo, eth0: [addr('fe80::1', 'IPv6'), addr('2001:db8::5', 'IPv6')] }), 'http://[2001:db8::5]:7450');
  assert.equal(defaultNodeUrl('0.0.0.0', 7450, { lo: machine.lo }), 'http://127.0.0.1:7450', 'a machine of loopback only: its nodes are all on it');
  assert.equal(defaultNodeUrl('10.1.2.3', 7450, machine), 'http://10.1.2.3:7450', 'a listening address is itself');
});
