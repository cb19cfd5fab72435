// The platform on a real PostgreSQL server (issue #11): `--database postgres://...` keeps all state there through
// the same store interface as the embedded PGlite. The jobs-API, control-plane and load-balanced suites run again against it
// (conformance), on one node and on three nodes over one database with each request sent to the next node (as one
// service behind a load balancer), state survives a restart, a database outage answers 503 with a sentence and the service recovers by
// itself, and a bad URL is refused with a sentence. Each run makes its own cluster (Debian's postgresql).
import { after, before, test } from 'node:test';
import pg from 'pg';
import net from 'node:net';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Job } from '../../engine/src/platform/jobs/job';
import { startPlatform } from '../../engine/src/platform/platform';
import { openPostgres, redactDatabaseUrl } from '../../engine/src/platform/store/postgres';
import { SqlStore } from '../../engine/src/platform/store/sqlStore';
import { inlined } from '../../engine/src/platform/store/namedStatements';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, REPO, startTestPlatform, waitUntil } from '../helpers/platform';
import { postgresMissing, startPostgres, type TestPostgres } from '../helpers/postgres';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';

const skip = postgresMissing();
let pgServer: TestPostgres;

before(async () => {
  if (!skip) pgServer = await startPostgres();
});
after(() => pgServer?.stop());

/** Runs the jobs-API, control-plane, streaming, worker-log and load-balanced suites in a child runner with `env`; fails with their failures. */
async function conformance(env: Record<string, string>): Promise<void> {
  const files = [
    'test/platform/jobsApi.test.ts',
    'test/platform/controlPlane.test.ts',
    'test/platform/streaming.test.ts',
    'test/platform/logs.test.ts',
    'test/platform/loadBalanced.test.ts',
  ];
  const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...files], {
    cwd: REPO,
    // NODE_TEST_CONTEXT would make the inner runner report to this one instead of printing its summary.
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, ...env },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  const count = (what: string) => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(out)?.[1] ?? -1);
  assert.equal(count('fail'), 0, failures(out));
  assert.ok(count('pass') >= 30, `the suites ran (${count('pass')} passed)`);
  assert.equal(code, 0);
}

/** What the inner runner said of each failed test: its `not ok` line and the lines of its report after it. */
function failures(out: string): string {
  const lines = out.split('\n');
  const said = lines.flatMap((l, i) => (/^\s*not ok/.test(l) ? lines.slice(i, i + 40) : []));
  return said.join('\n').slice(0, 12000);
}

test('the jobs-API and control-plane suites pass with every platform on PostgreSQL', { skip: skip ?? false }, async () => {
  await conformance({ STRATO_TEST_DATABASE: pgServer.url() });
});

test('they pass with every platform three nodes on one database, each request to the next node', { skip: skip ?? false }, async () => {
  await conformance({ STRATO_TEST_DATABASE: pgServer.url(), STRATO_TEST_NODES: '3' });
});

