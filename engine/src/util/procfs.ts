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
