// Requests that wait for something to happen to a key (an endpoint's next log line, its first ready worker): each
// resolves when the key is woken, after its own time limit, or when its signal aborts; a woken key forgets its waiters.
export class Waiters {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Resolves when `key` is woken, after `ms`, or when `signal` aborts; never rejects. */
  wait(key: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      let set = this.waiting.get(key);
      if (!set) this.waiting.set(key, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0 && this.waiting.get(key) === set) this.waiting.delete(key);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      signal?.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }

  wake(key: string): void {
    const set = this.waiting.get(key);
    if (set) for (const done of [...set]) done();
  }

  /** Answers every waiting request now (the platform is closing). */
  wakeAll(): void {
    for (const key of [...this.waiting.keys()]) this.wake(key);
  }
}
