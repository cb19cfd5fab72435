// What a user reads through one node of a cluster is the whole service's (issue #11): worker logs hold the lines of
// every node's workers in time order, follow (`wait`) through one node wakes for a line printed on another, a cursor
// from one node's answer works on any node, a node that does not answer is named in the answer (partial) rather than
// hanging it; GraphQL `health` through any node has the figures of REST `/health`. Real PostgreSQL (a cluster of the
// test's own), three real nodes in this process, real Python workers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import type { EndpointHealth } from '../../engine/src/protocol/controlPlane';
import type { WorkerLogPage } from '../../engine/src/protocol/logs';
import { buildTestArtifact } from '../helpers/artifact';
import { runCli } from '../helpers/cli';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';
import { clusterBed } from '../helpers/clusterBed';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';

const { skip, tmp, platforms, postgres } = clusterBed('strato-multinode-reads-');

const TALK_PY = `
import os


def say(text="hi"):
    print("said", text)
    return {"pid": os.getpid()}
`;

type Page = WorkerLogPage;
const logsOf = async (node: TestPlatform, id: string, q = ''): Promise<Page> => {
  const r = await call('GET', `${node.url}/v2/${id}/logs${q}`);
  assert.equal(r.status, 200, r.text);
  return r.json as Page;
};
const said = (p: Page) => p.lines.filter((l) => l.text.startsWith('said ')).map((l) => l.text);
/** The lines a node's own log file holds (what it alone could answer). */
const ownLog = (node: TestPlatform, id: string) => {
  try {
    return fs.readFileSync(path.join(node.dataDir, 'logs', `${id}.log`), 'utf8');
  } catch {
    return '';
  }
};
const runOn = async (node: TestPlatform, id: string, text: string) => {
  const r = await call('POST', `${node.url}/v2/${id}/runsync`, { body: { input: { text } } });
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /"status":"COMPLETED"/);
};

