// Cold start (a request to an endpoint with no worker, to its first job done) with and without worker templates
// (issue 17): a no-op CPU endpoint, one whose dependency takes 1 s to import, and, where a GPU and torch are present,
// one that imports torch and runs a bf16 matmul on CUDA. Targets: CPU under 30 ms, GPU with torch under 1 s (H100).
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { buildTestArtifact, type TestEndpointSpec } from '../test/helpers/artifact';
import { call, deploy, PYTHON, startTestPlatform, waitUntil } from '../test/helpers/platform';

const SAMPLES = Number(process.env.STRATO_BENCH_SAMPLES || 5);

const FILES: Record<string, string> = {
  'noop.py': `def noop(**kw):\n    return {"ok": True}\n`,
  'slowdep.py': `import time\n\ntime.sleep(1.0)  # stands for a heavy import\n`,
  'slow.py': `import slowdep  # noqa: F401\n\n\ndef slow(**kw):\n    return {"ok": True}\n`,
  'gpu.py': `import torch


def matmul(n=4096, **kw):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = (a @ a).float().sum().item()
    torch.cuda.synchronize()
    return {"sum": b, "device": torch.cuda.get_device_name(0)}
`,
};

const hasGpu = () =>
  spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' }).status === 0 &&
  spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status === 0;

async function measure(templates: boolean, specs: TestEndpointSpec[]): Promise<Record<string, number[]>> {
  const tp = await startTestPlatform({ workerTemplates: templates, heartbeatMs: 1000 });
  try {
    const eps = await deploy(tp.cp, await buildTestArtifact(FILES, specs));
    const out: Record<string, number[]> = {};
    for (const s of specs) {
      const u = eps[s.name].url;
      const idle = async () => {
        const h = (await call('GET', `${u}/health`)).json as { workers: Record<string, number> };
        return h.workers.idle + h.workers.running + h.workers.initializing === 0;
      };
      const once = async () => {
        await waitUntil('the workers to stop', idle, 60_000, 20);
        const t0 = performance.now();
        const r = (await call('POST', `${u}/runsync`, { body: { input: {} } })).json as { status: string; error?: string };
        if (r.status !== 'COMPLETED') throw new Error(`${s.name}: ${JSON.stringify(r)}`);
        return performance.now() - t0;
      };
      await once(); // the first start is a plain one; it starts the template
      await once();
      await new Promise((r) => setTimeout(r, templates ? 3000 : 0)); // a slow template finishes its imports
      out[s.name] = [];
      for (let i = 0; i < SAMPLES; i++) out[s.name].push(await once());
    }
    return out;
  } finally {
    await tp.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const specs: TestEndpointSpec[] = [
    { name: 'noop', file: 'noop.py', fn: 'noop', workers: [0, 1], idleTimeout: 1 },
    { name: 'slowimport', file: 'slow.py', fn: 'slow', workers: [0, 1], idleTimeout: 1 },
  ];
  if (hasGpu()) specs.push({ name: 'gpu-torch', file: 'gpu.py', fn: 'matmul', workers: [0, 1], idleTimeout: 1, gpu: 'ADA_24' });
  else console.log('gpu-torch: skipped (no GPU or no torch for this Python)');
  const plain = await measure(false, specs);
  const forked = await measure(true, specs);
  console.log(`cold start, request to first job done, median of ${SAMPLES} (min..max):`);
  for (const s of specs) {
    const p = plain[s.name];
    const f = forked[s.name];
    const fmt = (xs: number[]) => `${median(xs).toFixed(1)} ms (${Math.min(...xs).toFixed(1)}..${Math.max(...xs).toFixed(1)})`;
    console.log(`  ${s.name.padEnd(11)} plain start ${fmt(p)}   forked from template ${fmt(f)}   ratio ${(median(p) / median(f)).toFixed(1)}x`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
