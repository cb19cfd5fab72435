// What Linux's /proc says of a process: the scheduler tells a busy worker from a stuck one by its CPU time, and the
// tests and benches read the same. Elsewhere (no /proc) it answers nothing rather than throwing.
import fs from 'node:fs';

export interface ProcessStat {
  comm: string;
  /** R, S, D... T: stopped; Z: ended, not yet reaped. */
  state: string;
  ppid: number;
  pgid: number;
  /** CPU time used, user and system, in ms (10 ms steps). */
  cpuMs: number;
}

/** What /proc says of a process, or of one of its threads (Linux; undefined elsewhere, or once it is gone). */
export function processStat(pid: number, tid?: number): ProcessStat | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are in clock ticks of 1/100 s (USER_HZ)
  return {
    comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    state: f[0],
    ppid: Number(f[1]),
    pgid: Number(f[2]),
    cpuMs: (Number(f[11]) + Number(f[12])) * 10,
  };
}

/**
 * When a process started (ms since the epoch, to about 10 ms and the second of the boot time), from its start in clock
 * ticks after boot (USER_HZ 100) and the boot time; undefined where /proc does not say. A pid recorded in a file may
 * since belong to another process (a reboot, pids reused): one that started after the record was written is not it.
 */
export function processStartedAt(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    const boot = Number(/^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))?.[1]);
    return Number.isFinite(ticks) && Number.isFinite(boot) && boot > 0 ? boot * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}
