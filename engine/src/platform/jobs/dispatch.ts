// The worker side of the queue: hands jobs to workers (at once or through a parked `take` long-poll), records
// results and stream chunks, enforces the execution timeout, reads heartbeats, and settles the jobs of a
// worker that died (they fail) or hung (they run again, at most MAX_ATTEMPTS times).
import { MAX_ATTEMPTS, type Job } from './job';
import type { JobEngine } from './jobEngine';
import { normaliseChunks, type RawChunk } from './streamChunks';
import type { Taker } from './endpointQueue';
import type { Worker } from '../workers/worker';

export interface DispatchDeps {
  /** Server-side execution limit of the endpoint, ms. */
  executionTimeoutMs(endpointId: string): number;
  /** The queue function is a generator (it streams its own chunks). */
  streams(endpointId: string): boolean;
  heartbeatMs: number;
  /** How long a cancelled or timed-out job may keep running in its worker before the worker is replaced. */
  cancelGraceMs: number;
}

export type HeartbeatVerdict = { cancel: string[]; replace: string | null };

export class Dispatcher {
  /** Endpoints whose jobs arrived in this turn of the event loop (wake). */
  private toWake = new Set<string>();

  constructor(
    private readonly engine: JobEngine,
    private readonly deps: DispatchDeps,
  ) {}

  register(w: Worker): void {
    this.engine.workers.set(w.id, w);
  }

  /** Hands up to `max` queued jobs to the worker now (never above its max_concurrency). */
  takeNow(w: Worker, max: number): Job[] {
    if (w.phase === 'initializing') {
      w.phase = 'ready'; // a take means its imports are done
      w.readyAt ??= Date.now();
    }
    if (w.phase !== 'ready') return [];
    const room = Math.min(max, w.maxConcurrency - w.jobs.size);
    if (room <= 0) return [];
    const jobs = this.engine.endpointJobs(w.endpointId).queue.take(room);
    for (const job of jobs) this.assign(w, job);
    return jobs;
  }

