// What Linux's /proc says of processes, for the benches and the tests that clean up after themselves: their ids,
// command lines, CPU time and descendants. Elsewhere (no /proc) each answers nothing rather than throwing.
import fs from 'node:fs';

/** What /proc says of a process, or of one of its threads (Linux; undefined elsewhere, or once it is gone). */
export function processStat(pid: number, tid?: number): { comm: string; state: string; ppid: number; pgid: number; cpuMs: number } | undefined {
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
    state: f[0], // R, S, D... Z: ended, not yet reaped
    ppid: Number(f[1]),
    pgid: Number(f[2]),
    cpuMs: (Number(f[11]) + Number(f[12])) * 10,
  };
}

/** The ids of the processes running now (Linux /proc; none elsewhere). */
export function processIds(): number[] {
  try {
    return fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return [];
  }
}

/** A process's command line, its arguments joined by spaces ('' once it is gone, or where there is no /proc). */
export function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** The processes descended from `pid`, children first (Linux). */
export function descendants(pid: number): number[] {
  const children = processIds().filter((p) => processStat(p)?.ppid === pid);
  return children.flatMap((c) => [c, ...descendants(c)]);
}
