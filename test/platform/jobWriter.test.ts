// The write-behind group commit (store/jobWriter.ts) against recording stores, no database: a failed commit retried,
// the next commit started as soon as the one in flight ends, and the three speeds of commits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Job } from '../../engine/src/platform/jobs/job';
import { JobWriter } from '../../engine/src/platform/store/jobWriter';
import type { JobBatch, PlatformStore } from '../../engine/src/platform/store/types';

test('a failed commit rejects its waiters and the jobs are written by the next one', async () => {
  const rows: JobBatch[] = [];
  let fail = true;
  const flaky = {
    writeJobs: async (b: JobBatch) => {
      if (fail) {
        fail = false;
        throw new Error('disk full');
      }
      rows.push(b);
    },
  } as unknown as PlatformStore;
  const errors: string[] = [];
  const writer = new JobWriter(flaky, { eagerMs: 1, lazyMs: 1 }, (e) => errors.push(e.message));
  const j = new Job('a', 'ep', 'run', '{}', 1, 1);
  writer.changed(j);
  await assert.rejects(writer.durable(), /disk full/);
  await writer.flush();
  assert.deepEqual(errors, ['disk full']);
  assert.equal(rows.length, 1);
  assert.deepEqual(
    rows[0].inserts.map((r) => r.id),
    ['a'],
  );
  assert.equal(j.storeState, 'stored');
});

test('a commit that someone waits for starts as soon as the one in flight ends, not after a timer', async () => {
  const calls: string[][] = [];
  const ends: Array<() => void> = [];
  const store = {
    writeJobs: (b: JobBatch) => {
      calls.push(b.inserts.map((r) => r.id));
      return new Promise<void>((r) => ends.push(r));
    },
  } as unknown as PlatformStore;
  const writer = new JobWriter(store, { eagerMs: 1, lazyMs: 50 }, (e) => assert.fail(e));
  writer.changed(new Job('a', 'ep', 'run', '{}', 1, 1));
  const first = writer.durable();
  while (calls.length === 0) await new Promise((r) => setTimeout(r, 1));
  writer.changed(new Job('b', 'ep', 'run', '{}', 1, 1)); // a /run that arrives during the commit of `a`
  const second = writer.durable();
  // The commit of `a` ends in a timer callback; a timer of 0 ms set then fires in the loop's next turn, after the
  // commit of `b` has started (a commit scheduled with setTimeout(0) would wait for that turn too, and come after it).
  const seenByTimer = await new Promise<number>((resolve) =>
    setTimeout(() => {
      ends[0]();
      setTimeout(() => resolve(calls.length), 0);
    }, 1),
  );
  assert.equal(seenByTimer, 2, 'the commit of b had started');
  ends[1]();
  await Promise.all([first, second]);
  assert.deepEqual(calls, [['a'], ['b']]);
});

test('running and answered /runsync jobs are committed together after syncMs; any other change takes them along', async () => {
  const commits: Array<{ at: number; ids: string[] }> = [];
  const recording = {
    writeJobs: async (b: JobBatch) => void commits.push({ at: Date.now(), ids: [...b.inserts, ...b.updates].map((r) => r.id) }),
  } as unknown as PlatformStore;
  const writer = new JobWriter(recording, { eagerMs: 1, lazyMs: 5, syncMs: 300 }, (e) => assert.fail(e));
  const answered = (id: string) => Object.assign(new Job(id, 'ep', 'runsync', '{}', 1, 60_000), { status: 'COMPLETED', output: '{}' });
  const started = Date.now();
  const first = ['s1', 's2', 's3'].map(answered);
  for (const j of first) writer.changed(j);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(commits.length, 0, 'answered jobs wait beyond lazyMs');
  assert.ok(
    first.every((j) => writer.pending(j) && j.storeState === 'new'),
    'they are pending, in memory',
  );
  await new Promise((r) => setTimeout(r, 350));
  assert.deepEqual(
    commits.map((c) => c.ids),
    [['s1', 's2', 's3']],
    'one commit took them all once syncMs passed',
  );
  assert.ok(commits[0].at - started >= 290, `committed after ${commits[0].at - started} ms`);

  // A queued /runsync job (another node may take it over once durable) waits lazyMs, and takes the answered one along;
  // a running one stays out of that commit (it is about to end) and is written once, ended, after syncMs.
  const running = Object.assign(new Job('s6', 'ep', 'runsync', '{}', 1, 60_000), { status: 'IN_PROGRESS' });
  writer.changed(running);
  writer.changed(answered('s4'));
  const queued = new Job('s5', 'ep', 'runsync', '{}', 1, 60_000);
  writer.changed(queued);
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(
    commits.slice(1).map((c) => c.ids),
    [['s4', 's5']],
  );
  Object.assign(running, { status: 'COMPLETED', output: '{}' });
  writer.changed(running);
  // Once stored a job is not 'new': its next state is committed within lazyMs.
  Object.assign(queued, { status: 'IN_PROGRESS' });
  writer.changed(queued);
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(
    commits.slice(2).map((c) => [...c.ids].sort()),
    [['s5', 's6']],
    'the ended s6 went along with the change of s5',
  );
  assert.equal(running.storeState, 'stored');
  // Held for its syncMs, then written once.
  const slow = Object.assign(new Job('s8', 'ep', 'runsync', '{}', 1, 60_000), { status: 'IN_PROGRESS' });
  writer.changed(slow);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(commits.length, 3);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(
    commits.slice(3).map((c) => c.ids),
    [['s8']],
  );
  // Shutdown writes what waits.
  writer.changed(answered('s7'));
  await writer.close();
  assert.deepEqual(
    commits.slice(4).map((c) => c.ids),
    [['s7']],
  );
});
