// Runs the benchmarks in bench/ (all, or those whose name contains an argument) and prints their figures.
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const filters = process.argv.slice(2);
const files = readdirSync('bench')
  .filter((f) => /\.(ts|mjs)$/.test(f) && f !== 'tsconfig.json' && (filters.length === 0 || filters.some((x) => f.includes(x))))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n### bench/${f}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${f}`], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
