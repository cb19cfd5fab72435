// `strato deploy --preview` of the init template (three endpoints, base images present) on a real Docker engine of
// the bench's own: from the command to every endpoint answering, with the split per step, beside a bare container
// (create, start, Python answers, remove) measured in the same run. Target: under 5 s.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createContainer, removeContainer, startContainer, waitContainer } from '../engine/src/containers';
import { dockerdMissing, startDockerd } from '../test/helpers/dockerd';

const repo = path.resolve(__dirname, '..');
const cli = path.join(repo, 'dist', 'cli.js');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function answers(url: string, key: string, body: unknown): Promise<boolean> {
  try {
    const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return r.status === 200;
  } catch {
    return false;
  }
}

/** One preview: ms from spawning the command to all three endpoints answering, and each step's ms. */
async function once(dir: string, env: NodeJS.ProcessEnv): Promise<{ total: number; steps: Record<string, number> }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [cli, 'deploy', '--preview'], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', () => {});
  try {
    while (!out.includes('Preview running.')) {
      if (child.exitCode !== null || performance.now() - t0 > 60_000) throw new Error(`preview did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const key = /export STRATO_API_KEY=(\S+)/.exec(out)![1];
    const url = (name: string) => new RegExp(`^  ${name}  \\[[^\\]]+\\]  (\\S+)$`, 'm').exec(out)![1];
    const calls: Array<[string, unknown]> = [
      [url('cpu-stats'), { input: { numbers: [1] } }],
      [url('gpu-hello'), { input: { prompt: 'x', repeat: 1 } }],
      [`${url('lb-api')}/process`, { text: 'x' }],
    ];
    await Promise.all(
      calls.map(async ([u, b]) => {
        while (!(await answers(u, key, b))) await new Promise((r) => setTimeout(r, 20));
      }),
    );
    const total = performance.now() - t0;
    const steps = Object.fromEntries([...out.matchAll(/^✓ (\S+) .* (\d+) ms$/gm)].map((m) => [m[1], Number(m[2])]));
    return { total, steps };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGINT');
    await exited;
  }
}

async function main() {
  const missing = dockerdMissing();
  if (missing) {
    console.log(`skipped: ${missing}`);
    return;
  }
  execFileSync(process.execPath, [path.join(repo, 'esbuild.mjs')], { cwd: repo });
  const d = await startDockerd();
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-bench-preview-'));
  try {
    const env = { DOCKER_HOST: d.host, STRATO_API_KEY: '', STRATO_API_URL: '', STRATO_DATA_DIR: path.join(tmp, 'data') };
    execFileSync(process.execPath, [cli, 'preview', 'image'], { cwd: tmp, env: { ...process.env, ...env } });
    execFileSync(process.execPath, [cli, 'init', 'shop'], { cwd: tmp });
    const dir = path.join(tmp, 'shop');
    await once(dir, env); // warm-up: the database template and the page cache
    const runs = 3;
    const results = [];
    for (let i = 0; i < runs; i++) results.push(await once(dir, env));
    // Baseline: one bare container of the same image, from create to Python's answer to removal.
    const bare: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const id = await createContainer(d.engine, {
        name: `bench-bare-${i}`,
        image: 'strato/worker-cpu:py3.11',
        cmd: ['python3', '-c', 'print(1)'],
        env: {},
        labels: {},
      });
      await startContainer(d.engine, id);
      await waitContainer(d.engine, id);
      await removeContainer(d.engine, id);
      bare.push(performance.now() - t);
    }
    const total = median(results.map((r) => r.total));
    console.log(
      `preview, 3 endpoints, command to every endpoint answering: median ${Math.round(total)} ms over ${runs} runs ` +
        `(${results.map((r) => Math.round(r.total)).join(', ')}); target < 5000 ms`,
    );
    for (const step of ['build', 'images', 'network', 'containers', 'ready'])
      console.log(`  ${step.padEnd(10)} median ${String(median(results.map((r) => r.steps[step] ?? 0))).padStart(5)} ms`);
    const b = median(bare);
    console.log(
      `baseline: one bare container (create, start, python answers, remove) median ${Math.round(b)} ms; preview = ${(total / b).toFixed(1)}x one ` +
        `bare container`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    await d.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
