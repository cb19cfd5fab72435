// The job store without HTTP: PGlite data dirs made from the pre-initialised template, group commits of the
// write-behind writer (many jobs, few statements), rows read back after a reopen, worker slot claims racing a
// release, and the small pure pieces (key forms, chunk splitting). The writer alone: jobWriter.test.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { presentedKey } from '../../engine/src/platform/auth';
import { KeyRing } from '../../engine/src/platform/controlPlane/keys';
import { ManualClock, systemClock } from '../../engine/src/platform/clock';
import { EndedJobCache } from '../../engine/src/platform/jobs/endedJobCache';
import { JobEngine } from '../../engine/src/platform/jobs/jobEngine';
import { JobExpiry, SWEEP_BATCH } from '../../engine/src/platform/jobs/jobExpiry';
import { Job } from '../../engine/src/platform/jobs/job';
import { splitText } from '../../engine/src/platform/jobs/streamChunks';
import { JobWriter } from '../../engine/src/platform/store/jobWriter';
import { openPglite } from '../../engine/src/platform/store/pglite';
import { SqlStore, VACUUM_AFTER_DELETED_ROWS } from '../../engine/src/platform/store/sqlStore';
import { Artifacts } from '../../engine/src/platform/controlPlane/artifacts';
import { auditRow } from '../../engine/src/platform/controlPlane/audit';
import { platformLayout } from '../../engine/src/protocol/layout';
import { WorkerSlots } from '../../engine/src/platform/workers/slots';
import { MissingBuild } from '../../engine/src/platform/store/types';
import { TEMPLATE_DIR } from '../helpers/platform';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-store-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const open = async (dir: string) => SqlStore.open(await openPglite(dir, { templateDir: TEMPLATE_DIR }));

test('jobs written through group commits are read back after a reopen', async () => {
  const dir = path.join(tmp, 'db1');
  let store = await open(dir);
  assert.ok(fs.existsSync(path.join(TEMPLATE_DIR, 'PG_VERSION')), 'the template exists for the next data dirs');
  const writer = new JobWriter(store, { eagerMs: 2, lazyMs: 20 }, (e) => assert.fail(e));
  const jobs = Array.from({ length: 500 }, (_, i) => new Job(`job-${i}`, 'ep1', 'run', JSON.stringify({ i }), 1000 + i, 60_000));
  for (const j of jobs) writer.changed(j);
  await writer.durable();
  assert.ok(writer.stats.flushes <= 3, `500 jobs took ${writer.stats.flushes} commits`);
  for (const j of jobs.slice(0, 100)) {
    j.status = 'COMPLETED';
    j.output = JSON.stringify({ out: j.id });
    j.endedAt = 5000;
    writer.changed(j);
  }
  for (const j of jobs.slice(100, 150)) writer.removed(j);
  await writer.close();
  await store.close();

  store = await open(dir);
  const live = await store.loadLiveJobs();
  assert.equal(live.length, 350);
  const byId = new Map(live.map((r) => [r.id, r]));
  assert.equal(byId.get('job-300')?.status, 'IN_QUEUE');
  assert.equal(byId.get('job-300')?.input, '{"i":300}');
  // Ended jobs are read one by one, and counted.
  assert.equal((await store.getJob('job-5'))?.status, 'COMPLETED');
  assert.equal((await store.getJob('job-5'))?.output, '{"out":"job-5"}');
  assert.equal(await store.getJob('job-120'), undefined);
  assert.deepEqual(await store.countEndedJobs(), [{ endpoint_id: 'ep1', status: 'COMPLETED', jobs: 100, retries: 0 }]);
  await store.close();
});

test('a worker slot claim that runs while the slot is released asks again, rather than wait SLOT_RETRY_MS', async () => {
  const store = await open(path.join(tmp, 'slots'));
  try {
    const slots = new WorkerSlots({ store, log: (l) => assert.fail(l) });
    assert.equal(await slots.claim('ep1', 1, 'w1'), 0);
    slots.settled('w1');
    // The next request's claim is under way while the worker that held the one slot exits (an idle stop).
    const claiming = slots.claim('ep1', 1, 'w2');
    slots.release('ep1', 'w1');
    assert.equal(await claiming, 0, 'the claim found the slot once it was released');
    assert.equal(slots.knownFull('ep1', 1), false);
    // With no release meanwhile, every slot held is full, and known to be for a while (no statement per request).
    assert.equal(await slots.claim('ep1', 1, 'w3'), null);
    assert.equal(slots.knownFull('ep1', 1), true);
  } finally {
    await store.close();
  }
});

