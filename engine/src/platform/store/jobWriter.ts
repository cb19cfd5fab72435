// Write-behind group commit for jobs. Every state change marks the job dirty; a flush writes every dirty job
// in one transaction. Three speeds: when a caller must not answer before a job is durable (`/run`) it awaits
// `durable()`, which commits within `eagerMs`; transitions nobody waits for are committed within `lazyMs`
// (or with the next eager commit), so a busy platform spends its time on requests, not on commits; and a job never
// stored whose row nobody is owed yet (`rowMayWait`: a `/runsync` job running or answered, whose id only its request
// knows) may wait `syncMs`, so that a run of them is one commit of many rows: the database's work per row falls by
// half from 30 rows to 150 (bench/platform-jobs.ts: on 2 cores that work is what widened the `/runsync` p90).
// `onStored` tells the owner when a job's latest state is committed (an ended job may then leave memory).
import { PlatformError } from '../errors';
import type { JobBatch, JobRow, JobStateRow, PlatformStore } from './types';

/** `refused`: the database would not take the row; the job lives in memory only and is not written again. */
export type StoreState = 'new' | 'flushing' | 'stored' | 'gone' | 'refused';

/** What the writer needs from a job: its rows and a place to remember whether it is in the database. */
export interface StoredJob {
  readonly id: string;
  storeState: StoreState;
  toRow(): JobRow;
  toStateRow(): JobStateRow;
  /** Nobody is owed its row yet: while it is 'new', its row may wait up to the writer's `syncMs`. */
  readonly rowMayWait: boolean;
  readonly ended: boolean;
}

/** How soon each kind of change is committed, in ms (the three speeds above); `syncMs` defaults to `lazyMs`. */
export interface CommitDelays {
  eagerMs: number;
  lazyMs: number;
  syncMs?: number;
}

/** Its first row may wait `syncMs` (StoredJob.rowMayWait), and it has none yet. */
const rowMayWait = (job: StoredJob): boolean => job.storeState === 'new' && job.rowMayWait;

interface Waiter {
  resolve: () => void;
  reject: (e: Error) => void;
}

export class JobWriter {
  /** Jobs with a change not yet committed, and when each was first marked since its last commit. */
  private dirty = new Map<StoredJob, number>();
  private deletes = new Set<string>();
  private waiters: Waiter[] = [];
  /** The next commit, when one is scheduled: a timer, or an immediate for one due now (`setTimeout(0)` waits 1 ms). */
  private timer: { cancel(): void } | null = null;
  private timerDue = 0;
  private inFlight: Promise<void> | null = null;
  private closed = false;
  /** Rows written and flushes done, for diagnostics and the bench. */
  readonly stats = { flushes: 0, rows: 0, failures: 0, refused: 0 };
  /** Called after a commit for each job it wrote whose state has not changed since (the row holds its latest state). */
  onStored: (job: StoredJob) => void = () => undefined;

  private readonly eagerMs: number;
  private readonly lazyMs: number;
  private readonly syncMs: number;

  constructor(
    private readonly store: PlatformStore,
    delays: CommitDelays,
    private readonly onError: (e: Error) => void,
  ) {
    this.eagerMs = delays.eagerMs;
    this.lazyMs = delays.lazyMs;
    this.syncMs = delays.syncMs ?? delays.lazyMs;
  }

  /** The job was created or changed: write it in the next group commit. */
  changed(job: StoredJob): void {
    if (job.storeState === 'gone' || job.storeState === 'refused') return;
    if (!this.dirty.has(job)) this.dirty.set(job, Date.now());
    this.schedule(this.lazyMs);
  }

  /** The job is gone (expired, purged, its endpoint deleted). */
  removed(job: StoredJob): void {
    this.dirty.delete(job);
    if (job.storeState === 'stored' || job.storeState === 'flushing') this.deletes.add(job.id);
    job.storeState = 'gone';
    this.schedule(this.lazyMs);
  }

