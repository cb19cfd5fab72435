// `strato dev` reload: time from saving a worker file to the first call served with the new code, beside a
// warm call of the same route with no change (the floor), measured in the same run. Target: under 300 ms.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startPlatform } from '../engine/src/platform/platform';

const repo = path.resolve(__dirname, '..');
const cli = path.join(repo, 'dist', 'cli.js');

async function call(port: number, n: number): Promise<{ ms: number; body: any }> {
  const t = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/cpu_worker/runsync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: { numbers: [n] } }),
  });
  const body = await res.json();
  return { ms: performance.now() - t, body };
}

async function main() {
  execFileSync(process.execPath, [path.join(repo, 'esbuild.mjs')], { cwd: repo });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-bench-reload-'));
  const platform = await startPlatform({ dataDir: path.join(tmp, 'data'), port: 0, apiKey: 'bench-key', writeStateFile: false, log: () => {} });
  execFileSync(process.execPath, [cli, 'init', 'app'], { cwd: tmp });
  const dir = path.join(tmp, 'app');
  const port = 41000 + Math.floor(Math.random() * 5000);
  const dev = spawn(process.execPath, [cli, 'dev', '--host', '127.0.0.1', '--port', String(port)], {
    cwd: dir,
    env: { ...process.env, STRATO_API_URL: platform.url, STRATO_API_KEY: platform.apiKey },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      dev.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('API explorer')) resolve();
      });
      dev.on('exit', () => reject(new Error('strato dev exited')));
    });
    const file = path.join(dir, 'cpu_worker.py');
    const original = readFileSync(file, 'utf8');
    for (let i = 0; i < 3; i++) await call(port, 1); // provision and warm up
    const warm: number[] = [];
    for (let i = 0; i < 20; i++) warm.push((await call(port, i)).ms);
    const reload: number[] = [];
    for (let i = 0; i < 10; i++) {
      writeFileSync(file, original.replace('"count": len(numbers),', `"count": len(numbers),\n        "rev": ${i},`));
      const t = performance.now();
      const r = await call(port, i);
      if (r.body?.output?.rev !== i) throw new Error(`the call after save ${i} did not run the new code: ${JSON.stringify(r.body)}`);
      reload.push(performance.now() - t);
      await call(port, i); // settle
    }
    const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
    console.log('strato dev: save a worker file, then call it (the first response already runs the saved code)');
    console.log(
      `  save -> first call served  p50 ${pct(reload, 0.5).toFixed(0)} ms  max ${pct(reload, 1).toFixed(0)} ms  (target < 300 ms: ` +
        `${pct(reload, 0.5) < 300 ? 'met' : 'MISSED'})`,
    );
    console.log(`  warm call, no change       p50 ${pct(warm, 0.5).toFixed(1)} ms  (baseline)`);
    console.log(`  ratio                      ${(pct(reload, 0.5) / pct(warm, 0.5)).toFixed(1)}x the warm call`);
  } finally {
    dev.kill('SIGINT');
    await new Promise((r) => dev.once('exit', r));
    await platform.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