test('state lives in the server: a restarted platform finds its apps, endpoints and ended jobs', { skip: skip ?? false }, async () => {
  const database = await pgServer.createDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-pg-platform-'));
  try {
    let tp = await startTestPlatform({ database, dataDir });
    const eps = await deploy(tp.cp, await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('echo', 'echo')]), { app: 'pgapp' });
    // A number JavaScript cannot hold travels as its JSON text through the PostgreSQL store too.
    const r = await call('POST', `${eps.echo.url}/runsync`, { raw: '{"input": {"n": 12345678901234567890}}' });
    assert.match(r.text, /"output":\{"echo":\{"n":12345678901234567890\}\}/);
    const job = await call('POST', `${eps.echo.url}/run`, { body: { input: { kept: true } } });
    const runId = (job.json as { id: string }).id;
    await waitUntil('the job', async () => ((await call('GET', `${eps.echo.url}/status/${runId}`)).json as { status: string }).status === 'COMPLETED');
    await tp.close();
    assert.equal(fs.existsSync(path.join(dataDir, 'db')), false, 'no embedded database was made');

    tp = await startTestPlatform({ database, dataDir });
    const app = await tp.cp.findApp('pgapp');
    assert.ok(app, 'the app is still there');
    const [ep] = await tp.cp.listEndpoints(app.environments[0].id);
    assert.equal(ep.id, eps.echo.id);
    const status = await call('GET', `${ep.url}/status/${runId}`);
    assert.match(status.text, /"output":\{"echo":\{"kept":true\}\}/);
    await tp.close();
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a database outage answers 503 with a sentence, and the service recovers by itself', { skip: skip ?? false }, async () => {
  const database = await pgServer.createDatabase();
  const tp = await startTestPlatform({ database });
  try {
    const eps = await deploy(
      tp.cp,
      await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('echo', 'echo', { workers: [1, 1] }), queueSpec('cold', 'echo', { workers: [0, 1] })]),
    );
    const health = async (url: string) => (await call('GET', `${url}/health`)).json as { jobs: Record<string, number> };
    await waitUntil('the warm worker', async () => (await call('POST', `${eps.echo.url}/runsync`, { body: { input: {} } })).status === 200, 60_000, 250);
    pgServer.pause();
    // The job was taken, but its row could not be stored and no worker had it yet: it is taken back, so that the
    // client, told 503, runs it once by retrying (before, it stayed queued, was stored on recovery and ran too).
    const down = await call('POST', `${eps.cold.url}/run`, { body: { input: { withdrawn: 1 } }, timeoutMs: 60_000 });
    assert.equal(down.status, 503, down.text);
    assert.match(down.text, /database/i);
    // While the database is known out of reach, a /runsync is refused at once too, not kept waiting for a job that
    // cannot be stored (where no worker could take it, the caller waited for the whole `wait`).
    const sync = await call('POST', `${eps.echo.url}/runsync`, { body: { input: {} }, timeoutMs: 60_000 });
    assert.equal(sync.status, 503, sync.text);
    assert.match(sync.text, /the platform's database is unavailable .*try again in a moment/);
    const cp = await call('POST', `${tp.url}/graphql`, { body: { query: 'mutation { createApp(name: "during-outage") { id } }' } });
    assert.match(cp.text, /database/i);
    pgServer.resume();
    const up = await waitUntil(
      'the service to recover',
      async () => {
        const r = await call('POST', `${eps.echo.url}/runsync`, { body: { input: { back: 1 } } });
        return r.status === 200 && (r.json as { status: string }).status === 'COMPLETED' ? r : null;
      },
      60_000,
      500,
    );
    assert.match(up.text, /"back":1/);
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual([(await health(eps.cold.url)).jobs.completed, (await health(eps.cold.url)).jobs.inQueue], [0, 0], 'the job answered 503 never ran');

    // A job a worker took at once when its row could not be stored runs anyway: it is answered as taken, not 503.
    pgServer.pause();
    const taken = await call('POST', `${eps.echo.url}/run`, { body: { input: { taken: 1 } }, timeoutMs: 60_000 });
    assert.equal(taken.status, 200, taken.text);
    pgServer.resume();
    const id = (taken.json as { id: string }).id;
    await waitUntil('the taken job to be recorded', async () => (await call('GET', `${eps.echo.url}/status/${id}`)).text.includes('"taken":1'), 60_000, 500);
  } finally {
    if (pgServer) pgServer.resume();
    await tp.close();
  }
});

test(
  'a database a newer Strato migrated is refused and left as it is; a user that may not create tables is told what to grant',
  { skip: skip ?? false },
  async () => {
    const database = await pgServer.createDatabase();
    await (await startTestPlatform({ database })).close();
    const sql = async (url: string, text: string) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return (await c.query(text)).rows;
      } finally {
        await c.end();
      }
    };
    await sql(database, `update meta set value = '99' where key = 'schema_version'`);
    await assert.rejects(startTestPlatform({ database }), /the database holds Strato's schema version 99, newer than this platform's \(\d+\): a newer release/);
    assert.deepEqual(await sql(database, `select value from meta where key = 'schema_version'`), [{ value: '99' }], 'the marker is not downgraded');

    const fresh = await pgServer.createDatabase();
    const role = `ro_${Math.random().toString(36).slice(2, 8)}`;
    await sql(fresh, `create role ${role} login; grant connect on database ${new URL(fresh).pathname.slice(1)} to ${role}`);
    // A start that fails once the database is open (its port taken) closes its connections: none are left behind.
    const busy = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => busy.once('listening', r));
    try {
      await assert.rejects(startTestPlatform({ database: fresh, port: (busy.address() as net.AddressInfo).port }), /in use/);
    } finally {
      busy.close();
    }
    const name = new URL(fresh).pathname.slice(1);
    await waitUntil(
      'no connection left',
      async () => (await sql(database, `select count(*)::int as n from pg_stat_activity where datname = '${name}'`))[0].n === 0,
      10_000,
      200,
    );
    // A user that may only connect: to a new database (it cannot create the tables), to one another user migrated.
    const empty = await pgServer.createDatabase();
    await sql(empty, `grant connect on database ${new URL(empty).pathname.slice(1)} to ${role}`);
    await assert.rejects(
      startTestPlatform({ database: empty.replace('postgres://strato@', `postgres://${role}@`) }),
      /the database user may not use or create Strato's tables \(permission denied for schema public\): start the platform as the user that owns them/,
    );
    await assert.rejects(
      startTestPlatform({ database: fresh.replace('postgres://strato@', `postgres://${role}@`) }),
      /the database user may not use or create Strato's tables \(permission denied for table meta\): .*GRANT CREATE ON SCHEMA public/,
    );
  },
);

