// Runs the benchmarks in bench/ (all, or those whose name contains an argument), each printing its own figures as it
// goes, then prints the headline figures of all of them in one table, each beside its baseline from the same run.
// Arguments starting with `--` go to every bench (`--bundle`: the platform runs dist/cli.js, bench/strato.ts).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';

const filters = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const HELPERS = new Set(['report.ts', 'clusterBed.ts', 'clusterGauges.ts', 'floors.ts', 'strato.ts']);
const files = readdirSync('bench')
  .filter((f) => /\.(ts|mjs)$/.test(f) && !HELPERS.has(f) && (filters.length === 0 || filters.some((x) => f.includes(x))))
  .sort();
const dir = mkdtempSync(path.join(os.tmpdir(), 'strato-bench-rows-'));
const rowsFile = path.join(dir, 'rows.jsonl');
let failed = 0;
const outcome = new Map();
for (const f of files) {
  console.log(`\n### bench/${f}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${f}`, ...flags], {
    stdio: 'inherit',
    env: { ...process.env, STRATO_BENCH_ROWS: rowsFile },
  });
  if (r.status !== 0) failed++;
  outcome.set(f.replace(/\.(ts|mjs)$/, ''), r.status === 0 ? 'ok' : 'FAILED');
}
let rows = [];
try {
  rows = readFileSync(rowsFile, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
} catch {
  // no bench reported a figure
}
rmSync(dir, { recursive: true, force: true });

const table = [
  ['bench', 'figure', 'value', 'baseline (same run)', 'ratio', 'target'],
  ...rows.map((r) => [r.bench, r.what, r.value, r.baseline, r.ratio ?? '', r.target ?? '']),
];
for (const [bench, status] of outcome)
  if (!rows.some((r) => r.bench === bench)) table.push([bench, status === 'ok' ? '(figures above)' : 'FAILED', '', '', '', '']);
const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
const line = (row) =>
  row
    .map((c, i) => c.padEnd(widths[i]))
    .join('  ')
    .trimEnd();
console.log(`\n### all figures (medians unless said; ${os.cpus().length} cores, Node ${process.version})`);
console.log(line(table[0]));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const row of table.slice(1)) console.log(line(row));
process.exit(failed ? 1 : 0);
