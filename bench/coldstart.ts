// Cold start (a request to an endpoint with no worker, to its first job done) with and without worker templates
// (issue 17): a no-op CPU endpoint, one whose dependency takes 1 s to import, and, where a GPU and torch are present,
// one that imports torch and runs a bf16 matmul on CUDA. Targets: CPU under 30 ms, GPU with torch under 1 s (H100).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ControlPlaneClient } from '../engine/src/api/controlPlane';
import { JobsClient } from '../engine/src/api/jobs';
import { buildProject } from '../engine/src/build';
import { startPlatform } from '../engine/src/platform/platform';
import { median } from './report';

const PYTHON = process.env.STRATO_PYTHON || 'python3';
/** Shared with the tests: the database template is initialised once per machine. */
const TEMPLATE_DIR = path.join(os.tmpdir(), 'strato-test-pglite-template');

const SAMPLES = Number(process.env.STRATO_BENCH_SAMPLES || 5);

const FILES: Record<string, string> = {
  'noop.py': `from strato import CpuInstanceType, Endpoint


@Endpoint(name="noop", cpu=CpuInstanceType.CPU3C_1_2, workers=(0, 1), idle_timeout=1)
def noop(x: int = 0) -> dict:
    return {"ok": True}
`,
  'slowdep.py': `import time\n\ntime.sleep(1.0)  # stands for a heavy import\n`,
  'slow.py': `from strato import CpuInstanceType, Endpoint

import slowdep  # noqa: F401


@Endpoint(name="slowimport", cpu=CpuInstanceType.CPU3C_1_2, workers=(0, 1), idle_timeout=1)
def slow(x: int = 0) -> dict:
    return {"ok": True}
`,
  'gpu.py': `from strato import Endpoint, GpuGroup

import torch


@Endpoint(name="gpu-torch", gpu=GpuGroup.ADA_24, workers=(0, 1), idle_timeout=1)
def matmul(n: int = 4096) -> dict:
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = (a @ a).float().sum().item()
    torch.cuda.synchronize()
    return {"sum": b, "device": torch.cuda.get_device_name(0)}
`,
};

const hasGpu = () =>
  spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' }).status === 0 && spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;

async function measure(templates: boolean, files: string[]): Promise<Record<string, number[]>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-bench-cold-'));
  const platform = await startPlatform({
    dataDir: path.join(dir, 'data'),
    port: 0,
    apiKey: 'bench-key',
    python: PYTHON,
    writeStateFile: false,
    workerTemplates: templates,
    log: () => {},
    pgliteTemplateDir: TEMPLATE_DIR,
  });
  try {
    const project = path.join(dir, 'project');
    fs.mkdirSync(project);
    for (const f of [...files, 'slowdep.py']) fs.writeFileSync(path.join(project, f), FILES[f]);
    fs.writeFileSync(path.join(project, 'pyproject.toml'), '[project]\nname = "bench"\n');
    const built = await buildProject(project);
    const target = { baseUrl: platform.url, apiKey: platform.apiKey };
    const cp = new ControlPlaneClient(target);
    const jobs = new JobsClient(target);
    const app = await cp.createApp('bench');
    const env = await cp.createEnvironment(app.id, 'production');
    const build = await cp.uploadBuild(app.id, built.artifactPath, built.manifest);
    await cp.deployBuild(env.id, build.id);
    const out: Record<string, number[]> = {};
    for (const name of Object.keys(built.manifest.resources)) {
      const ep = await cp.saveEndpoint({ environmentId: env.id, name });
      const once = async () => {
        for (;;) {
          const w = (await jobs.health(ep.id)).workers;
          if (w.idle + w.running + w.initializing === 0) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        const t0 = performance.now();
        const r = await jobs.runsync(ep.id, {});
        if (r.status !== 'COMPLETED') throw new Error(`${name}: ${JSON.stringify(r)}`);
        return performance.now() - t0;
      };
      await once(); // the first start is a plain one; it starts the template
      await once();
      await new Promise((r) => setTimeout(r, templates ? 3000 : 0)); // a slow template finishes its imports
      out[name] = [];
      for (let i = 0; i < SAMPLES; i++) out[name].push(await once());
    }
    return out;
  } finally {
    await platform.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const files = ['noop.py', 'slow.py'];
  if (hasGpu()) files.push('gpu.py');
  else console.log('gpu-torch: skipped (no GPU or no torch for this Python)');
  const plain = await measure(false, files);
  const forked = await measure(true, files);
  console.log(`cold start, request to first job done, median of ${SAMPLES} (min..max):`);
  for (const name of Object.keys(plain)) {
    const p = plain[name];
    const f = forked[name];
    const fmt = (xs: number[]) => `${median(xs).toFixed(1)} ms (${Math.min(...xs).toFixed(1)}..${Math.max(...xs).toFixed(1)})`;
    console.log(`  ${name.padEnd(11)} plain start ${fmt(p)}   forked from template ${fmt(f)}   ratio ${(median(p) / median(f)).toFixed(1)}x`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
