// The scaling policy (workers/scaling.ts): how many workers an endpoint wants for the work on this node, by its scaler.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wantedWorkers, type ScalingState } from '../../engine/src/platform/workers/scaling';

const queue = { kind: 'QUEUE' as const, workersMax: 3, maxConcurrency: 2, scalerType: 'QUEUE_DELAY', scalerValue: 4 };
const state = (s: Partial<ScalingState> & { oldest?: number }): ScalingState => ({
  current: 0,
  work: 0,
  now: 100_000,
  lastScaleUpAt: 0,
  oldestQueuedAt: () => s.oldest,
  ...s,
});

test('no work wants no worker here, whatever the scaler', () => {
  assert.deepEqual(wantedWorkers(queue, state({ current: 2 })), { wanted: 0, scaledUp: false });
  assert.deepEqual(wantedWorkers({ ...queue, scalerType: 'REQUEST_COUNT' }, state({ current: 1 })), { wanted: 0, scaledUp: false });
});

test('REQUEST_COUNT (and a load-balanced endpoint) keeps one worker per scaler_value requests, up to workers.max', () => {
  const rc = { ...queue, scalerType: 'REQUEST_COUNT', scalerValue: 2 };
  assert.equal(wantedWorkers(rc, state({ work: 1 })).wanted, 1);
  assert.equal(wantedWorkers(rc, state({ work: 3 })).wanted, 2);
  assert.equal(wantedWorkers(rc, state({ work: 50 })).wanted, 3);
  assert.equal(wantedWorkers({ ...queue, kind: 'LOAD_BALANCED', scalerValue: 1 }, state({ work: 2 })).wanted, 2);
});

test('QUEUE_DELAY starts the first worker at once, then adds one when the oldest job waited past scaler_value seconds', () => {
  assert.deepEqual(wantedWorkers(queue, state({ work: 6 })), { wanted: 1, scaledUp: false }, 'the first at once');
  // Waited 3 s of 4: no second worker yet.
  assert.deepEqual(wantedWorkers(queue, state({ current: 1, work: 6, oldest: 97_000 })), { wanted: 1, scaledUp: false });
  // Waited 5 s: one more, and only one.
  assert.deepEqual(wantedWorkers(queue, state({ current: 1, work: 6, oldest: 95_000 })), { wanted: 2, scaledUp: true });
  // One was added 1 s ago: not another one yet.
  assert.deepEqual(wantedWorkers(queue, state({ current: 2, work: 6, oldest: 90_000, lastScaleUpAt: 99_000 })), { wanted: 2, scaledUp: false });
  // Never more than the work can use (6 jobs at 2 each: 3), nor above workers.max.
  assert.deepEqual(wantedWorkers(queue, state({ current: 3, work: 6, oldest: 90_000 })), { wanted: 3, scaledUp: false });
  assert.equal(wantedWorkers({ ...queue, workersMax: 2 }, state({ current: 2, work: 20, oldest: 90_000 })).wanted, 2);
  // Workers it has beyond what the work needs now stay wanted (idle_timeout stops them).
  assert.deepEqual(wantedWorkers(queue, state({ current: 3, work: 1 })), { wanted: 3, scaledUp: false });
});