test('expired ended jobs are deleted, except those named to keep; jobs that have not ended never are', async () => {
  const store = await open(path.join(tmp, 'db-expiry'));
  const writer = new JobWriter(store, { eagerMs: 2, lazyMs: 20 }, (e) => assert.fail(e));
  const jobs = Array.from({ length: 4 }, (_, i) => new Job(`e-${i}`, 'ep', 'run', '{}', 1000, 60_000));
  for (const [i, j] of jobs.entries()) {
    if (i < 3) j.status = 'COMPLETED';
    j.expiresAt = 2000; // the queued one (e-3) has a ttl that ran out: memory removes it, not this sweep
    j.chunks = ['{"output":1,"metrics":{"stream_index":0}}', '{"output":2,"metrics":{"stream_index":1}}'];
    writer.changed(j);
  }
  await writer.durable();
  assert.equal((await store.getJob('e-0'))?.stream, '[{"output":1,"metrics":{"stream_index":0}},{"output":2,"metrics":{"stream_index":1}}]');
  assert.equal((await store.getJob('e-3'))?.stream, null, 'the chunks of a job that has not ended are not stored');
  assert.deepEqual(await store.deleteExpiredJobs(1999, []), []);
  const gone = await store.deleteExpiredJobs(2000, ['e-1']);
  assert.deepEqual(gone.map((r) => r.id).sort(), ['e-0', 'e-2']);
  assert.deepEqual(gone[0], { id: gone[0].id, endpoint_id: 'ep', status: 'COMPLETED', retries: 0, owner: 'u1' });
  assert.ok(await store.getJob('e-1'));
  assert.ok(await store.getJob('e-3'));
  await writer.close();
  await store.close();
});

test('the expiry sweep deletes in batches, and a commit that someone waits for goes between two', async () => {
  const store = await open(path.join(tmp, 'db-sweep'));
  const writer = new JobWriter(store, { eagerMs: 1, lazyMs: 1 }, (e) => assert.fail(e));
  const expired = Array.from({ length: 2 * SWEEP_BATCH + 200 }, (_, i) => {
    const j = new Job(`x-${i}`, 'ep', 'run', '{}', 1000, 60_000);
    j.status = 'COMPLETED';
    j.endedAt = 1500;
    j.expiresAt = 2000;
    return j;
  });
  await store.writeJobs({ inserts: expired.map((j) => j.toRow()), updates: [], deletes: [] });
  const calls: string[] = [];
  const fresh = new Job('fresh', 'ep', 'run', '{}', 3000, 60_000);
  let waited: Promise<void> | undefined;
  const watched = {
    getJob: (id: string) => store.getJob(id),
    getJobPlace: (id: string) => store.getJobPlace(id),
    deleteExpiredJobs: async (now: number, keep: string[], limit?: number) => {
      calls.push(`delete ${limit}`);
      if (!waited) {
        // A /run arrives while the first batch is deleted: its commit must not wait for the whole sweep.
        writer.changed(fresh);
        waited = writer.durable().then(() => void calls.push('commit'));
      }
      return store.deleteExpiredJobs(now, keep, limit);
    },
  };
  const clock = new ManualClock(2500);
  const engine = new JobEngine({
    clock,
    instanceId: 'u1',
    writer,
    store: watched,
    retention: { runMs: 1000, runsyncMs: 1000, runsyncWaitMs: 1000 },
    endedJobCacheBytes: 1 << 20,
    maxQueuedPerEndpoint: 10,
    hasEndpoint: () => true,
    onDemand: () => undefined,
    onWorkerFreed: () => undefined,
  });
  const expiry = new JobExpiry({ engine, writer, store: watched, clock, instanceId: 'u1' });
  assert.equal(await expiry.sweepStore(), expired.length);
  await waited;
  assert.deepEqual(calls, [`delete ${SWEEP_BATCH}`, 'commit', `delete ${SWEEP_BATCH}`, `delete ${SWEEP_BATCH}`]);
  assert.equal(await store.getJob('x-0'), undefined);
  assert.equal(await store.getJob(`x-${expired.length - 1}`), undefined);
  assert.equal((await store.getJob('fresh'))?.status, 'IN_QUEUE');
  await writer.close();
  await store.close();
});

