// One endpoint's jobs on this node: its queue, and the counts `/health` answers (jobs in progress, ended ones by
// outcome, retries). The job engine (jobEngine.ts) keeps one per endpoint and moves the counts as jobs change state.
import type { JobStatus } from '../../protocol/jobs';
import { EndpointQueue } from './endpointQueue';

export interface JobCounts {
  completed: number;
  failed: number;
  inProgress: number;
  inQueue: number;
  retried: number;
}

export class EndpointJobs {
  readonly queue = new EndpointQueue();
  inProgress = 0;
  completed = 0;
  failed = 0;
  retried = 0;

  /** `d` jobs ended with `status` (negative: they left the counts, expired or deleted). */
  countEnded(status: JobStatus, d: number): void {
    if (status === 'COMPLETED') this.completed += d;
    else if (status === 'FAILED' || status === 'TIMED_OUT') this.failed += d;
  }

  counts(): JobCounts {
    return { completed: this.completed, failed: this.failed, inProgress: this.inProgress, inQueue: this.queue.queued, retried: this.retried };
  }
}