  /** Long-poll: jobs now, else the first jobs queued within `waitMs`, else none. */
  take(w: Worker, max: number, waitMs: number, onAbort: (cb: () => void) => void): Promise<Job[]> {
    const now = this.takeNow(w, max);
    if (now.length > 0 || waitMs <= 0 || w.phase !== 'ready') return Promise.resolve(now);
    const queue = this.engine.endpointJobs(w.endpointId).queue;
    return new Promise((resolve) => {
      let settled = false;
      const settle = (jobs: Job[]) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        queue.unpark(taker);
        resolve(jobs);
      };
      const taker = { worker: w, max, deliver: settle };
      const timer = setTimeout(() => settle([]), waitMs);
      queue.park(taker);
      onAbort(() => settle([]));
    });
  }

  /**
   * A worker's job channel opened (workerChannel.ts): from now on jobs go to `send` as soon as the worker has room,
   * until the returned detach is called (the channel closed). `send` answers false when the channel is gone: the jobs
   * go back to the queue.
   */
  attach(w: Worker, send: (jobs: Job[]) => boolean, close: (reason: string) => void): () => void {
    const queue = this.engine.endpointJobs(w.endpointId).queue;
    const old = w.channel;
    if (old) {
      queue.unpark(old.taker);
      w.channel = undefined;
      old.close('the worker opened another job channel');
    }
    const detach = () => {
      if (w.channel?.taker !== taker) return;
      w.channel = undefined;
      queue.unpark(taker);
    };
    const taker: Taker = {
      worker: w,
      max: w.maxConcurrency,
      persistent: true,
      deliver: (jobs) => {
        if (jobs.length === 0 || send(jobs)) return;
        detach(); // before the jobs go back: the queue would hand them to this channel again
        for (const job of jobs) this.requeue(job);
      },
    };
    w.channel = { taker, close };
    if (w.phase === 'initializing' || w.phase === 'ready') queue.park(taker);
    this.offer(w);
    return detach;
  }

  /** A slot of the worker came free: its channel gets the next queued jobs at once. */
  offer(w: Worker): void {
    const t = w.channel?.taker;
    if (!t) return;
    const jobs = this.takeNow(w, t.max);
    if (jobs.length > 0) t.deliver(jobs);
  }

  /**
   * Jobs arrived on the endpoint. A worker with nothing to do gets the first at once: a warm `/runsync` does not wait
   * for the rest of the event loop's turn. Otherwise parked workers are woken, oldest first, once the requests read in
   * this turn are all in (setImmediate: no timer, a few microseconds), so that jobs arriving together reach a busy
   * worker in one frame and one write rather than a write each, which is what a busy node spends its time on.
   */
  wake(endpointId: string): void {
    if (!this.toWake.has(endpointId) && this.hasIdleChannel(endpointId)) return this.wakeNow(endpointId);
    if (this.toWake.size === 0) setImmediate(() => this.wakeArrived());
    this.toWake.add(endpointId);
  }

  private hasIdleChannel(endpointId: string): boolean {
    for (const t of this.engine.endpointJobs(endpointId).queue.waiting())
      if (t.persistent && t.worker.phase === 'ready' && t.worker.jobs.size === 0) return true;
    return false;
  }

  private wakeArrived(): void {
    const ids = [...this.toWake];
    this.toWake.clear();
    for (const id of ids) this.wakeNow(id);
  }

  private wakeNow(endpointId: string): void {
    const queue = this.engine.endpointJobs(endpointId).queue;
    for (const t of [...queue.waiting()]) {
      if (queue.queued === 0) return;
      const jobs = this.takeNow(t.worker, t.max);
      if (jobs.length > 0) t.deliver(jobs);
    }
  }

  /** Releases parked long-polls of a worker that is retiring (they answer with no job); its channel gets no more jobs. */
  releaseTakers(w: Worker): void {
    for (const t of this.engine.endpointJobs(w.endpointId).queue.unparkWorker(w)) t.deliver([]);
  }

  private assign(w: Worker, job: Job): void {
    const e = this.engine.endpointJobs(job.endpointId);
    job.status = 'IN_PROGRESS';
    job.startedAt = this.engine.deps.clock.now();
    job.workerId = w.id;
    job.attempts++;
    job.missedHeartbeats = 0;
    job.handedAt = Date.now();
    job.resetChunks();
    e.inProgress++;
    w.jobs.add(job);
    w.lastBusy = Date.now();
    const limit = this.deps.executionTimeoutMs(job.endpointId);
    const attempt = job.attempts;
    const timer = setTimeout(() => {
      if (job.status === 'IN_PROGRESS' && job.workerId === w.id && job.attempts === attempt) {
        this.engine.end(
          job,
          'TIMED_OUT',
          null,
          `the job ran longer than the endpoint's execution timeout of ${limit} ms and was stopped; ` +
            'raise execution_timeout_ms on the endpoint or make the handler faster',
        );
      }
    }, limit);
    timer.unref();
    this.engine.timeouts.set(job.id, timer);
    this.engine.deps.writer.changed(job);
    job.notify();
  }

  private owned(w: Worker, jobId: string): Job | null {
    const job = this.engine.jobs.get(jobId);
    return job && job.status === 'IN_PROGRESS' && job.workerId === w.id ? job : null;
  }

  /** Records the result of a job; false when the worker no longer owns it (the result is dropped). */
  complete(w: Worker, jobId: string, output: string | null, error: string | null): boolean {
    const job = this.owned(w, jobId);
    if (!job) return false;
    w.lastSeen = Date.now();
    // What the worker printed so far belongs to jobs that ended: a crash later quotes only what came after, not an
    // earlier caller's traceback.
    w.stderrTail.length = 0;
    if (error !== null) {
      this.engine.end(job, 'FAILED', null, error, true);
      return true;
    }
    const out = output ?? 'null';
    // A handler that does not stream yields one chunk holding its whole output, made when `/stream` reads it.
    if (job.streamedCount === 0 && !this.deps.streams(job.endpointId)) job.streamOutput = true;
    this.engine.end(job, 'COMPLETED', out, null, true);
    return true;
  }

  /** Appends chunks; false when the job is no longer the worker's (it was cancelled or timed out). */
  addChunks(w: Worker, jobId: string, raw: RawChunk[]): boolean {
    const job = this.owned(w, jobId);
    if (!job) return false;
    const chunks = normaliseChunks(raw, job.streamedCount);
    job.streamedCount += chunks.length;
    job.chunks.push(...chunks);
    job.notify();
    return true;
  }

  /** Reads a heartbeat: which jobs the worker must drop, and whether it must be replaced. */
  heartbeat(w: Worker, reported: string[]): HeartbeatVerdict {
    const now = Date.now();
    w.lastSeen = now;
    const seen = new Set(reported);
    const cancel: string[] = [];
    let replace: string | null = null;
    for (const id of reported) {
      if (this.owned(w, id)) continue;
      cancel.push(id);
      const since = w.cancelRequested.get(id) ?? now;
      w.cancelRequested.set(id, since);
      if (now - since > this.deps.cancelGraceMs) replace = `job ${id} was cancelled or timed out but its handler kept running`;
    }
    for (const id of w.cancelRequested.keys()) if (!seen.has(id)) w.cancelRequested.delete(id);
    // A job handed out but never reported: the hand-over was lost (the take response never arrived).
    const grace = 3 * this.deps.heartbeatMs + 1000;
    for (const job of [...w.jobs]) {
      if (seen.has(job.id)) job.missedHeartbeats = 0;
      else if (++job.missedHeartbeats >= 3 && job.startedAt !== null && now - (job.handedAt ?? now) > grace) {
        // Bounded as every other run-again: a job whose hand-over is lost each time (a frame its worker cannot read
        // breaks the worker's channel) would otherwise go round the endpoint's workers for ever.
        if (job.attempts >= MAX_ATTEMPTS) {
          const why =
            `the job was handed to a worker ${job.attempts} times and never reached its handler (the worker did not report ` +
            "it: its job channel broke on the way, see the endpoint's logs); it is not run again";
          this.engine.end(job, 'FAILED', null, why, true);
        } else this.requeue(job);
      }
    }
    return { cancel, replace };
  }

  /** The worker is gone: its jobs fail (it died) or run again (it hung or the platform stopped it). */
  workerGone(w: Worker, how: 'fail' | 'requeue', reason: string): void {
    this.releaseTakers(w);
    w.channel?.close(reason);
    for (const job of [...w.jobs]) {
      if (how === 'fail' || job.attempts >= MAX_ATTEMPTS) {
        const why = how === 'fail' ? reason : `${reason}; the job was started ${job.attempts} times`;
        this.engine.end(job, 'FAILED', null, why, true);
      } else this.requeue(job);
    }
    this.engine.workers.delete(w.id);
  }

  /** Puts a running job back at the head of its queue (its worker never got it, or is gone). */
  requeue(job: Job): void {
    this.engine.releaseFromWorker(job, true);
    job.status = 'IN_QUEUE';
    job.startedAt = null;
    job.workerId = null;
    this.engine.endpointJobs(job.endpointId).queue.pushFront(job);
    this.engine.deps.writer.changed(job);
    job.notify();
    this.engine.deps.onDemand(job.endpointId);
  }
}
