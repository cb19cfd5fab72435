// The jobs of every queue endpoint, in memory and backed by the store through the write-behind writer:
// submission, the state machine of the spec (queue -> in progress -> ended; cancel, retry, purge, expiry),
// counts for health, and what `/runsync` and `/stream` wait on. Worker-side hand-out lives in dispatch.ts.
import { storableText } from '../store/storableText';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock';
import type { RetentionWindows } from '../options';
import type { JobWriter } from '../store/jobWriter';
import type { JobRow, JobStatus } from '../store/types';
import { EndpointQueue } from './endpointQueue';
import { Job, MAX_ATTEMPTS, type JobKind } from './job';
import type { Worker } from '../workers/worker';

/** Suffix of job ids: the platform instance that owns them (decisions.md). */
export const INSTANCE_ID = 'u1';

export interface JobCounts {
  completed: number;
  failed: number;
  inProgress: number;
  inQueue: number;
  retried: number;
}

export interface EngineDeps {
  clock: Clock;
  writer: JobWriter;
  retention: RetentionWindows;
  maxQueuedPerEndpoint: number;
  /** Endpoint exists and is a queue endpoint. */
  hasEndpoint(endpointId: string): boolean;
  /** Jobs are waiting on this endpoint: the scheduler may start workers. */
  onDemand(endpointId: string): void;
  /** A job of this worker ended; `abandoned` when it was taken from the worker (cancel, timeout, expiry). */
  onWorkerFreed(worker: Worker, abandoned: boolean): void;
}

class EndpointJobs {
  readonly queue = new EndpointQueue();
  inProgress = 0;
  completed = 0;
  failed = 0;
  retried = 0;
}

export class JobEngine {
  readonly jobs = new Map<string, Job>();
  private readonly endpoints = new Map<string, EndpointJobs>();

  constructor(readonly deps: EngineDeps) {}

  endpointJobs(endpointId: string): EndpointJobs {
    let e = this.endpoints.get(endpointId);
    if (!e) this.endpoints.set(endpointId, (e = new EndpointJobs()));
    return e;
  }

  /** Rebuilds the queues after a restart: queued jobs wait again, jobs that were running run again. */
  load(rows: JobRow[]): { queued: number; rerun: number; dropped: number } {
    const now = this.deps.clock.now();
    let queued = 0;
    let rerun = 0;
    let dropped = 0;
    rows.sort((a, b) => Number(a.queued_at) - Number(b.queued_at));
    for (const row of rows) {
      const job = Job.fromRow(row);
      if (!this.deps.hasEndpoint(job.endpointId) || job.expired(now)) {
        this.deps.writer.removed(job);
        dropped++;
        continue;
      }
      this.jobs.set(job.id, job);
      const e = this.endpointJobs(job.endpointId);
      if (job.status === 'IN_PROGRESS' && job.attempts >= MAX_ATTEMPTS) {
        e.inProgress++; // counted so that end() can count it out
        this.end(job, 'FAILED', null, `the platform stopped ${job.attempts} times while this job ran; it is not run again`);
        e.retried += job.retries;
        continue;
      }
      if (job.status === 'IN_PROGRESS') {
        job.status = 'IN_QUEUE';
        job.startedAt = null;
        job.workerId = null;
        this.deps.writer.changed(job);
        rerun++;
      }
      if (job.status === 'IN_QUEUE') {
        e.queue.push(job);
        queued++;
      } else this.countEnded(e, job.status, +1);
      e.retried += job.retries;
    }
    for (const id of this.endpoints.keys()) if (this.endpointJobs(id).queue.queued > 0) this.deps.onDemand(id);
    return { queued, rerun, dropped };
  }

  /** Accepts a job; `null` when the endpoint's queue is full (the caller answers 429). */
  submit(endpointId: string, input: string, kind: JobKind, waitGiven: boolean): Job | null {
    const e = this.endpointJobs(endpointId);
    if (e.queue.queued >= this.deps.maxQueuedPerEndpoint) return null;
    const id = `${kind === 'runsync' ? 'sync-' : ''}${randomUUID()}-${INSTANCE_ID}`;
    const r = this.deps.retention;
    const retention = kind === 'run' ? r.runMs : waitGiven ? r.runsyncWaitMs : r.runsyncMs;
    const job = new Job(id, endpointId, kind, input, this.deps.clock.now(), retention);
    this.jobs.set(id, job);
    e.queue.push(job);
    this.deps.writer.changed(job);
    this.deps.onDemand(endpointId);
    return job;
  }

  /** The job, unless unknown, of another endpoint, or expired (expired jobs are removed on sight). */
  get(endpointId: string, jobId: string): Job | undefined {
    const job = this.jobs.get(jobId);
    if (!job || job.endpointId !== endpointId) return undefined;
    if (job.expired(this.deps.clock.now())) {
      this.remove(job);
      return undefined;
    }
    return job;
  }

  /** `?ttl=` on `/status`: the job lives `ms` from now, whatever its state. */
  setTtl(job: Job, ms: number): void {
    job.ttlSet = true;
    job.expiresAt = this.deps.clock.now() + ms;
    this.deps.writer.changed(job);
  }

  cancel(job: Job): 'cancelled' | 'finished' {
    if (job.ended) return 'finished';
    this.end(job, 'CANCELLED', null, null);
    return 'cancelled';
  }