test('the embedded database vacuums its jobs table once enough expired rows were deleted: their space is used again', async () => {
  const db = await openPglite(path.join(tmp, 'db-vacuum'), { templateDir: TEMPLATE_DIR });
  const store = await SqlStore.open(db);
  try {
    const tableBytes = async () => Number((await db.query<{ n: string }>(`select pg_relation_size('jobs')::text as n`))[0].n);
    const comeAndExpire = async (round: number) => {
      const rows = Array.from({ length: VACUUM_AFTER_DELETED_ROWS }, (_, i) => {
        const j = new Job(`v${round}-${i}`, 'ep', 'run', '{"i":1}', 1000, 60_000);
        j.status = 'COMPLETED';
        j.endedAt = 1500;
        j.expiresAt = 2000;
        return j.toRow();
      });
      for (let i = 0; i < rows.length; i += 1000) await store.writeJobs({ inserts: rows.slice(i, i + 1000), updates: [], deletes: [] });
      assert.equal(await store.vacuumJobsIfDue(), false, 'nothing deleted yet: no vacuum');
      let deleted = 0;
      for (let gone = -1; gone !== 0; deleted += gone) gone = (await store.deleteExpiredJobs(3000, [], 5000)).length;
      assert.equal(deleted, rows.length);
    };
    await comeAndExpire(0);
    const grown = await tableBytes();
    assert.equal(await store.vacuumJobsIfDue(), true);
    assert.equal(await store.vacuumJobsIfDue(), false, 'a vacuum is due again only after as many rows more');
    for (let round = 1; round <= 2; round++) {
      await comeAndExpire(round);
      assert.equal(await store.vacuumJobsIfDue(), true);
    }
    // Without the vacuum every round added as much again (2.6 MB for 10,000 jobs).
    assert.ok((await tableBytes()) <= grown * 1.1, `the table grew from ${grown} to ${await tableBytes()} bytes`);
  } finally {
    await store.close();
  }
});

test('the cache of ended jobs keeps the most recently used within its bound; a job above it is not kept', () => {
  const job = (id: string, outputLength: number) =>
    Object.assign(new Job(id, 'ep', 'run', '{}', 1, 1), { status: 'COMPLETED', output: 'x'.repeat(outputLength) });
  const one = job('a', 0).memoryBytes();
  const cache = new EndedJobCache(3 * one);
  for (const id of ['a', 'b', 'c']) cache.put(job(id, 0));
  assert.ok(cache.get('a'), 'a is now the most recently used');
  cache.put(job('d', 0));
  assert.deepEqual(
    ['a', 'b', 'c', 'd'].map((id) => !!cache.get(id)),
    [true, false, true, true],
  );
  assert.equal(cache.bytes, 3 * one);
  cache.put(job('huge', 3 * one));
  assert.equal(cache.get('huge'), undefined);
  assert.equal(cache.count, 3);
  cache.dropEndpoint('ep');
  assert.deepEqual([cache.count, cache.bytes], [0, 0]);
});

test('keys: Bearer and bare forms are read; anything else is refused', async () => {
  const req = (authorization?: string) => ({ headers: { authorization } }) as unknown as IncomingMessage;
  assert.equal(presentedKey(req('Bearer abc')), 'abc');
  assert.equal(presentedKey(req('bearer abc')), 'abc');
  assert.equal(presentedKey(req('abc')), 'abc');
  assert.equal(presentedKey(req('Basic abc')), null);
  assert.equal(presentedKey(req()), null);
  const store = await open(path.join(tmp, 'keys'));
  const ring = await KeyRing.load('secret', store, systemClock, (l) => assert.fail(l));
  const accepted = (authorization?: string) => 'principal' in ring.authenticate(req(authorization));
  assert.equal(accepted('Bearer secret'), true);
  assert.equal(accepted('secret'), true);
  assert.equal(accepted('Bearer secre'), false);
  assert.equal(accepted(), false);
  await ring.close();
  await store.close();
});

