// One endpoint's queue: jobs waiting in FIFO order and workers parked in a `take` long-poll. A job leaves the
// queue when it is handed out, cancelled, purged or expired; the latter three only change its status, and
// the queue skips such entries lazily, so removal is O(1).
import type { Job } from './job';
import type { Worker } from '../workers/worker';

export interface Taker {
  worker: Worker;
  max: number;
  /** A job channel: stays parked after a delivery (a `take` long-poll leaves with its jobs). */
  persistent?: true;
  deliver(jobs: Job[]): void;
}

export class EndpointQueue {
  private items: Job[] = [];
  private head = 0;
  /** Jobs in IN_QUEUE state (the lazily skipped entries excluded). */
  queued = 0;
  private takers: Taker[] = [];

  push(job: Job): void {
    this.items.push(job);
    this.queued++;
  }

  /** A job that must run next (re-queued after its worker was lost). */
  pushFront(job: Job): void {
    if (this.head > 0) this.items[--this.head] = job;
    else this.items.unshift(job);
    this.queued++;
  }

  /** The job left IN_QUEUE without being taken (cancel, purge, expiry). */
  forget(): void {
    this.queued--;
  }

  /** The job that has waited longest (what QUEUE_DELAY scaling looks at), without taking it. */
  oldest(): Job | undefined {
    for (let i = this.head; i < this.items.length; i++) {
      const job = this.items[i];
      if (job && job.status === 'IN_QUEUE' && job.storeState !== 'gone') return job;
    }
    return undefined;
  }

  /** Takes up to `n` queued jobs, oldest first. */
  take(n: number): Job[] {
    const out: Job[] = [];
    while (out.length < n && this.head < this.items.length) {
      const job = this.items[this.head];
      this.items[this.head++] = undefined as unknown as Job;
      if (job.status === 'IN_QUEUE' && job.storeState !== 'gone') {
        out.push(job);
        this.queued--;
      }
    }
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  /** Every queued job (purge). */
  drain(): Job[] {
    return this.take(Number.MAX_SAFE_INTEGER);
  }

  park(t: Taker): void {
    this.takers.push(t);
  }

  unpark(t: Taker): void {
    const i = this.takers.indexOf(t);
    if (i >= 0) this.takers.splice(i, 1);
  }

  /** Parked takers, longest waiting first; the caller hands them jobs. */
  waiting(): readonly Taker[] {
    return this.takers;
  }

  /** Jobs the parked takers would take now (a channel stays parked while its worker is busy: it counts its free slots). */
  room(): number {
    let n = 0;
    for (const t of this.takers) n += Math.max(0, Math.min(t.max, t.worker.maxConcurrency - t.worker.jobs.size));
    return n;
  }

  /** Removes and returns parked takers of a worker (it stopped). */
  unparkWorker(w: Worker): Taker[] {
    const mine = this.takers.filter((t) => t.worker === w);
    this.takers = this.takers.filter((t) => t.worker !== w);
    return mine;
  }
}