  /** Resolves once everything marked so far is committed; rejects when that commit fails. */
  durable(): Promise<void> {
    if (this.dirty.size === 0 && this.deletes.size === 0 && !this.inFlight) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule(this.eagerMs);
    });
  }

  /** Writes everything pending now and waits for it (shutdown, tests). */
  async flush(): Promise<void> {
    while (this.inFlight || this.dirty.size > 0 || this.deletes.size > 0 || this.waiters.length > 0) {
      this.cancelTimer();
      if (this.inFlight) await this.inFlight.catch(() => undefined);
      else await this.runFlush(true).catch(() => undefined);
      if (this.failing) break;
    }
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  /** The job has a change not yet committed. */
  pending(job: StoredJob): boolean {
    return this.dirty.has(job);
  }

  /** Ids whose rows are about to change: jobs marked and not yet committed, and deletes not yet committed. */
  pendingIds(): string[] {
    return [...[...this.dirty.keys()].map((j) => j.id), ...this.deletes];
  }

  /**
   * Runs `op` on the store between group commits, never beside one: what is pending when it starts (`pendingIds`)
   * stays pending until it ends. The expiry sweep uses it, so that it never deletes a row a commit is about to write;
   * it deletes in batches, so that each `exclusive` is short and a waiting commit goes between two.
   */
  async exclusive<T>(op: () => Promise<T>): Promise<T> {
    // The commit of those who wait (`durable`) goes first, once: `op` may take a while, and waiters keep coming.
    let gaveWay = false;
    for (;;) {
      if (this.inFlight) await this.inFlight.catch(() => undefined);
      else if (!gaveWay && this.waiters.length > 0 && !this.failing) {
        gaveWay = true;
        this.cancelTimer();
        void this.runFlush().catch(() => undefined); // in flight from here: the loop waits for it
      } else break;
    }
    this.cancelTimer();
    // In flight before `op` starts: a change that `op` itself makes waits for it like any other.
    let done = () => undefined as void;
    this.inFlight = new Promise<void>((r) => (done = r));
    try {
      return await op();
    } finally {
      this.inFlight = null;
      done();
      this.scheduleNext();
    }
  }

  private failing = false;
  private lastFailure: Error | null = null;

  /**
   * The 503 of a database out of reach while the last commit failed with it (the writer tries again every second),
   * else null. New jobs are refused with it: a job held in memory only would keep its caller waiting, and one answered
   * 503 after it was taken could run twice when the caller tries again.
   */
  get outage(): PlatformError | null {
    const e = this.failing ? this.lastFailure : null;
    return e instanceof PlatformError && e.code === 'UNAVAILABLE' ? e : null;
  }

  private schedule(delay: number): void {
    if (this.inFlight || this.closed) return; // the flush in flight schedules the next one when it ends
    const due = Date.now() + delay;
    if (this.timer) {
      if (this.timerDue <= due) return;
      this.cancelTimer();
    }
    this.timerDue = due;
    const fire = () => {
      this.timer = null;
      const wait = this.mayWaitFor();
      if (wait > 0) this.schedule(wait);
      else void this.runFlush().catch(() => undefined);
    };
    // Due now (someone waits and no commit is in flight): once this turn's I/O is read, so that the requests read
    // with it go in the same commit; a timer of 0 ms would wait 1 ms, a pause in every cycle of commits under load.
    if (delay <= 0) {
      const immediate = setImmediate(fire);
      this.timer = { cancel: () => clearImmediate(immediate) };
    } else {
      const timeout = setTimeout(fire, delay);
      this.timer = { cancel: () => clearTimeout(timeout) };
    }
  }

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  /**
   * How long a timed commit may still wait: while every job pending may wait and was marked less than `syncMs` ago,
   * until the oldest of them is due; else 0 (the commit runs and takes them along).
   */
  private mayWaitFor(): number {
    if (this.waiters.length > 0 || this.deletes.size > 0 || this.failing) return 0;
    let first = Infinity;
    for (const [job, since] of this.dirty) {
      if (!rowMayWait(job)) return 0;
      first = Math.min(first, since);
    }
    return first === Infinity ? 0 : first + this.syncMs - Date.now();
  }

  /**
   * Writes the batch in one transaction; when that fails, row by row, so that one row the database refuses never
   * stops the writer (and every later `/run`): the refused rows are left out, named in the error log, and their
   * jobs stay served from memory. A failure of every row (the database itself) is thrown as before.
   */
  private async writeIsolating(batch: JobBatch, jobs: StoredJob[]): Promise<void> {
    try {
      await this.store.writeJobs(batch);
      return;
    } catch (e) {
      if (batch.inserts.length + batch.updates.length <= 1) throw e;
    }
    const single: JobBatch[] = [
      ...batch.inserts.map((r) => ({ inserts: [r], updates: [], deletes: [] })),
      ...batch.updates.map((r) => ({ inserts: [], updates: [r], deletes: [] })),
    ];
    const refused: Array<{ id: string; error: Error }> = [];
    for (const b of single) {
      try {
        await this.store.writeJobs(b);
      } catch (err) {
        refused.push({ id: (b.inserts[0] ?? b.updates[0]).id, error: err instanceof Error ? err : new Error(String(err)) });
      }
    }
    if (refused.length === single.length) throw refused[0].error;
    if (batch.deletes.length) await this.store.writeJobs({ inserts: [], updates: [], deletes: batch.deletes });
    for (const r of refused) {
      const job = jobs.find((j) => j.id === r.id);
      if (job) job.storeState = 'refused';
      this.stats.refused++;
      this.onError(new Error(`job ${r.id} could not be stored and is kept in memory only: ${r.error.message}`));
    }
  }

  /**
   * Commits what is pending. Unless `all` or someone waits, a job whose row may wait and that has not ended stays out
   * (it is about to end: written now, it would be written twice) until its `syncMs` pass.
   */
  private runFlush(all = false): Promise<void> {
    const jobs: StoredJob[] = [];
    const held = new Map<StoredJob, number>();
    const holdFrom = all || this.waiters.length > 0 ? Infinity : Date.now() - this.syncMs;
    for (const [job, since] of this.dirty) {
      if (since > holdFrom && rowMayWait(job) && !job.ended) held.set(job, since);
      else jobs.push(job);
    }
    const deletes = [...this.deletes];
    const waiters = this.waiters;
    this.dirty = held;
    this.deletes = new Set();
    this.waiters = [];
    const batch: JobBatch = { inserts: [], updates: [], deletes };
    const inserted: StoredJob[] = [];
    for (const job of jobs) {
      if (job.storeState === 'stored') batch.updates.push(job.toStateRow());
      else if (job.storeState === 'new') {
        batch.inserts.push(job.toRow());
        job.storeState = 'flushing';
        inserted.push(job);
      } else if (job.storeState === 'flushing') batch.updates.push(job.toStateRow()); // after a failed flush
    }
    const run = (async () => {
      try {
        await this.writeIsolating(batch, jobs);
        this.failing = false;
        this.stats.flushes++;
        this.stats.rows += batch.inserts.length + batch.updates.length + deletes.length;
        for (const j of inserted) if (j.storeState === 'flushing') j.storeState = 'stored';
        for (const w of waiters) w.resolve();
        for (const j of jobs) if (j.storeState === 'stored' && !this.dirty.has(j)) this.onStored(j);
      } catch (err) {
        const e = err instanceof Error ? err : new Error(String(err));
        this.failing = true;
        this.lastFailure = e;
        this.stats.failures++;
        for (const j of inserted) if (j.storeState === 'flushing') j.storeState = 'new';
        for (const j of jobs) if (j.storeState !== 'gone' && !this.dirty.has(j)) this.dirty.set(j, Date.now());
        for (const id of deletes) this.deletes.add(id);
        for (const w of waiters) w.reject(e);
        this.onError(e);
        throw e;
      } finally {
        this.inFlight = null;
        this.scheduleNext();
      }
    })();
    this.inFlight = run;
    return run;
  }

  private scheduleNext(): void {
    if (this.failing) this.schedule(1000);
    else if (this.waiters.length > 0)
      this.schedule(0); // someone waits: the next group commit at once
    else if (this.dirty.size > 0 || this.deletes.size > 0) this.schedule(this.lazyMs);
  }
}
