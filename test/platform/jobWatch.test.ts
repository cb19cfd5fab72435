// What `/runsync`, `/stream` and the hand-off wait on (Job.watch, JobEngine.whenEnded), without a server: the call
// comes once, at the change that settles it or at the time limit, and a job's end is answered inside that end, before
// its worker is given the next job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Job } from '../../engine/src/platform/jobs/job';
import { engineWithWorker } from '../helpers/jobEngine';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('watch: called at once when settled, else once at the change that settles it, and never again', async () => {
  const job = new Job('a', 'ep', 'runsync', '{}', 1, 1000);
  const calls: string[] = [];
  job.watch(
    () => true,
    1000,
    () => calls.push('now'),
  );
  assert.deepEqual(calls, ['now']);

  job.watch(
    (j) => j.chunks.length > 0,
    1000,
    () => calls.push(`chunks ${job.chunks.length}`),
  );
  job.notify(); // a change that does not settle it
  assert.deepEqual(calls, ['now']);
  job.chunks.push('{"output":1}');
  job.notify();
  job.chunks.push('{"output":2}');
  job.notify();
  assert.deepEqual(calls, ['now', 'chunks 1']);
  await sleep(20);
  assert.deepEqual(calls, ['now', 'chunks 1'], 'its timer was cleared');
});

test('watch: the time limit calls it once, and a later change does not', async () => {
  const job = new Job('b', 'ep', 'runsync', '{}', 1, 1000);
  let calls = 0;
  job.watch(
    (j) => j.ended,
    15,
    () => calls++,
  );
  await sleep(40);
  assert.equal(calls, 1);
  job.status = 'COMPLETED';
  job.notify();
  assert.equal(calls, 1);
  job.watch(
    (j) => j.status === 'IN_PROGRESS',
    0,
    () => calls++,
  );
  assert.equal(calls, 2, 'no time left: called at once');
});

test("a job's end is answered inside it: before its worker is freed for the next job", () => {
  const order: string[] = [];
  const { engine, dispatch, worker } = engineWithWorker(() => order.push('worker freed'));
  const job = engine.submit('ep', '{"x":1}', 'runsync', false)!;
  assert.deepEqual(dispatch.takeNow(worker, 1), [job]);

  engine.whenEnded(job, 1000, () => order.push(`answered ${job.status} ${job.output}`));
  assert.deepEqual(order, []);
  assert.equal(dispatch.complete(worker, job.id, '{"ok":true}', null), true);
  assert.deepEqual(order, ['answered COMPLETED {"ok":true}', 'worker freed']);
});
