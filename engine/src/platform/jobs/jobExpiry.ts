// Ended jobs leave when their retention runs out (the spec's `expires_at`): from memory, where lookups also check it,
// and from the store, whose expired rows are deleted in batches between group commits. Both run every few seconds
// (housekeeping.ts); the job engine decides what a job's removal changes (its queue, counts, worker).
import type { Clock } from '../clock';
import type { JobWriter } from '../store/jobWriter';
import type { PlatformStore } from '../store/types';
import type { JobEngine } from './jobEngine';

/**
 * Expired rows deleted per statement. At 3,600 jobs/s a sweep every 5 s finds 18,000; deleted in one statement they
 * took 451 ms on the embedded database, while no group commit (and so no `/run` answer) could go.
 */
export const SWEEP_BATCH = 500;

export interface JobExpiryDeps {
  engine: Pick<JobEngine, 'jobs' | 'ended' | 'remove' | 'knownEndpoint'>;
  writer: Pick<JobWriter, 'exclusive' | 'pendingIds'>;
  store: Pick<PlatformStore, 'deleteExpiredJobs'>;
  clock: Clock;
  /** This node's instance id: only the rows it owns count in its health. */
  instanceId: string;
}

export class JobExpiry {
  private sweepingStore = false;

  constructor(private readonly d: JobExpiryDeps) {}

  /** Removes the expired jobs in memory. */
  sweepMemory(): number {
    const now = this.d.clock.now();
    let n = 0;
    for (const job of this.d.engine.jobs.values())
      if (job.expired(now)) {
        this.d.engine.remove(job);
        n++;
      }
    return n;
  }

  /**
   * Deletes the ended jobs whose retention ran out from the store, and counts them out of health. It runs between
   * group commits, SWEEP_BATCH rows at a time (a group commit that someone waits for goes between two), and leaves
   * alone every job whose row a commit is about to change, or that memory still holds.
   */
  async sweepStore(): Promise<number> {
    if (this.sweepingStore) return 0;
    this.sweepingStore = true;
    let deleted = 0;
    try {
      const now = this.d.clock.now();
      for (;;) {
        const gone = await this.d.writer.exclusive(() => {
          const keep = new Set(this.d.writer.pendingIds());
          for (const job of this.d.engine.jobs.values()) if (job.ended || job.storeState === 'refused') keep.add(job.id);
          return this.d.store.deleteExpiredJobs(now, [...keep], SWEEP_BATCH);
        });
        for (const row of gone) {
          this.d.engine.ended.delete(row.id);
          if (row.owner !== this.d.instanceId) continue; // a lost node's row: not counted here
          const e = this.d.engine.knownEndpoint(row.endpoint_id);
          if (!e) continue;
          e.countEnded(row.status, -1);
          e.retried -= row.retries;
        }
        deleted += gone.length;
        if (gone.length < SWEEP_BATCH) return deleted;
      }
    } finally {
      this.sweepingStore = false;
    }
  }
}
