// The heartbeat watchdog's judgement of a worker whose heartbeats are late: busy, or stuck and to be replaced.
// Python's threads stop together: a handler, or its output's encoding, in one long call of C code (a huge regex, an
// extension) holds the GIL and stops the heartbeat's thread too. Such a worker is working: its process keeps using
// CPU, and its jobs go on until their execution timeout. One whose process uses no CPU (stopped, deadlocked, waiting
// for something that never comes), or that has no work, is replaced and its jobs run again.
import { processStat } from '../../util/procfs';
import { isBusy, type Worker } from './worker';

/** How long a worker may send no heartbeat before it is judged. */
export const hungAfterMs = (heartbeatMs: number) => Math.max(3 * heartbeatMs, 5000);

/** A late worker that is computing (`first`: the first time it is found so), or stuck, with why. */
export type Lateness = { computing: true; first: boolean } | { computing: false; why: string };

/**
 * Judges a worker by its heartbeats, each watchdog tick: undefined while they are on time. Once it sent none for half
 * of `hungAfter`, its process's CPU time is sampled (on this machine, while it has work); once it sent none for
 * `hungAfter`, it is computing while that CPU time grew within the last half of `hungAfter`, else stuck. A worker
 * host's or a container's worker is judged by its heartbeats alone.
 */
export function judgeLate(w: Worker, now: number, hungAfter: number): Lateness | undefined {
  const quiet = now - w.lastSeen;
  if (quiet <= hungAfter / 2) {
    w.lateCpu = undefined;
    return undefined;
  }
  const pid = (w.hostId ?? 'local') === 'local' && isBusy(w) ? w.process?.pid : undefined;
  const cpu = pid === undefined ? undefined : processStat(pid)?.cpuMs;
  // The first sample is a baseline, not CPU used: a worker stopped just after it last worked must not read as computing.
  if (cpu !== undefined && !w.lateCpu) w.lateCpu = { ms: cpu, told: false };
  else if (cpu !== undefined && w.lateCpu && cpu > w.lateCpu.ms) w.lateCpu = { ms: cpu, at: now, told: w.lateCpu.told };
  if (quiet <= hungAfter) return undefined;
  const s = Math.round(hungAfter / 1000);
  if (cpu === undefined || !w.lateCpu)
    return {
      computing: false,
      why:
        `worker ${w.id} stopped responding (no heartbeat for ${s} s: a handler holding Python's GIL in one long call of C code stops ` +
        'every thread of its worker, the heartbeat too; release it, e.g. split the call, or run it in a subprocess)',
    };
  if (w.lateCpu.at !== undefined && now - w.lateCpu.at < hungAfter / 2) {
    const first = !w.lateCpu.told;
    w.lateCpu.told = true;
    return { computing: true, first };
  }
  return {
    computing: false,
    why: `worker ${w.id} stopped responding (no heartbeat for ${s} s, and its process used no CPU meanwhile: stopped, or waiting for something that never came)`,
  };
}
