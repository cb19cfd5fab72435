// The GPU check of issue #11 on a machine with a real NVIDIA GPU and PyTorch (a lent device machine; CI has no GPU, so
// test/platform/gpus.test.ts checks the same rules with fake GPUs). It runs Strato as a user does: `strato platform
// serve`, `strato deploy --wait` of a project whose endpoints run real CUDA programs, the jobs API, and checks:
// - the GPU nvidia-smi names is the one the workers see (CUDA_VISIBLE_DEVICES, torch's device name and count), and a
//   matrix product on it gives the right answer;
// - a worker holds its GPU alone: three jobs of an endpoint that wants three workers run in one worker on a one-GPU
//   machine; another GPU endpoint waits, its health saying why, and runs once the GPU is free; nvidia-smi never shows
//   more processes on the GPU than there are GPUs;
// - a CPU endpoint sees no GPU; an endpoint asking for another kind of GPU runs on the one there is, and says so.
// Usage (after npm run build): node scripts/device/gpu-check.mjs. Prints figures; exits 1 on the first failed check.
// Without nvidia-smi it runs as a rehearsal against STRATO_GPUS (the engine's override) and whatever `torch` imports.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';

// Node's own fetch: this script runs where there is no node_modules.
const { fetch } = globalThis;

const REPO = path.resolve(import.meta.dirname, '..', '..');
const CLI = path.join(REPO, 'dist', 'cli.js');
const PYTHON = process.env.STRATO_PYTHON || 'python3';
const KEY = 'gpu-check-key-0123456789';
const catalog = JSON.parse(fs.readFileSync(path.join(REPO, 'engine', 'src', 'catalog', 'catalog.json'), 'utf8'));
const children = [];
let failed = 0;

function check(ok, what, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'}  ${what}${detail ? `: ${detail}` : ''}`);
  if (!ok) failed++;
  return ok;
}

