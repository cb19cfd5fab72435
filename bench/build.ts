// `strato build` of the init template (no dependencies), through the real CLI bundle, against a baseline in
// the same run: `node -e ''` (the cost of starting Node at all). Target: template build under 0.5 s.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const repo = path.resolve(__dirname, '..');
const cli = path.join(repo, 'dist', 'cli.js');

function time(fn: () => void, runs: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    out.push(performance.now() - t);
  }
  return out.sort((a, b) => a - b);
}

function main() {
  execFileSync(process.execPath, [path.join(repo, 'esbuild.mjs')], { cwd: repo });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strato-bench-build-'));
  execFileSync(process.execPath, [cli, 'init', 'tpl'], { cwd: dir });
  const project = path.join(dir, 'tpl');
  const runs = 10;
  const build = time(() => execFileSync(process.execPath, [cli, 'build'], { cwd: project, stdio: 'pipe' }), runs);
  const floor = time(() => execFileSync(process.execPath, ['-e', ''], { stdio: 'pipe' }), runs);
  const p50 = (xs: number[]) => xs[Math.floor(xs.length / 2)];
  console.log('strato build of the init template (whole command, including Node start)');
  console.log(
    `  build     p50 ${p50(build).toFixed(0)} ms  min ${build[0].toFixed(0)} ms  max ${build[build.length - 1].toFixed(0)} ms  (target < 500 ms: ` +
      `${p50(build) < 500 ? 'met' : 'MISSED'})`,
  );
  console.log(`  node -e   p50 ${p50(floor).toFixed(0)} ms  (baseline: starting Node)`);
  console.log(`  ratio     ${(p50(build) / p50(floor)).toFixed(2)}x the bare Node start`);
  rmSync(dir, { recursive: true, force: true });
}

main();
