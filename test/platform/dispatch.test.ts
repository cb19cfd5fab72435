// Jobs that run again (a lost hand-over, a restart) do so a bounded number of times, and the error of one that is not
// run again says what happened: the job state machine without a server (test/helpers/jobEngine.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Job, MAX_ATTEMPTS } from '../../engine/src/platform/jobs/job';
import { engineWithWorker } from '../helpers/jobEngine';

test('a job whose hand-over is lost each time (never reported by its worker) fails after the bounded attempts, and the next job runs', () => {
  const { engine, dispatch, worker } = engineWithWorker();
  const poison = engine.submit('ep', '{"x":1}', 'run', false)!;
  const next = engine.submit('ep', '{"x":2}', 'run', false)!;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    assert.deepEqual(dispatch.takeNow(worker, 1), [poison], `attempt ${attempt} hands the same job first`);
    poison.handedAt = Date.now() - 60_000; // past the hand-over's grace
    for (let beat = 0; beat < 3; beat++) dispatch.heartbeat(worker, []);
    if (attempt < MAX_ATTEMPTS) assert.equal(poison.status, 'IN_QUEUE', 'run again');
  }
  assert.equal(poison.status, 'FAILED');
  assert.match(poison.error!, new RegExp(`handed to a worker ${MAX_ATTEMPTS} times and never reached its handler`));
  assert.match(poison.error!, /endpoint's logs/);
  assert.equal(worker.jobs.size, 0);
  assert.deepEqual(dispatch.takeNow(worker, 1), [next]);
});

test('a job reported by its heartbeats is never taken back, however long it runs', () => {
  const { engine, dispatch, worker } = engineWithWorker();
  const job = engine.submit('ep', '{}', 'run', false)!;
  dispatch.takeNow(worker, 1);
  job.handedAt = Date.now() - 60_000;
  for (let beat = 0; beat < 10; beat++) assert.deepEqual(dispatch.heartbeat(worker, [job.id]), { cancel: [], replace: null });
  assert.equal(job.status, 'IN_PROGRESS');
  assert.equal(job.attempts, 1);
});

test('after a restart, a job that was running runs again unless it was started the bounded number of times; its error counts them', () => {
  const { engine } = engineWithWorker();
  const row = (id: string, attempts: number) => {
    const job = new Job(id, 'ep', 'run', '{}', Date.now(), 60_000);
    job.status = 'IN_PROGRESS';
    job.startedAt = Date.now();
    job.attempts = attempts;
    return job.toRow();
  };
  assert.deepEqual(engine.adopt([row('again', MAX_ATTEMPTS - 1), row('over', MAX_ATTEMPTS)]), { queued: 1, rerun: 1, dropped: 0 });
  assert.equal(engine.jobs.get('again')!.status, 'IN_QUEUE');
  const over = engine.jobs.get('over')!;
  assert.equal(over.status, 'FAILED');
  assert.equal(over.error, `the job was started ${MAX_ATTEMPTS} times and did not end (the platform or its worker stopped while it ran); it is not run again`);
});
