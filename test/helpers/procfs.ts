// What Linux's /proc says of processes, for the benches and the tests that clean up after themselves: their ids,
// command lines, CPU time and descendants. Elsewhere (no /proc) each answers nothing rather than throwing.
import fs from 'node:fs';
import { processStat } from '../../engine/src/util/procfs';

export { processStat };

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
