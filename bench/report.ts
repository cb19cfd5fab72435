// One figure of a bench, beside the baseline measured in the same run. Each bench prints its own lines as it goes and
// hands its headline figures here too: under `npm run bench` (scripts/run-bench.mjs sets STRATO_BENCH_ROWS) they are
// appended to a file, and the runner prints every bench's figures in one table at the end.
import { appendFileSync } from 'node:fs';

export interface Figure {
  /** What was measured, e.g. "strato --version". */
  what: string;
  /** The figure, with its unit: "152 ms", "3,600 jobs/s". */
  value: string;
  /** The baseline and its figure, from the same run: "node -e 0: 118 ms". */
  baseline: string;
  /** The figure against the baseline, e.g. "1.29x". */
  ratio?: string;
  /** The target and whether it was met, e.g. "<= 1.3x bare: met". */
  target?: string;
}

export function report(bench: string, figures: readonly Figure[]): void {
  const file = process.env.STRATO_BENCH_ROWS;
  if (!file) return;
  for (const f of figures) appendFileSync(file, JSON.stringify({ bench, ...f }) + '\n');
}

/** "met" or "MISSED", for a target column. */
export const verdict = (met: boolean): string => (met ? 'met' : 'MISSED');

/** The middle value; of an even count, the mean of the two middle ones. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