  retry(job: Job): 'queued' | 'not-retryable' {
    if (job.status !== 'FAILED' && job.status !== 'TIMED_OUT') return 'not-retryable';
    const e = this.endpointJobs(job.endpointId);
    this.countEnded(e, job.status, -1);
    job.status = 'IN_QUEUE';
    job.output = null;
    job.error = null;
    job.startedAt = null;
    job.endedAt = null;
    job.expiresAt = null;
    job.ttlSet = false;
    job.attempts = 0;
    job.retries++;
    job.queuedAt = this.deps.clock.now();
    job.chunks = [];
    job.streamCursor = 0;
    job.streamedCount = 0;
    e.retried++;
    e.queue.push(job);
    this.deps.writer.changed(job);
    job.notify();
    this.deps.onDemand(job.endpointId);
    return 'queued';
  }

  /** Removes every queued job of the endpoint; running jobs continue. */
  purge(endpointId: string): number {
    const jobs = this.endpointJobs(endpointId).queue.drain();
    for (const job of jobs) {
      this.jobs.delete(job.id);
      this.deps.writer.removed(job);
      job.notify();
    }
    return jobs.length;
  }

  /** When the job that has waited longest in the endpoint's queue was queued (platform clock), if any waits. */
  oldestQueuedAt(endpointId: string): number | undefined {
    return this.endpointJobs(endpointId).queue.oldest()?.queuedAt;
  }

  counts(endpointId: string): JobCounts {
    const e = this.endpointJobs(endpointId);
    return {
      completed: e.completed,
      failed: e.failed,
      inProgress: e.inProgress,
      inQueue: e.queue.queued,
      retried: e.retried,
    };
  }

  /** Waits until the job ends or `ms` pass. */
  async waitForEnd(job: Job, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!job.ended && job.storeState !== 'gone') {
      const left = deadline - Date.now();
      if (left <= 0) return;
      await job.nextChange(left);
    }
  }

  /** Chunks not yet delivered by `/stream`, waiting up to `waitMs` for one while the job is not over. */
  async takeChunks(job: Job, waitMs: number): Promise<string[]> {
    const deadline = Date.now() + waitMs;
    while (job.streamCursor >= job.chunks.length && !job.ended && job.storeState !== 'gone') {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await job.nextChange(left);
    }
    const out = job.chunks.slice(job.streamCursor);
    job.chunks = []; // delivered chunks are never handed out again
    job.streamCursor = 0;
    return out;
  }

  /** Moves a job to a terminal state and releases it from its worker. */
  end(job: Job, status: JobStatus, output: string | null, error: string | null, byWorker = false): void {
    const e = this.endpointJobs(job.endpointId);
    const worker = this.releaseFromWorker(job, !byWorker);
    if (job.status === 'IN_QUEUE') e.queue.forget();
    job.status = status;
    // What the database refuses is replaced here, so that clients read the same text before and after a restart.
    job.output = storableText(output);
    job.error = storableText(error);
    job.endedAt = this.deps.clock.now();
    if (!job.ttlSet) job.expiresAt = job.endedAt + job.retentionMs;
    this.countEnded(e, status, +1);
    this.deps.writer.changed(job);
    job.notify();
    if (worker) this.deps.onWorkerFreed(worker, !byWorker);
  }

  /** Takes the job from its worker (it ends, or goes back to the queue); returns that worker. */
  releaseFromWorker(job: Job, tellWorker: boolean): Worker | null {
    if (job.status !== 'IN_PROGRESS') return null;
    this.endpointJobs(job.endpointId).inProgress--;
    const w = this.owner(job);
    if (w) {
      w.jobs.delete(job);
      w.lastBusy = Date.now();
      // The worker learns from its next heartbeat that it no longer owns the job.
      if (tellWorker) w.cancelRequested.set(job.id, Date.now());
    }
    clearTimeout(this.timeouts.get(job.id));
    this.timeouts.delete(job.id);
    return w;
  }

  /** Workers by id, kept by dispatch.ts so that a job finds its owner. */
  readonly workers = new Map<string, Worker>();
  readonly timeouts = new Map<string, NodeJS.Timeout>();

  owner(job: Job): Worker | null {
    return job.workerId ? (this.workers.get(job.workerId) ?? null) : null;
  }

  /** Forgets a job entirely (expiry, deleted endpoint). */
  remove(job: Job): void {
    const e = this.endpointJobs(job.endpointId);
    const worker = this.releaseFromWorker(job, true);
    if (job.status === 'IN_QUEUE') e.queue.forget();
    else if (job.ended) this.countEnded(e, job.status, -1);
    e.retried -= job.retries;
    this.jobs.delete(job.id);
    this.deps.writer.removed(job);
    job.notify();
    if (worker) this.deps.onWorkerFreed(worker, true);
  }

  /** Removes expired jobs; run every few seconds (lookups also check expiry). */
  sweep(): number {
    const now = this.deps.clock.now();
    let n = 0;
    for (const job of this.jobs.values())
      if (job.expired(now)) {
        this.remove(job);
        n++;
      }
    return n;
  }

  /** Fails every queued job of the endpoint (its workers cannot start). */
  failQueued(endpointId: string, error: string): void {
    for (const job of [...this.jobs.values()])
      if (job.endpointId === endpointId && job.status === 'IN_QUEUE' && job.storeState !== 'gone') this.end(job, 'FAILED', null, error);
  }

  /** The endpoint was deleted: its jobs go with it. */
  dropEndpoint(endpointId: string): void {
    for (const job of [...this.jobs.values()]) if (job.endpointId === endpointId) this.remove(job);
    this.endpoints.delete(endpointId);
  }

  private countEnded(e: EndpointJobs, status: JobStatus, d: number): void {
    if (status === 'COMPLETED') e.completed += d;
    else if (status === 'FAILED' || status === 'TIMED_OUT') e.failed += d;
  }
}
