// A job engine and its dispatcher without a server or a database (writes go nowhere), with one worker registered:
// for tests of the job state machine itself.
import { systemClock } from '../../engine/src/platform/clock';
import { Dispatcher } from '../../engine/src/platform/jobs/dispatch';
import type { Job } from '../../engine/src/platform/jobs/job';
import { JobEngine } from '../../engine/src/platform/jobs/jobEngine';
import { JobWriter } from '../../engine/src/platform/store/jobWriter';
import type { PlatformStore } from '../../engine/src/platform/store/types';
import type { Worker } from '../../engine/src/platform/workers/worker';

export function engineWithWorker(onWorkerFreed: () => void = () => undefined): { engine: JobEngine; dispatch: Dispatcher; worker: Worker } {
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
    onWorkerFreed,
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
  return { engine, dispatch, worker };
}
