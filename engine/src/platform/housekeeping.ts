// What the platform tidies every few seconds while it runs: jobs whose retention ran out leave memory and the store
// (the store in batches, between group commits: jobs/jobExpiry.ts), the embedded database's jobs table is vacuumed
// once enough rows were deleted (PGlite has no autovacuum: store/sqlStore.ts), and uploads never deployed expire
// (controlPlane/artifacts.ts), as do the files of deleted builds once no worker here runs from them.
import type { Artifacts } from './controlPlane/artifacts';
import type { JobExpiry } from './jobs/jobExpiry';
import type { PlatformStore } from './store/types';

const EVERY_MS = 5000;

export interface HousekeepingDeps {
  expiry: Pick<JobExpiry, 'sweepMemory' | 'sweepStore'>;
  store: Pick<PlatformStore, 'vacuumJobsIfDue'>;
  artifacts: Pick<Artifacts, 'sweepUploads' | 'sweepRetired'>;
  log(line: string): void;
}

/** Starts the rounds; the function it returns stops them. */
export function startHousekeeping(d: HousekeepingDeps): () => void {
  const timer = setInterval(() => {
    d.expiry.sweepMemory();
    d.expiry.sweepStore().then(
      () => d.store.vacuumJobsIfDue().catch((e: Error) => d.log(`strato platform: the jobs table could not be vacuumed (${e.message}); trying again`)),
      (e: Error) => d.log(`strato platform: expired jobs could not be deleted (${e.message}); trying again`),
    );
    void d.artifacts.sweepUploads();
    d.artifacts.sweepRetired();
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
