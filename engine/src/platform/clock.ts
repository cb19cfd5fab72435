// Time as the platform sees it. Retention and expiry read `now()` from an injected clock so tests can move
// time forward instead of waiting 30 minutes; timers (timeouts, long-polls) still use real time.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand: starts at the real time, then only advances when told. */
export class ManualClock implements Clock {
  private t: number;
  constructor(start = Date.now()) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
