// A job in memory: the stored row plus what only lives while the platform runs (the chunks of a running job,
// waiters). JSON documents (input, output) stay text from request to response; nothing re-encodes them.
import type { JobKind, JobRow, JobStateRow, JobStatus } from '../store/types';
import type { StoreState, StoredJob } from '../store/jobWriter';

export type { JobKind, JobStatus };

/** A job whose worker was lost (hung, platform restart) runs again at most this many times in all. */
export const MAX_ATTEMPTS = 3;

/** What a job object costs in memory besides its JSON texts (measured: an ended job with small texts, in a Map). */
const JOB_OBJECT_BYTES = 1024;

export const TERMINAL: ReadonlySet<JobStatus> = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);

export class Job implements StoredJob {
  storeState: StoreState = 'new';
  status: JobStatus = 'IN_QUEUE';
  output: string | null = null;
  error: string | null = null;
  queuedAt: number;
  startedAt: number | null = null;
  endedAt: number | null = null;
  expiresAt: number | null = null;
  ttlSet = false;
  attempts = 0;
  retries = 0;
  workerId: string | null = null;
  /**
   * Serialized chunks (`{"output":..,"metrics":{..}}`) of the current attempt not yet handed out by `/stream`. Once the
   * job ended they are stored; a job read back from the store holds them as one piece, the stored array's inner text
   * (`/stream` joins pieces with commas, so the answer is the same).
   */
  chunks: string[] = [];
  /** The output is still to be handed out by `/stream` as the job's chunks (a handler that does not stream). */
  streamOutput = false;
  /** Index of the next chunk `/stream` hands out. */
  streamCursor = 0;
  /** Chunks produced by the current attempt (the next `stream_index`). */
  streamedCount = 0;
  /** Real time the current attempt was handed to its worker. */
  handedAt: number | null = null;
  /** Called at every state change and new chunk (`watch`: runsync and stream long-polls); made for the first one. */
  private listeners: Set<(force?: boolean) => void> | null = null;
  /** Heartbeats from the owning worker that did not list this job (lost hand-over detection). */
  missedHeartbeats = 0;
  /** The node that answers for the job (its instance id): the one that accepted it, or adopted it from a lost one. */
  owner = 'u1';
  /** Taken from the queue to be handed to another node (cluster): not counted in the queue meanwhile. */
  handingOff = false;
  /** Handed to this node (cluster): its row is that node's now; a `/runsync` request waiting here asks it for the end. */
  handedTo: string | null = null;

  constructor(
    readonly id: string,
    readonly endpointId: string,
    readonly kind: JobKind,
    readonly input: string,
    readonly createdAt: number,
    public retentionMs: number,
  ) {
    this.queuedAt = createdAt;
  }

  static fromRow(r: JobRow): Job {
    const j = new Job(r.id, r.endpoint_id, r.kind, r.input, Number(r.created_at), Number(r.retention_ms));
    j.storeState = 'stored';
    j.status = r.status;
    j.output = r.output;
    j.error = r.error;
    j.queuedAt = Number(r.queued_at);
    j.startedAt = r.started_at === null ? null : Number(r.started_at);
    j.endedAt = r.ended_at === null ? null : Number(r.ended_at);
    j.expiresAt = r.expires_at === null ? null : Number(r.expires_at);
    j.ttlSet = r.ttl_set;
    j.attempts = r.attempts;
    j.retries = r.retries;
    j.workerId = r.worker_id;
    j.chunks = r.stream ? [r.stream.slice(1, -1)] : [];
    j.streamOutput = r.stream_output;
    j.owner = r.owner;
    return j;
  }

  get ended(): boolean {
    return TERMINAL.has(this.status);
  }

  /**
   * A `/runsync` job running or ended: only its request knows its id (it is given with the result, or once the job is
   * durable when `wait` elapses), so its first row is owed to nobody yet (jobWriter.ts). A queued one is not: another
   * node may take it over only once its row is durable (workSharing.ts).
   */
  get rowMayWait(): boolean {
    return this.kind === 'runsync' && this.status !== 'IN_QUEUE';
  }