test('a Unix-socket URL, as pg reads it (postgres://user@/db?host=/dir), is taken', { skip: skip ?? false }, async () => {
  const db = new URL(await pgServer.createDatabase()).pathname.slice(1);
  const { dir, port } = pgServer.socket;
  const tp = await startTestPlatform({ database: `postgres://strato:secretpw@/${db}?host=${dir}&port=${port}` });
  try {
    assert.match(tp.platform.instanceId, /^n[0-9a-z]{10}$/, 'a node of a PostgreSQL server');
    assert.ok(await tp.cp.createApp('over-a-socket'));
    assert.equal(redactDatabaseUrl(`postgres://strato:secretpw@/${db}?host=${dir}`), `postgres://strato:***@/${db}?host=${dir}`);
  } finally {
    await tp.close();
  }
});

test('a database that cannot be reached is refused at start with a sentence, its password hidden', { skip: skip ?? false }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-pg-bad-'));
  try {
    await assert.rejects(
      startPlatform({ dataDir, port: 0, writeStateFile: false, database: 'postgres://u:secretpw@127.0.0.1:1/x', log: () => {} }),
      (e: Error) => /cannot reach the database at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/x/.test(e.message) && !e.message.includes('secretpw'),
    );
    await assert.rejects(
      startPlatform({ dataDir, port: 0, writeStateFile: false, database: 'mysql://x', log: () => {} }),
      /UserError: --database must be a PostgreSQL URL/,
    );
    // Given in the environment, the error names the variable, not a flag that was not used.
    process.env.STRATO_DATABASE_URL = 'mysql://x';
    try {
      await assert.rejects(
        startPlatform({ dataDir, port: 0, writeStateFile: false, log: () => {} }),
        /UserError: STRATO_DATABASE_URL must be a PostgreSQL URL/,
      );
    } finally {
      delete process.env.STRATO_DATABASE_URL;
    }
    await assert.rejects(
      startPlatform({ dataDir, port: 0, writeStateFile: false, database: 'postgres://strato:s3cret@[::1', log: () => {} }),
      (e: Error) => /must be a PostgreSQL URL .* got one that cannot be parsed/.test(e.message) && !e.message.includes('s3cret'),
    );
    // A password given as a parameter, as pg also reads it: hidden too.
    await assert.rejects(
      startPlatform({ dataDir, port: 0, writeStateFile: false, database: 'postgres://127.0.0.1:1/x?user=u&password=TOPSECRET&sslmode=disable', log: () => {} }),
      (e: Error) =>
        /cannot reach the database at postgres:\/\/127\.0\.0\.1:1\/x\?user=u&password=\*\*\*&sslmode=disable:/.test(e.message) &&
        !e.message.includes('TOPSECRET'),
    );
    assert.equal(redactDatabaseUrl('postgres:///db?host=/run/pg&password=p%40ss&port=5'), 'postgres:///db?host=/run/pg&password=***&port=5');
    // An empty --database (an unset variable in a script) is not the embedded database in disguise.
    await assert.rejects(startPlatform({ dataDir, port: 0, writeStateFile: false, database: '', log: () => {} }), /UserError: --database is empty/);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a group commit looks its updated and deleted rows up by key: the jobs table is never read whole', { skip: skip ?? false }, async () => {
  const db = await openPostgres(await pgServer.createDatabase());
  const sent: string[] = [];
  const store = await SqlStore.open({
    ...db,
    exec: db.exec.bind(db),
    execNamed: (calls) => (sent.push(...calls.map(inlined)), db.execNamed(calls)),
    query: db.query.bind(db),
    transaction: db.transaction.bind(db),
    close: () => db.close(),
  });
  try {
    // A table of thousands of rows: joined to the JSON batch alone (guessed at 100 rows), the server read all of it for
    // every commit below about 25,000 rows (seen in bench/multinode.ts: 600 scans of the table in one run).
    const jobs = Array.from({ length: 5000 }, (_, i) => new Job(`job-${i}`, 'ep1', 'run', `{"i":${i}}`, 1000 + i, 60_000));
    for (let i = 0; i < jobs.length; i += 500) await store.writeJobs({ inserts: jobs.slice(i, i + 500).map((j) => j.toRow()), updates: [], deletes: [] });
    for (const j of jobs.slice(0, 40)) j.status = 'COMPLETED';
    sent.length = 0;
    await store.writeJobs({ inserts: [], updates: jobs.slice(0, 40).map((j) => j.toStateRow()), deletes: jobs.slice(40, 60).map((j) => j.id) });
    assert.equal(sent.length, 2);
    for (const statement of sent) {
      const plan = (await db.query<{ 'QUERY PLAN': string }>(`explain ${statement}`)).map((r) => r['QUERY PLAN']).join('\n');
      assert.doesNotMatch(plan, /Seq Scan on jobs/, `${statement.slice(0, 60)}...\n${plan}`);
    }
    assert.equal((await store.getJob('job-0'))?.status, 'COMPLETED');
    assert.equal(await store.getJob('job-50'), undefined);
    assert.equal((await store.getJob('job-70'))?.status, 'IN_QUEUE');
  } finally {
    await store.close();
  }
});
