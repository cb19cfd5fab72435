// A task whose overlapping calls share runs, as the views' refresh needs: a call while a run is under way waits for
// one more run after it (that run may have read the state before the change the caller wants to see), and every call
// that arrives meanwhile shares that same next run. Each call ends after at most two runs.

export class Coalesced<T> {
  private current: Promise<T> | undefined;
  private next: Promise<T> | undefined;

  constructor(private readonly task: () => Promise<T>) {}

  /** Whether a run is under way. */
  get running(): boolean {
    return this.current !== undefined;
  }

  run(): Promise<T> {
    if (!this.current) {
      const run: Promise<T> = this.task().finally(() => {
        if (this.current === run) this.current = undefined;
      });
      this.current = run;
      return run;
    }
    this.next ??= this.current.then(
      () => this.startNext(),
      () => this.startNext(),
    );
    return this.next;
  }

  private startNext(): Promise<T> {
    this.next = undefined;
    return this.run();
  }
}