  expired(now: number): boolean {
    return this.expiresAt !== null && now >= this.expiresAt;
  }

  toRow(): JobRow {
    // The state row with the columns a job is created with added to it, not spread into a new literal: V8 copied such
    // a spread in its runtime, at 10-17 µs a job against 0.1-0.6 µs (the platform's costliest function under /run load).
    const row = this.toStateRow() as JobRow;
    row.endpoint_id = this.endpointId;
    row.kind = this.kind;
    row.input = this.input;
    row.created_at = this.createdAt;
    row.owner = this.owner;
    return row;
  }

  toStateRow(): JobStateRow {
    return {
      id: this.id,
      status: this.status,
      output: this.output,
      error: this.error,
      queued_at: this.queuedAt,
      started_at: this.startedAt,
      ended_at: this.endedAt,
      expires_at: this.expiresAt,
      ttl_set: this.ttlSet,
      retention_ms: this.retentionMs,
      attempts: this.attempts,
      retries: this.retries,
      worker_id: this.workerId,
      // A running job's chunks are not stored: a job that runs again after a restart streams again from the start.
      stream: this.ended && this.chunks.length > 0 ? `[${this.chunks.join(',')}]` : null,
      stream_output: this.ended && this.streamOutput,
    };
  }

  /** A new attempt (started, or queued again by a retry) has produced no chunks and handed none out. */
  resetChunks(): void {
    this.chunks = [];
    this.streamOutput = false;
    this.streamCursor = 0;
    this.streamedCount = 0;
  }

  /**
   * About what keeping this job in memory costs: the object, and the JSON texts it holds (input, output, error,
   * chunks) at a byte a character, as V8 keeps ASCII text (other text takes two).
   */
  memoryBytes(): number {
    let n = JOB_OBJECT_BYTES + this.input.length + (this.output?.length ?? 0) + (this.error?.length ?? 0);
    for (const c of this.chunks) n += c.length;
    return n;
  }

  /**
   * Calls `done` once: as soon as `settled(job)` holds (now, or at a change of state or chunks), or after `ms`. It runs
   * inside the change, in the turn the job ends: a `/runsync` answer leaves before that turn's other work (the worker's
   * next job, scaling), not after it.
   */
  watch(settled: (job: Job) => boolean, ms: number, done: () => void): void {
    if (settled(this) || ms <= 0) return done();
    const listener = (force?: boolean) => {
      if (!force && !settled(this)) return;
      clearTimeout(timer);
      this.listeners?.delete(listener);
      done();
    };
    const timer = setTimeout(() => {
      this.listeners?.delete(listener);
      done();
    }, ms);
    timer.unref(); // a wait never keeps a stopping platform alive
    (this.listeners ??= new Set()).add(listener);
  }

  /** Ends every wait on this job now, as if its time had run out (the platform is stopping). */
  stopWaits(): void {
    if (this.listeners) for (const l of [...this.listeners]) l(true);
  }

  notify(): void {
    // Most jobs (`/run`) have nobody waiting: no set, and no copy of one, at each of their changes.
    if (this.listeners === null || this.listeners.size === 0) return;
    for (const l of [...this.listeners]) l();
  }

  /** The job object of the jobs API, in the reference product's key order. */
  toJson(): string {
    let s = '{';
    if (this.startedAt !== null) s += `"delayTime":${Math.max(0, this.startedAt - this.queuedAt)},`;
    if (this.endedAt !== null && this.startedAt !== null) s += `"executionTime":${Math.max(0, this.endedAt - this.startedAt)},`;
    if (this.error !== null) s += `"error":${JSON.stringify(this.error)},`;
    s += `"id":${JSON.stringify(this.id)},`;
    if (this.output !== null) s += `"output":${this.output},`;
    s += `"status":"${this.status}"}`;
    return s;
  }
}
