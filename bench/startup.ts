// How fast each `strato` command answers, whole process included, against a bare `node -e 0` measured in the same
// run: --version, --help, env list/get and platform status against a running platform, build and deploy of the template.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const repo = path.resolve(__dirname, '..');
const cli = path.join(repo, 'dist', 'cli.js');
const RUNS = Number(process.env.RUNS ?? 11);
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

interface Row {
  what: string;
  ms: number;
  rssMiB?: number;
  target?: string;
  met?: boolean;
}

/** Median wall time and median max RSS of a command run RUNS times. */
function measure(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): { ms: number; rssMiB?: number } {
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const r = GNU_TIME
      ? spawnSync(GNU_TIME, ['-f', '%M', process.execPath, ...args], { ...opts, encoding: 'utf8' })
      : spawnSync(process.execPath, args, { ...opts, encoding: 'utf8' });
    times.push(performance.now() - t);
    if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
    const kb = GNU_TIME ? Number(r.stderr.trim().split('\n').pop()) : NaN;
    if (Number.isFinite(kb)) rss.push(kb / 1024);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { ms: median(times), rssMiB: rss.length ? median(rss) : undefined };
}

function main(): void {
  execFileSync(process.execPath, [path.join(repo, 'esbuild.mjs')], { cwd: repo });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strato-bench-startup-'));
  const env = { ...process.env, STRATO_DATA_DIR: path.join(dir, 'data'), STRATO_API_URL: '', STRATO_API_KEY: '', NO_COLOR: '1' };
  const project = path.join(dir, 'tpl');
  execFileSync(process.execPath, [cli, 'init', 'tpl'], { cwd: dir, env });
  execFileSync(process.execPath, [cli, 'platform', 'start', '--port', '0'], { cwd: dir, env, stdio: 'pipe' });
  try {
    execFileSync(process.execPath, [cli, 'deploy'], { cwd: project, env, stdio: 'pipe' });
    const bare = measure(['-e', '0']);
    const rows: Row[] = [{ what: 'node -e 0 (baseline)', ...bare }];
    const ratioTarget = (what: string, args: string[], max: number) => {
      const m = measure([cli, ...args], { cwd: project, env });
      rows.push({ what, ...m, target: `<= ${max}x bare`, met: m.ms / bare.ms <= max });
    };
    const msTarget = (what: string, args: string[], maxMs: number) => {
      const m = measure([cli, ...args], { cwd: project, env });
      rows.push({ what, ...m, target: `< ${maxMs} ms`, met: m.ms < maxMs });
    };
    ratioTarget('strato --version', ['--version'], 1.3);
    ratioTarget('strato --help', ['--help'], 1.3);
    msTarget('strato env list', ['env', 'list'], 200);
    msTarget('strato env get production', ['env', 'get', 'production'], 200);
    msTarget('strato platform status', ['platform', 'status'], 200);
    msTarget('strato build (template)', ['build'], 251);
    msTarget('strato deploy (template, running platform)', ['deploy'], 500);
    const build = rows.find((r) => r.what.startsWith('strato build'))!;
    console.log(`median of ${RUNS} runs each, whole process; reference product's template build: 2510 ms, 82 MiB (issue #18)`);
    console.log(`${'command'.padEnd(44)} ${'ms'.padStart(7)} ${'x bare'.padStart(7)} ${'max RSS'.padStart(9)}  target`);
    for (const r of rows) {
      const rss = r.rssMiB === undefined ? '' : `${r.rssMiB.toFixed(0)} MiB`;
      const verdict = r.target ? `${r.target}: ${r.met ? 'met' : 'MISSED'}` : '';
      console.log(`${r.what.padEnd(44)} ${r.ms.toFixed(0).padStart(7)} ${(r.ms / bare.ms).toFixed(2).padStart(7)} ${rss.padStart(9)}  ${verdict}`);
    }
    if (build.rssMiB !== undefined) console.log(`build memory against the reference's 82 MiB: ${(build.rssMiB / 82).toFixed(2)}x`);
  } finally {
    spawnSync(process.execPath, [cli, 'platform', 'stop'], { cwd: dir, env, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