describe('reads through one node of three', { skip: skip ?? false }, () => {
  test('worker logs through any node: the lines of every node, in time order; follow, cursors and a silent node', async () => {
    const database = await postgres().createDatabase();
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database })));
    platforms.push(...nodes);
    const [a, b, c] = nodes;
    // No worker until a job comes: jobs through A and B start workers there; C, which no job reaches, runs none.
    const art = await buildTestArtifact({ 'talk.py': TALK_PY }, [{ name: 'talk', file: 'talk.py', fn: 'say', workers: [0, 1] }]);
    const id = (await deploy(a.cp, art, { app: 'talky' })).talk.id;
    await runOn(a, id, 'one');
    await runOn(b, id, 'two');

    const tail = await waitUntil('both lines through C', async () => {
      const p = await logsOf(c, id, '?tail=10000');
      return said(p).includes('said one') && said(p).includes('said two') ? p : null;
    });
    assert.ok(!/said (one|two)/.test(ownLog(c, id)), 'C ran neither job: the lines came from the other nodes');
    const times = tail.lines.map((l) => l.time);
    assert.deepEqual(times, [...times].sort(), 'the lines of all nodes in time order');
    assert.equal(tail.partial, undefined);
    assert.match(tail.cursor, /^n[0-9a-z]{10}:\d+(,n[0-9a-z]{10}:\d+){2}$/, 'the cursor names each node');
    for (const n of nodes) assert.ok(tail.cursor.includes(`${n.platform.instanceId}:`), tail.cursor);
    const two = await logsOf(a, id, '?tail=2');
    assert.deepEqual(two.lines, tail.lines.slice(-2), 'a tail is the newest lines of the whole service');
    assert.equal(two.truncated, true);

    // Follow through C wakes for a line printed on another node, long before its wait ends.
    const t0 = Date.now();
    const waiting = logsOf(c, id, `?since=${encodeURIComponent(tail.cursor)}&wait=20000`);
    await new Promise((r) => setTimeout(r, 300));
    await runOn(a, id, 'three');
    const woke = await waiting;
    assert.ok(Date.now() - t0 < 15_000, `answered after ${Date.now() - t0} ms`);
    assert.deepEqual(said(woke), ['said three'], JSON.stringify(woke));
    assert.ok(!ownLog(c, id).includes('said three'), 'printed on another node than the one that answered');

    // The cursor of C's answer, used on A and on B: only the lines after it.
    await runOn(b, id, 'four');
    for (const n of [a, b]) {
      const next = await waitUntil(`the new line through ${n.platform.instanceId}`, async () => {
        const p = await logsOf(n, id, `?since=${encodeURIComponent(woke.cursor)}`);
        return said(p).includes('said four') ? p : null;
      });
      assert.deepEqual(said(next), ['said four'], JSON.stringify(next));
      assert.deepEqual(said(await logsOf(c, id, `?since=${encodeURIComponent(next.cursor)}`)), [], 'and nothing again after its own cursor');
    }
    // `strato logs` through C, as a user runs it: the lines of the other nodes' workers.
    const project = path.join(tmp, 'talky');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'pyproject.toml'), '[project]\nname = "talky"\nversion = "0.1.0"\n');
    const cli = (node: TestPlatform) =>
      runCli(['logs', 'talk', '--tail', '10000'], { cwd: project, env: { STRATO_API_URL: node.url, STRATO_API_KEY: node.key } });
    const printed = await cli(c);
    assert.equal(printed.code, 0, printed.stderr);
    for (const text of ['one', 'two', 'three', 'four']) assert.match(printed.stdout, new RegExp(`w-\\S+ said ${text}$`, 'm'));
    const bad = await call('GET', `${a.url}/v2/${id}/logs?since=n123:x`);
    assert.equal(bad.status, 400);
    assert.match((bad.json as { error: string }).error, /since must be the cursor of a previous answer/);

    // A live node that does not answer (registered, its heartbeat fresh, its socket silent) is named, within the
    // bound of a call between nodes, and the others' lines are answered; a follow read is not held by it either.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    const ghost = 'nzzzzzzzzzz';
    try {
      const now = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
      const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
      await db.query(`insert into nodes (id, url, started_at, heartbeat_at) values ($1, $2, ${now}, ${now})`, [ghost, url]);
      const beat = () => db.query(`update nodes set heartbeat_at = ${now} where id = $1`, [ghost]);
      const t1 = Date.now();
      const partial = await waitUntil(
        'a read that names the silent node',
        async () => {
          await db.query(`update nodes set heartbeat_at = ${now} where id = $1`, [ghost]);
          const p = await logsOf(a, id, '?tail=10000');
          return p.partial ? p : null;
        },
        30_000,
      );
      assert.deepEqual(
        partial.partial!.map((m) => [m.node, m.url]),
        [[ghost, url]],
      );
      assert.ok(said(partial).includes('said four'), 'the lines of the nodes that answered');
      await beat();
      const warned = await cli(a);
      assert.equal(warned.code, 0, warned.stderr);
      assert.match(warned.stdout, /said four/);
      assert.match(warned.stderr, new RegExp(`warning: lines of the workers on node ${ghost} at ${url} \\(.*\\) are missing`));
      await beat();
      const follow = await logsOf(b, id, `?since=${encodeURIComponent(partial.cursor)}&wait=1000`);
      assert.deepEqual(follow.lines, []);
      assert.equal(follow.partial?.[0]?.node, ghost);
      assert.ok(Date.now() - t1 < 25_000, `answered in ${Date.now() - t1} ms`);
    } finally {
      await db.query('delete from nodes where id = $1', [ghost]);
      await db.end();
      silent.close();
    }
  });

  test('GraphQL health through any node has the figures of REST /health: the whole service', async () => {
    const database = await postgres().createDatabase();
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database })));
    platforms.push(...nodes);
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY, 'broken.py': 'import not_a_module_that_exists\n\n\ndef f():\n    pass\n' }, [
      queueSpec('slow', 'sleep', { workers: [1, 1], maxConcurrency: 1 }),
      { name: 'broken', file: 'broken.py', fn: 'f', workers: [0, 1] },
    ]);
    const eps = await deploy(nodes[0].cp, art, { app: 'healthy' });
    const ep = eps.slow;
    const environmentId = (await nodes[0].cp.findApp('healthy'))!.environments[0].id;
    type Rest = { jobs: Record<string, number>; workers: Record<string, number> };
    const rest = async (n: TestPlatform) => (await call('GET', `${n.url}/v2/${ep.id}/health`)).json as Rest;
    await waitUntil('a worker ready', async () => (await rest(nodes[0])).workers.idle >= 1);
    // Two jobs through each node: each runs a while, so the figures hold still for the comparison.
    for (const n of [...nodes, ...nodes]) {
      const r = await call('POST', `${n.url}/v2/${ep.id}/run`, { body: { input: { seconds: 4 } } });
      assert.equal(r.status, 200, r.text);
    }
    for (const n of nodes) {
      const [graph, byEnv] = await waitUntil(`the same figures through ${n.platform.instanceId}`, async () => {
        const h = await rest(n);
        const g = await n.cp.endpointHealth(ep.id);
        const e = (await n.cp.environmentHealth(environmentId)).get(ep.id);
        const same = (x: EndpointHealth | null | undefined) =>
          x !== null &&
          x !== undefined &&
          x.idle === h.workers.idle &&
          x.running === h.workers.running &&
          x.initializing === h.workers.initializing &&
          x.inQueue === h.jobs.inQueue &&
          x.inProgress === h.jobs.inProgress;
        return same(g) && same(e) ? [g!, e!] : null;
      });
      assert.equal(graph.inQueue + graph.inProgress, 6, `every node's jobs, not this node's: ${JSON.stringify(graph)}`);
      assert.deepEqual(byEnv, graph, 'the environment listing (several endpoints in one call) says the same');
    }

    // The machines of every node, through any node: `strato platform status` and GraphQL.
    const status = await runCli(['platform', 'status'], { cwd: tmp, env: { STRATO_API_URL: nodes[2].url, STRATO_API_KEY: nodes[2].key } });
    assert.equal(status.code, 0, status.stderr);
    for (const n of nodes) assert.match(status.stdout, new RegExp(`\\(node ${n.platform.instanceId}\\)`), status.stdout);
    const listed = await nodes[1].cp.query<{ platform: { hosts: Array<{ node: string; local: boolean }> } }>('{ platform { hosts { node local } } }');
    assert.deepEqual(listed.platform.hosts.map((h) => `${h.node} ${h.local}`).sort(), nodes.map((n) => `${n.platform.instanceId} true`).sort());

    // Why workers cannot start, through a node that started none: the error of the node that tried, named.
    const [a, , c] = nodes;
    await call('POST', `${a.url}/v2/${eps.broken.id}/run`, { body: { input: {} } });
    const seen = await waitUntil('the error through C', async () => (await c.cp.endpointHealth(eps.broken.id))?.lastError ?? null, 30_000);
    assert.match(seen, new RegExp(`^on node ${a.platform.instanceId}: .*not_a_module_that_exists`));
  });

  test("a lost node's ended jobs read through a node count there from then on, and out again when they expire: /health never below zero", async () => {
    const database = await postgres().createDatabase();
    const a = await startTestPlatform({ database, nodeLostMs: 1000 });
    platforms.push(a);
    const ep = (await deploy(a.cp, await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('echo', 'echo', { workers: [0, 1] })]), { app: 'ghosts' }))
      .echo;
    const completed = async () => ((await call('GET', `${a.url}/v2/${ep.id}/health`)).json as { jobs: { completed: number } }).jobs.completed;
    const done = await call('POST', `${a.url}/v2/${ep.id}/runsync`, { body: { input: { n: 1 } } });
    assert.equal(done.status, 200, done.text);
    const own = (done.json as { id: string }).id;
    // Two jobs a node that is gone completed (its rows copied from this node's: the node never registered here, as one
    // forgotten after a crash).
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    const ghosts = ['g1', 'g2'].map((g) => `${own.split('-').slice(0, -1).join('-')}${g}-ghost`);
    try {
      await waitUntil('the job row', async () => (await db.query('select 1 from jobs where id = $1', [own])).rowCount === 1);
      for (const id of ghosts) {
        await db.query('create temp table t as select * from jobs where id = $1', [own]);
        await db.query(`update t set id = $1, owner = 'ghost'`, [id]);
        await db.query('insert into jobs select * from t');
        await db.query('drop table t');
      }
      assert.equal(await completed(), 1);
      for (const id of ghosts) {
        const r = await call('GET', `${a.url}/v2/${ep.id}/status/${id}?ttl=1000`);
        assert.equal(r.status, 200, r.text);
        assert.equal((r.json as { status: string }).status, 'COMPLETED');
      }
      assert.equal(await completed(), 3, "the lost node's jobs count where they were read");
      await waitUntil('the expired rows deleted', async () => (await db.query('select 1 from jobs where id = any($1)', [ghosts])).rowCount === 0, 20_000);
      assert.equal(await completed(), 1, 'counted out as they expired, and no further');
    } finally {
      await db.end();
    }
  });
});