test('chunk text is split within the byte budget without breaking surrogate pairs', () => {
  const text = '😀'.repeat(5000) + 'é'.repeat(3000) + '\u0001'.repeat(2000);
  const pieces = splitText(text, 4096);
  assert.equal(pieces.join(''), text);
  for (const p of pieces) {
    assert.ok(Buffer.byteLength(JSON.stringify(p)) <= 4096);
    assert.ok(!/^[\udc00-\udfff]/.test(p), 'a piece starts inside a surrogate pair');
  }
});

test('old builds are deleted only while nothing names them; a deploy of one deleted meanwhile is refused', async () => {
  const store = await open(path.join(tmp, 'builds'));
  const by = { id: 'k1', name: 'admin', scope: 'admin', apps: null } as const;
  const audit = (op: string) => auditRow(by, op, { type: 'app', id: 'a1', name: 'a', app: 'a' }, 1);
  await store.insertApp({ id: 'a1', name: 'a', created_at: 1 }, audit('createApp'));
  await store.insertEnvironment({ id: 'e1', app_id: 'a1', name: 'prod', created_at: 1, active_build_id: null }, audit('createEnvironment'));
  for (const id of ['b1', 'b2', 'b3']) {
    await store.insertBuild({ id, app_id: 'a1', created_at: 1, size: 1, sha256: id, manifest: '{}' }, audit('finalizeBuild'));
    await store.insertArchivePiece(id, 0, Buffer.from(id));
  }
  await store.setActiveBuild('e1', 'b1', audit('deployBuild'));
  await store.saveEndpoint(
    { id: 'ep1', app_id: 'a1', environment_id: 'e1', name: 'x', build_id: 'b2', config: '{}', created_at: 1, updated_at: 1 },
    audit('saveEndpoint'),
  );
  // Asked to delete all three (a node whose view was old): the deployed one and the one an endpoint runs stay.
  const deleted = await store.pruneBuilds('a1', ['b1', 'b2', 'b3'], (gone) => (gone.length ? audit('pruneBuilds') : null));
  assert.deepEqual(deleted, ['b3']);
  assert.deepEqual((await store.listBuilds()).map((b) => b.id).sort(), ['b1', 'b2']);
  assert.equal(await store.archivePieceCount('b3'), 0);
  assert.equal(await store.archivePieceCount('b1'), 1);
  // Nothing to delete: no audit entry.
  assert.deepEqual(await store.pruneBuilds('a1', ['b1'], (gone) => (gone.length ? audit('pruneBuilds') : null)), []);
  assert.equal((await store.listAudit({ limit: 100 })).filter((a) => a.operation === 'pruneBuilds').length, 1);
  await assert.rejects(store.setActiveBuild('e1', 'b3', audit('deployBuild')), (e: unknown) => e instanceof MissingBuild && e.buildId === 'b3');
  await assert.rejects(
    store.saveEndpoint(
      { id: 'ep1', app_id: 'a1', environment_id: 'e1', name: 'x', build_id: 'b3', config: '{}', created_at: 1, updated_at: 2 },
      audit('saveEndpoint'),
    ),
    MissingBuild,
  );
  assert.equal((await store.listEnvironments())[0].active_build_id, 'b1');
  await store.close();
});

test('the files of a deleted build that a worker still runs from stay until it has ended', () => {
  const layout = platformLayout(path.join(tmp, 'artifacts'));
  const artifacts = new Artifacts(layout);
  const running = new Set(['b1']);
  artifacts.inUse = (id) => running.has(id);
  for (const id of ['b1', 'b2']) {
    fs.mkdirSync(artifacts.buildDir(id), { recursive: true });
    fs.mkdirSync(layout.artifacts, { recursive: true });
    fs.writeFileSync(artifacts.archivePath(id), id);
  }
  artifacts.removeBuild('b1');
  artifacts.removeBuild('b2');
  assert.ok(fs.existsSync(artifacts.buildDir('b1')) && fs.existsSync(artifacts.archivePath('b1')), 'a running build lost its files');
  assert.ok(!fs.existsSync(artifacts.buildDir('b2')) && !fs.existsSync(artifacts.archivePath('b2')));
  artifacts.sweepRetired();
  assert.ok(fs.existsSync(artifacts.buildDir('b1')));
  running.delete('b1');
  artifacts.sweepRetired();
  assert.ok(!fs.existsSync(artifacts.buildDir('b1')) && !fs.existsSync(artifacts.archivePath('b1')));
});
