// `strato deploy` of the init template to the embedded platform, end to end through the CLI (first deploy and
// a redeploy after a source change), beside `strato build` of the same project measured in the same run.
// Target: deploy under 2 s (the reference product takes tens of seconds); bench/startup.ts holds the < 0.5 s one.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startPlatform } from '../engine/src/platform/platform';
import { timeStrato } from './strato';
import { report, verdict } from './report';

const repo = path.resolve(__dirname, '..');

async function main() {
  execFileSync(process.execPath, [path.join(repo, 'esbuild.mjs')], { cwd: repo });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-bench-deploy-'));
  const platform = await startPlatform({ dataDir: path.join(tmp, 'data'), port: 0, apiKey: 'bench-key', writeStateFile: false, log: () => {} });
  const env = { STRATO_API_URL: platform.url, STRATO_API_KEY: platform.apiKey };
  try {
    const runs = 5;
    const first: number[] = [];
    const redeploy: number[] = [];
    const build: number[] = [];
    for (let i = 0; i < runs; i++) {
      execFileSync(process.execPath, [path.join(repo, 'dist', 'cli.js'), 'init', `app${i}`], { cwd: tmp });
      const dir = path.join(tmp, `app${i}`);
      build.push(await timeStrato(['build'], dir, env));
      first.push(await timeStrato(['deploy'], dir, env));
      const f = path.join(dir, 'cpu_worker.py');
      writeFileSync(f, readFileSync(f, 'utf8') + '\n# changed\n');
      redeploy.push(await timeStrato(['deploy'], dir, env));
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.log('strato deploy of the init template to the embedded platform (whole CLI command, median of 5)');
    console.log(`  first deploy   ${med(first).toFixed(0)} ms  (target < 2000 ms: ${med(first) < 2000 ? 'met' : 'MISSED'})`);
    console.log(`  redeploy       ${med(redeploy).toFixed(0)} ms  (source change: 3 endpoints updated, workers rolled)`);
    console.log(`  build alone    ${med(build).toFixed(0)} ms  (baseline)`);
    console.log(`  ratio          ${(med(first) / med(build)).toFixed(2)}x the build alone`);
    const baseline = `strato build alone: ${med(build).toFixed(0)} ms`;
    report('deploy', [
      {
        what: 'first deploy of the template',
        value: `${med(first).toFixed(0)} ms`,
        baseline,
        ratio: `${(med(first) / med(build)).toFixed(2)}x`,
        target: `< 2 s: ${verdict(med(first) < 2000)}`,
      },
      { what: 'redeploy after a source change', value: `${med(redeploy).toFixed(0)} ms`, baseline, ratio: `${(med(redeploy) / med(build)).toFixed(2)}x` },
    ]);
  } finally {
    await platform.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
