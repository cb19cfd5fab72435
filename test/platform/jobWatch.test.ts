// What `/runsync`, `/stream` and the hand-off wait on (Job.watch, JobEngine.whenEnded), without a server: the call
// comes once, at the change that settles it or at the time limit, and a job's end is answered inside that end, before
// its worker is given the next job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../../engine/src/platform/clock';
import { Dispatcher } from '../../engine/src/platform/jobs/dispatch';
import { Job } from '../../engine/src/platform/jobs/job';
import { JobEngine } from '../../engine/src/platform/jobs/jobEngine';
import { JobWriter } from '../../engine/src/platform/store/jobWriter';
import type { PlatformStore } from '../../engine/src/platform/store/types';
import type { Worker } from '../../engine/src/platform/workers/worker';

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
  const store = { writeJobs: async () => undefined } as unknown as PlatformStore;
  const engine = new JobEngine({
    clock: systemClock,
    instanceId: 'u1',
    writer: new JobWriter(store, { eagerMs: 1, lazyMs: 1 }, () => undefined),
    store: { getJob: async () => undefined },
    retention: { runMs: 60_000, runsyncMs: 60_000, runsyncWaitMs: 60_000 },
    endedJobCacheBytes: 1 << 20,
    maxQueuedPerEndpoint: 10,
    hasEndpoint: () => true,
    onDemand: () => undefined,
    onWorkerFreed: () => order.push('worker freed'),
  });
  const dispatch = new Dispatcher(engine, { executionTimeoutMs: () => 60_000, streams: () => false, heartbeatMs: 1000, cancelGraceMs: 1000 });
  const worker = {
    id: 'w1',
    endpointId: 'ep',
    phase: 'ready',
    maxConcurrency: 1,
    jobs: new Set<Job>(),
    cancelRequested: new Map(),
    stderrTail: [],
  } as unknown as Worker;
  dispatch.register(worker);
  const job = engine.submit('ep', '{"x":1}', 'runsync', false)!;
  assert.deepEqual(dispatch.takeNow(worker, 1), [job]);

  engine.whenEnded(job, 1000, () => order.push(`answered ${job.status} ${job.output}`));
  assert.deepEqual(order, []);
  assert.equal(dispatch.complete(worker, job.id, '{"ok":true}', null), true);
  assert.deepEqual(order, ['answered COMPLETED {"ok":true}', 'worker freed']);
});