/** GPU names as nvidia-smi lists them, or STRATO_GPUS in a rehearsal. */
function gpuNames() {
  const r = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' });
  if (r.status === 0)
    return {
      real: true,
      names: r.stdout
        .split('\n')
        .filter((l) => /^GPU \d+:/.test(l))
        .map((l) => l.replace(/^GPU \d+:\s*/, '').replace(/\s*\(UUID.*$/, '')),
    };
  if (process.env.STRATO_GPUS) return { real: false, names: process.env.STRATO_GPUS.split(',') };
  throw new Error('no nvidia-smi and no STRATO_GPUS: this check needs a machine with an NVIDIA GPU');
}

/** PIDs of processes on the GPUs now (nvidia-smi), or null where it cannot say. */
function computeApps() {
  const r = spawnSync('nvidia-smi', ['--query-compute-apps=pid', '--format=csv,noheader'], { encoding: 'utf8' });
  if (r.status !== 0) return null;
  return r.stdout.split('\n').filter((l) => /^\d+/.test(l.trim())).length;
}

const WORKER = (kind, otherKind) => `import os
import time

import torch  # at the top, as many users write it: warm templates import it before they fork a worker

from strato import CpuInstanceType, Endpoint


def _on_gpu(seconds):
    """A real CUDA program: a matrix product on the GPU this worker was given, checked, and what it saw."""
    n = 4096
    c = torch.full((n, n), 2.0, device="cuda") @ torch.full((n, n), 3.0, device="cuda")
    torch.cuda.synchronize()
    time.sleep(seconds)
    return {
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "cuda_device_order": os.environ.get("CUDA_DEVICE_ORDER"),
        "device_count": torch.cuda.device_count(),
        "name": torch.cuda.get_device_name(0),
        "product": float(c[0, 0].item()),
        "expected": 6.0 * n,
        "pid": os.getpid(),
    }


@Endpoint(name="gpu-probe", gpu="${kind}", workers=(0, 3), idle_timeout=2, scaler_type="REQUEST_COUNT", scaler_value=1)
def gpu_probe(seconds: float = 0.0) -> dict:
    return _on_gpu(seconds)


@Endpoint(name="gpu-other", gpu="${kind}", workers=(0, 1), idle_timeout=2)
def gpu_other(seconds: float = 0.0) -> dict:
    return _on_gpu(seconds)


@Endpoint(name="gpu-wrong-kind", gpu="${otherKind}", workers=(0, 1), idle_timeout=2)
def gpu_wrong_kind(seconds: float = 0.0) -> dict:
    return _on_gpu(seconds)


@Endpoint(name="cpu-probe", cpu=CpuInstanceType.CPU3C_1_2, workers=(0, 1))
def cpu_probe() -> dict:
    return {
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "cuda_available": torch.cuda.is_available(),
        "device_count": torch.cuda.device_count(),
    }
`;

function startPlatform(dataDir) {
  const child = spawn(process.execPath, [CLI, 'platform', 'serve', '--data-dir', dataDir, '--port', '0', '--api-key', KEY, '--python', PYTHON], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the platform did not start in 60 s:\n${out}`)), 60_000);
    const on = (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    child.on('exit', (code) => reject(new Error(`the platform exited (${code}):\n${out}`)));
  });
}

function strato(args, cwd, env) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, encoding: 'utf8', timeout: 180_000 });
  if (r.status !== 0) throw new Error(`strato ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

async function call(method, url, body) {
  const r = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${text}`);
  return JSON.parse(text);
}

async function main() {
  const gpus = gpuNames();
  const model = gpus.names[0];
  const group = catalog.gpuGroups.find((g) => g.models.includes(model));
  const kind = group?.id ?? 'any';
  const otherKind = catalog.gpuGroups.find((g) => g.id !== 'any' && !g.models.includes(model)).id;
  console.log(
    `gpu check: ${gpus.real ? 'nvidia-smi' : 'REHEARSAL (STRATO_GPUS, no nvidia-smi)'} lists ${gpus.names.length} GPU(s): ${gpus.names.join(', ')}; ` +
      `endpoints ask for ${kind}${group ? '' : ' (the model is not in the catalog)'}, the wrong-kind one for ${otherKind}; Node ${process.version}, ${os.cpus().length} cores`,
  );
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-gpu-check-'));
  const project = path.join(tmp, 'gpu-check');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'gpu_worker.py'), WORKER(kind, otherKind));
  fs.writeFileSync(path.join(project, 'pyproject.toml'), '[project]\nname = "gpu-check"\n');
  try {
    const url = await startPlatform(path.join(tmp, 'data'));
    const env = { STRATO_API_URL: url, STRATO_API_KEY: KEY, STRATO_DATA_DIR: path.join(tmp, 'user') };
    let t = performance.now();
    strato(['deploy', '--wait'], project, env);
    console.log(`deployed in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    const eps = Object.fromEntries(JSON.parse(strato(['env', 'get', 'production', '--json'], project, env)).endpoints.map((e) => [e.name, e]));
    const note = async (name) =>
      (await call('POST', `${url}/graphql`, { query: 'query($id: ID!) { endpoint(id: $id) { health { hardwareNote } } }', variables: { id: eps[name].id } }))
        .data.endpoint.health.hardwareNote;
    const health = async (name) => call('GET', `${eps[name].url}/health`);
    const status = async (name, id) => call('GET', `${eps[name].url}/status/${id}`);

    // 1. Three jobs for an endpoint that wants a worker per job, and one for another GPU endpoint, all at once.
    t = performance.now();
    const probeJobs = [];
    for (let i = 0; i < 3; i++) probeJobs.push((await call('POST', `${eps['gpu-probe'].url}/run`, { input: { seconds: 2 } })).id);
    const otherJob = (await call('POST', `${eps['gpu-other'].url}/run`, { input: {} })).id;
    let peakWorkers = 0;
    let peakOnGpu = 0;
    let waitingNote = null;
    let firstDoneMs = null;
    const deadline = Date.now() + 240_000;
    const done = new Map();
    while (done.size < 4) {
      if (Date.now() > deadline) throw new Error(`jobs not done in 240 s: ${JSON.stringify([...done.keys()])}`);
      const h = await health('gpu-probe');
      peakWorkers = Math.max(peakWorkers, h.workers.idle + h.workers.running + h.workers.initializing);
      peakOnGpu = Math.max(peakOnGpu, computeApps() ?? 0);
      const n = await note('gpu-other');
      if (n && /waiting for a free GPU/.test(n)) waitingNote = n;
      for (const [name, id] of [...probeJobs.map((id) => ['gpu-probe', id]), ['gpu-other', otherJob]]) {
        if (done.has(id)) continue;
        const s = await status(name, id);
        if (['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes(s.status)) {
          done.set(id, s);
          firstDoneMs ??= performance.now() - t;
        }
      }
      await sleep(200);
    }
    const all = performance.now() - t;
    const probe = probeJobs.map((id) => done.get(id));
    const other = done.get(otherJob);
    for (const s of [...probe, other]) if (!check(s.status === 'COMPLETED', `job ${s.id} completed`, s.status !== 'COMPLETED' ? JSON.stringify(s) : '')) return;
    const out = probe.map((s) => s.output);
    const o = out[0];
    check(o.cuda_visible_devices === '0', 'a GPU worker gets CUDA_VISIBLE_DEVICES=0', o.cuda_visible_devices);
    check(o.cuda_device_order === 'PCI_BUS_ID', "and CUDA_DEVICE_ORDER=PCI_BUS_ID (CUDA's indexes are nvidia-smi's)", o.cuda_device_order);
    check(o.device_count === 1 && o.name === model, 'torch sees one GPU, the one nvidia-smi names', `${o.device_count} x ${o.name}`);
    check(
      out.every((x) => x.product === x.expected),
      'the matrix product on the GPU is right',
      `${o.product} (expected ${o.expected})`,
    );
    check(peakWorkers <= gpus.names.length, `at most ${gpus.names.length} worker(s) of the endpoint at once, though it wanted 3`, `peak ${peakWorkers}`);
    check(new Set(out.map((x) => x.pid)).size === 1, 'its three jobs ran in one worker, one after another', `pids ${out.map((x) => x.pid).join(', ')}`);
    check(
      gpus.real ? peakOnGpu <= gpus.names.length && peakOnGpu > 0 : true,
      'nvidia-smi never showed more processes on the GPU than GPUs',
      gpus.real ? `peak ${peakOnGpu}` : 'rehearsal: not asked',
    );
    check(waitingNote !== null, "the other GPU endpoint's health said it waits for the GPU", waitingNote ?? 'never said');
    check(
      other.output.cuda_visible_devices === '0' && !out.some((x) => x.pid === other.output.pid),
      'the other endpoint ran once the GPU was free, in a worker of its own',
      `pid ${other.output.pid}`,
    );
    console.log(
      `figures: first GPU job (cold worker: Python, torch, CUDA init, the product) ${(firstDoneMs / 1000).toFixed(2)} s; all four jobs ${(all / 1000).toFixed(2)} s`,
    );

    // 2. A CPU endpoint never sees a GPU.
    const cpu = await call('POST', `${eps['cpu-probe'].url}/runsync`, { input: {} });
    check(
      cpu.status === 'COMPLETED' && cpu.output.cuda_visible_devices === '' && cpu.output.cuda_available === false && cpu.output.device_count === 0,
      'a CPU endpoint sees no GPU',
      JSON.stringify(cpu.output ?? cpu),
    );

    // 3. An endpoint asking for a kind of GPU this machine lacks runs on the one there is, and its health says so.
    t = performance.now();
    const wrong = (await call('POST', `${eps['gpu-wrong-kind'].url}/run`, { input: {} })).id;
    let w;
    while (!['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'].includes((w = await status('gpu-wrong-kind', wrong)).status)) {
      if (performance.now() - t > 120_000) throw new Error(`the wrong-kind job did not end in 120 s: ${JSON.stringify(w)}`);
      await sleep(200);
    }
    check(
      w.status === 'COMPLETED' && w.output.product === w.output.expected && w.output.name === model,
      'the wrong-kind endpoint ran on the GPU there is',
      JSON.stringify(w.output ?? w),
    );
    const n = await note('gpu-wrong-kind');
    check(
      n === `the endpoint asks for ${otherKind} GPUs and this machine has ${gpus.names.length} x ${model}: its workers run on those`,
      'and its health says so',
      n ?? 'no note',
    );
  } finally {
    for (const c of children) {
      try {
        process.kill(-c.pid, 'SIGTERM');
      } catch {
        // gone
      }
    }
    await sleep(1000);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(failed ? `\n${failed} check(s) FAILED` : '\nall checks passed');
  process.exitCode = failed ? 1 : 0;
}

function killAll() {
  for (const c of children) {
    try {
      process.kill(-c.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

// Interrupted (Ctrl+C, `timeout`): the platform runs in a process group of its own and would outlive the check.
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    killAll();
    process.exit(1);
  });

main().catch((e) => {
  console.error(`gpu check could not finish: ${e.message}`);
  process.exitCode = 1;
  killAll();
});
