// Start failures of one endpoint's workers on this node, per endpoint revision: the back-off between starts, the
// error health shows (`lastError`), and when its queued jobs fail rather than wait for a worker that cannot start.
// A new revision (a fix deployed) starts with none: what the old one's workers did to start says nothing of it.

/** Failed starts in a row of one revision after which its queued jobs fail. */
export const FAILURES_BEFORE_FAILING_JOBS = 3;
/** The longest wait between two starts after failures (it doubles from 250 ms). */
const MAX_BACKOFF_MS = 30_000;

export class StartFailures {
  private revision = -1;
  private count = 0;
  private error: string | null = null;
  /** No worker starts before this time (Date.now() ms): the back-off after failures. */
  nextStartAt = 0;

  /** The endpoint's current revision: a new one forgets the failures of the old. */
  follow(revision: number): void {
    if (revision === this.revision) return;
    this.revision = revision;
    this.count = 0;
    this.error = null;
    this.nextStartAt = 0;
  }

  /** A worker became ready: its revision starts. */
  cleared(): void {
    this.count = 0;
    this.error = null;
  }

  /** How many workers of `revision` in a row ended before they were ready (0 for another revision). */
  failures(revision: number | undefined): number {
    return revision === this.revision ? this.count : 0;
  }

  /** Why the workers of `revision` fail to start, if they do (an older revision's failure says nothing). */
  lastError(revision: number | undefined): string | null {
    return revision === this.revision ? this.error : null;
  }

  /** A worker of `revision` ended before it was ready: backs off; true once its queued jobs are to fail. */
  failed(revision: number, error: string, now = Date.now()): boolean {
    this.follow(revision);
    this.count++;
    this.error = error;
    this.nextStartAt = now + Math.min(MAX_BACKOFF_MS, 250 * 2 ** (this.count - 1));
    return this.count >= FAILURES_BEFORE_FAILING_JOBS;
  }
}
