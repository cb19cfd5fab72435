// The jobs of every queue endpoint, backed by the store through the write-behind writer: submission, the state
// machine of the spec (queue -> in progress -> ended; cancel, retry, purge; expiry in jobExpiry.ts), counts for
// health, and what `/runsync` and `/stream` wait on. Jobs that have not ended live in memory; an ended job leaves
// memory once its row is durable and is read back from the store (through a bounded cache). Worker-side hand-out
// lives in dispatch.ts.
import { storableText } from '../store/storableText';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock';
import type { RetentionWindows } from '../options';
import type { JobWriter } from '../store/jobWriter';
import type { EndedJobCount, JobRow, JobStatus, PlatformStore } from '../store/types';
import { EndedJobCache } from './endedJobCache';
import { EndpointJobs, type JobCounts } from './endpointJobs';
import { Job, MAX_ATTEMPTS, type JobKind } from './job';
import { outputChunks } from './streamChunks';
import type { Worker } from '../workers/worker';

/** Suffix of job ids: the platform instance that owns them (decisions.md); this one is the embedded platform's. */
export const INSTANCE_ID = 'u1';

export interface EngineDeps {
  clock: Clock;
  /** This node's instance id (INSTANCE_ID, or a cluster node's own): the suffix and owner of the jobs it accepts. */
  instanceId: string;
  writer: JobWriter;
  /** Where ended jobs are read back from. */
  store: Pick<PlatformStore, 'getJob'>;
  retention: RetentionWindows;
  /** Bytes that ended, durable jobs may hold in memory (the cache of ended jobs; see Job.memoryBytes). */
  endedJobCacheBytes: number;
  maxQueuedPerEndpoint: number;
  /** Endpoint exists and is a queue endpoint. */
  hasEndpoint(endpointId: string): boolean;
  /** Jobs are waiting on this endpoint: the scheduler may start workers. */
  onDemand(endpointId: string): void;
  /** A job of this worker ended; `abandoned` when it was taken from the worker (cancel, timeout, expiry). */
  onWorkerFreed(worker: Worker, abandoned: boolean): void;
}

/** The job ended, or left this node: nothing more will happen to it here. */
const isOver = (job: Job): boolean => job.ended || job.storeState === 'gone';
const hasChunkOrIsOver = (job: Job): boolean => job.streamCursor < job.chunks.length || isOver(job);

export class JobEngine {
  /** Jobs in memory: every job that has not ended, and ended ones until their latest state is durable. */
  readonly jobs = new Map<string, Job>();
  /** Ended, durable jobs read or ended recently, within a bound; the others are read from the store. */
  readonly ended: EndedJobCache;
  private readonly endpoints = new Map<string, EndpointJobs>();
  /** Reads from the store in flight, so that two requests for one job get one object. */
  private readonly reading = new Map<string, Promise<Job | undefined>>();

  constructor(readonly deps: EngineDeps) {
    this.ended = new EndedJobCache(deps.endedJobCacheBytes);
    // Until its row is durable an ended job stays here, where every reader finds it; then it may leave memory.
    deps.writer.onStored = (stored) => {
      const job = this.jobs.get(stored.id);
      if (job !== stored || !job.ended) return;
      this.jobs.delete(job.id);
      this.ended.put(job);
    };
  }

  /** The endpoint's jobs where it has any here, without making an empty entry. */
  knownEndpoint(endpointId: string): EndpointJobs | undefined {
    return this.endpoints.get(endpointId);
  }

  endpointJobs(endpointId: string): EndpointJobs {
    let e = this.endpoints.get(endpointId);
    if (!e) this.endpoints.set(endpointId, (e = new EndpointJobs()));
    return e;
  }

  /**
   * Rebuilds the queues after a restart from the jobs that had not ended: queued jobs wait again, jobs that were
   * running run again. Ended jobs stay in the store; only their counts are needed.
   */
  load(rows: JobRow[], ended: EndedJobCount[]): { queued: number; rerun: number; dropped: number } {
    for (const c of ended) {
      if (!this.deps.hasEndpoint(c.endpoint_id)) continue;
      const e = this.endpointJobs(c.endpoint_id);
      e.countEnded(c.status, c.jobs);
      e.retried += c.retries;
    }
    return this.adopt(rows);
  }

