// How fast each `strato` command answers, whole process included, against a bare `node -e 0` measured in the same
// run: --version, --help, env list/get and platform status against a running platform, build of the init template
// (time and max RSS, beside the reference product's), and deploy of the template beside `deploy --wait` (the command
// line as it was before deploy stopped waiting for the minimum workers).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { report, verdict } from './report';

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
  /** The row it is compared with, when not the bare Node start. */
  against?: string;
}

/** Median wall time and median max RSS of a command run RUNS times; `settle` runs untimed before each run. */
function measure(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}, settle?: () => void): { ms: number; rssMiB?: number } {
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    settle?.();
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
    // Each deploy rolls the workers: a run waits until the previous one's have started (untimed), so that it does not
    // measure Python processes starting beside it; what `deploy --wait` includes, and `deploy` does not.
    const settle = () => execFileSync(process.execPath, [cli, 'deploy', '--wait'], { cwd: project, env, stdio: 'pipe' });
    settle();
    const bare = measure(['-e', '0']);
    const rows: Row[] = [{ what: 'node -e 0 (baseline)', ...bare }];
    const ratioTarget = (what: string, args: string[], max: number) => {
      const m = measure([cli, ...args], { cwd: project, env });
      rows.push({ what, ...m, target: `<= ${max}x bare`, met: m.ms / bare.ms <= max });
    };
    const msTarget = (what: string, args: string[], maxMs: number, before?: () => void) => {
      const m = measure([cli, ...args], { cwd: project, env }, before);
      rows.push({ what, ...m, target: `< ${maxMs} ms`, met: m.ms < maxMs });
    };
    ratioTarget('strato --version', ['--version'], 1.3);
    ratioTarget('strato --help', ['--help'], 1.3);
    msTarget('strato env list', ['env', 'list'], 200);
    msTarget('strato env get production', ['env', 'get', 'production'], 200);
    msTarget('strato platform status', ['platform', 'status'], 200);
    msTarget('strato build (template)', ['build'], 251);
    msTarget('strato deploy --wait (as before)', ['deploy', '--wait'], Infinity);
    rows[rows.length - 1].target = undefined;
    msTarget('strato deploy (template, running platform)', ['deploy'], 500, settle);
    rows[rows.length - 1].against = 'strato deploy --wait (as before)';
    const build = rows.find((r) => r.what.startsWith('strato build'))!;
    console.log(`median of ${RUNS} runs each, whole process; reference product's template build: 2510 ms, 82 MiB (issue #18)`);
    console.log(`${'command'.padEnd(44)} ${'ms'.padStart(7)} ${'x bare'.padStart(7)} ${'max RSS'.padStart(9)}  target`);
    for (const r of rows) {
      const rss = r.rssMiB === undefined ? '' : `${r.rssMiB.toFixed(0)} MiB`;
      const verdict = r.target ? `${r.target}: ${r.met ? 'met' : 'MISSED'}` : '';
      console.log(`${r.what.padEnd(44)} ${r.ms.toFixed(0).padStart(7)} ${(r.ms / bare.ms).toFixed(2).padStart(7)} ${rss.padStart(9)}  ${verdict}`);
    }
    if (build.rssMiB !== undefined) console.log(`build memory against the reference's 82 MiB: ${(build.rssMiB / 82).toFixed(2)}x`);
    report(
      'startup',
      rows.slice(1).map((r) => {
        const base = r.against ? rows.find((x) => x.what === r.against)! : bare;
        return {
          what: r.what,
          value: `${r.ms.toFixed(0)} ms${r.rssMiB === undefined ? '' : `, ${r.rssMiB.toFixed(0)} MiB`}`,
          baseline: `${r.against ?? 'node -e 0'}: ${base.ms.toFixed(0)} ms${!r.against && base.rssMiB !== undefined ? `, ${base.rssMiB.toFixed(0)} MiB` : ''}`,
          ratio: `${(r.ms / base.ms).toFixed(2)}x`,
          target: r.target ? `${r.target}: ${verdict(r.met!)}` : undefined,
        };
      }),
    );
    if (build.rssMiB !== undefined)
      report('startup', [
        {
          what: 'strato build (template), against the reference',
          value: `${build.ms.toFixed(0)} ms, ${build.rssMiB.toFixed(0)} MiB`,
          baseline: 'reference product (issue 18): 2510 ms, 82 MiB',
          ratio: `${(build.ms / 2510).toFixed(2)}x time, ${(build.rssMiB / 82).toFixed(2)}x memory`,
          target: `<= 0.1x time, <= 1x memory: ${verdict(build.ms <= 251 && build.rssMiB <= 82)}`,
        },
      ]);
  } finally {
    spawnSync(process.execPath, [cli, 'platform', 'stop'], { cwd: dir, env, stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