  /**
   * Takes in jobs that had not ended (after a restart, or taken over from a lost node): queued jobs wait again, jobs
   * that were running run again, at most MAX_ATTEMPTS times in all. A job already in memory is left as it is. An ended
   * job of a lost node (taken over as a request read it) stays in the store and is counted here from now on, as its
   * expiry here counts it out.
   */
  adopt(rows: JobRow[]): { queued: number; rerun: number; dropped: number } {
    const now = this.deps.clock.now();
    let queued = 0;
    let rerun = 0;
    let dropped = 0;
    rows.sort((a, b) => Number(a.queued_at) - Number(b.queued_at));
    for (const row of rows) {
      if (this.jobs.has(row.id)) continue;
      const job = Job.fromRow(row);
      if (job.ended) {
        if (!this.deps.hasEndpoint(job.endpointId)) continue;
        const e = this.endpointJobs(job.endpointId);
        e.countEnded(job.status, 1);
        e.retried += job.retries;
        continue;
      }
      if (!this.deps.hasEndpoint(job.endpointId) || job.expired(now)) {
        this.deps.writer.removed(job);
        dropped++;
        continue;
      }
      this.jobs.set(job.id, job);
      const e = this.endpointJobs(job.endpointId);
      if (job.status === 'IN_PROGRESS' && job.attempts >= MAX_ATTEMPTS) {
        e.inProgress++; // counted so that end() can count it out
        this.end(
          job,
          'FAILED',
          null,
          `the job was started ${job.attempts} times and did not end (the platform or its worker stopped while it ran); it is not run again`,
        );
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
      e.queue.push(job);
      queued++;
      e.retried += job.retries;
    }
    for (const id of this.endpoints.keys()) if (this.endpointJobs(id).queue.queued > 0) this.deps.onDemand(id);
    return { queued, rerun, dropped };
  }

  /** Accepts a job; `null` when the endpoint's queue is full (the caller answers 429). */
  submit(endpointId: string, input: string, kind: JobKind, waitGiven: boolean): Job | null {
    const e = this.endpointJobs(endpointId);
    if (e.queue.queued >= this.deps.maxQueuedPerEndpoint) return null;
    const id = `${kind === 'runsync' ? 'sync-' : ''}${randomUUID()}-${this.deps.instanceId}`;
    const r = this.deps.retention;
    const retention = kind === 'run' ? r.runMs : waitGiven ? r.runsyncWaitMs : r.runsyncMs;
    const job = new Job(id, endpointId, kind, input, this.deps.clock.now(), retention);
    job.owner = this.deps.instanceId;
    this.jobs.set(id, job);
    e.queue.push(job);
    this.deps.writer.changed(job);
    this.deps.onDemand(endpointId);
    return job;
  }

  /**
   * The job, unless unknown, of another endpoint, or expired: from memory, else (an ended job) from the cache or the
   * store. Expired jobs in memory are removed on sight; expired rows are left to `sweepStore`, which counts them out.
   */
  async get(endpointId: string, jobId: string): Promise<Job | undefined> {
    let job = this.jobs.get(jobId);
    if (job) {
      if (job.endpointId !== endpointId) return undefined;
      if (job.expired(this.deps.clock.now())) {
        this.remove(job);
        return undefined;
      }
      return job;
    }
    job = this.ended.get(jobId) ?? (await this.read(jobId));
    job = this.jobs.get(jobId) ?? job; // it came back to memory meanwhile (retry, ttl)
    if (!job || job.endpointId !== endpointId || job.expired(this.deps.clock.now())) return undefined;
    return job;
  }

  private read(id: string): Promise<Job | undefined> {
    let p = this.reading.get(id);
    if (!p) {
      p = this.deps.store
        .getJob(id)
        .then((row) => {
          // A row of a job that has not ended but is not in memory is one being deleted (purged): not there.
          const job = row ? Job.fromRow(row) : undefined;
          if (!job?.ended) return undefined;
          this.ended.put(job);
          return job;
        })
        .finally(() => this.reading.delete(id));
      this.reading.set(id, p);
    }
    return p;
  }

  /** An ended job is about to change: it stays in memory until its new state is durable. */
  private hold(job: Job): void {
    if (this.jobs.get(job.id) === job) return;
    this.ended.delete(job.id);
    this.jobs.set(job.id, job);
  }

  /** `?ttl=` on `/status`: the job lives `ms` from now, whatever its state. */
  setTtl(job: Job, ms: number): void {
    this.hold(job);
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
    this.hold(job);
    const e = this.endpointJobs(job.endpointId);
    e.countEnded(job.status, -1);
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
    job.resetChunks();
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
    return this.endpointJobs(endpointId).counts();
  }

  /** Calls `done` once the job ends or leaves this node (purged, handed to another), or `ms` pass: in that turn. */
  whenEnded(job: Job, ms: number, done: () => void): void {
    job.watch(isOver, ms, done);
  }

  /** The platform is stopping: every `/runsync` and `/stream` that waits is answered now, with its job as it stands. */
  stopWaits(): void {
    for (const job of this.jobs.values()) job.stopWaits();
  }

  /** Waits until the job ends or leaves this node, or `ms` pass. */
  waitForEnd(job: Job, ms: number): Promise<void> {
    return new Promise((resolve) => this.whenEnded(job, ms, resolve));
  }

  /** Chunks not yet delivered by `/stream`, waiting up to `waitMs` for one while the job is not over. */
  async takeChunks(job: Job, waitMs: number): Promise<string[]> {
    await new Promise<void>((resolve) => job.watch(hasChunkOrIsOver, waitMs, resolve));
    if (job.streamOutput) {
      job.chunks.push(...outputChunks(job.output ?? 'null'));
      job.streamOutput = false;
    }
    const out = job.chunks.slice(job.streamCursor);
    job.chunks = []; // delivered chunks are never handed out again
    job.streamCursor = 0;
    if (job.ended && out.length > 0) {
      // What an ended job has left to hand out is in its row: the row changes.
      this.hold(job);
      this.deps.writer.changed(job);
    }
    return out;
  }

  /** Moves a job to a terminal state and releases it from its worker. */
  end(job: Job, status: JobStatus, output: string | null, error: string | null, byWorker = false): void {
    const e = this.endpointJobs(job.endpointId);
    const worker = this.releaseFromWorker(job, !byWorker);
    if (job.status === 'IN_QUEUE' && !job.handingOff) e.queue.forget();
    job.status = status;
    // What the database refuses is replaced here, so that clients read the same text before and after a restart.
    job.output = storableText(output);
    job.error = storableText(error);
    job.endedAt = this.deps.clock.now();
    if (!job.ttlSet) job.expiresAt = job.endedAt + job.retentionMs;
    e.countEnded(status, +1);
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

  /**
   * Takes back a job whose acceptance could not be stored (the database is out of reach) if no worker has it yet: it
   * never runs, so the client that is told to retry runs it once. False: it is running, and stays.
   */
  withdraw(job: Job): boolean {
    if (job.status !== 'IN_QUEUE' || job.handingOff || job.handedTo) return false;
    this.remove(job);
    return true;
  }

  /** Forgets a job entirely (expiry, deleted endpoint). */
  remove(job: Job): void {
    const e = this.endpointJobs(job.endpointId);
    const worker = this.releaseFromWorker(job, true);
    if (job.status === 'IN_QUEUE') {
      if (!job.handingOff) e.queue.forget();
    } else if (job.ended) e.countEnded(job.status, -1);
    e.retried -= job.retries;
    this.jobs.delete(job.id);
    this.ended.delete(job.id);
    this.deps.writer.removed(job);
    job.notify();
    if (worker) this.deps.onWorkerFreed(worker, true);
  }

  /** What jobs hold in memory: jobs (not ended, or not yet durable), their bytes with the cache's (Job.memoryBytes), jobs cached. */
  memory(): { jobs: number; memoryBytes: number; cachedJobs: number; cachedBytes: number } {
    let memoryBytes = this.ended.bytes;
    for (const job of this.jobs.values()) memoryBytes += job.memoryBytes();
    return { jobs: this.jobs.size, memoryBytes, cachedJobs: this.ended.count, cachedBytes: this.ended.bytes };
  }

  /** Fails every queued job of the endpoint (its workers cannot start). */
  failQueued(endpointId: string, error: string): void {
    for (const job of [...this.jobs.values()])
      if (job.endpointId === endpointId && job.status === 'IN_QUEUE' && job.storeState !== 'gone') this.end(job, 'FAILED', null, error);
  }

  /** The endpoint was deleted: its jobs go with it. */
  dropEndpoint(endpointId: string): void {
    for (const job of [...this.jobs.values()]) if (job.endpointId === endpointId) this.remove(job);
    this.ended.dropEndpoint(endpointId); // their rows went with the endpoint's
    this.endpoints.delete(endpointId);
  }
}
