// Project analysis speed: synthetic projects of 10, 100 and 1,000 worker files, analysed from disk as the
// build does; the baseline is tree-sitter parsing the same files alone (the floor the analysis adds to).
// Target: 1,000 files analysed in under 1 s.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { report, verdict } from './report';
import { createPythonParser, listProjectFiles, loadProject } from '../engine/src/project';

function workerFile(i: number): string {
  return `"""Worker ${i}."""
from strato import Endpoint, GpuGroup, CpuInstanceType

CONST_${i} = ${i}


@Endpoint(name="queue-${i}", gpu=GpuGroup.ADA_24, workers=(0, 3), dependencies=["requests>=2"], env={"N": "${i}"})
async def handle_${i}(prompt: str, n: int = 1) -> dict:
    """Handle request ${i}."""
    import requests
    return {"text": prompt * n, "i": CONST_${i}}


api_${i} = Endpoint(name="lb-${i}", cpu=CpuInstanceType.CPU3C_1_2, workers=(1, 2))


@api_${i}.post("/process")
def process_${i}(text: str) -> dict:
    """Process text."""
    return {"text": text}


@api_${i}.get("/health")
def health_${i}() -> dict:
    return {"ok": True}
`;
}

async function main() {
  const parser = await createPythonParser();
  const rows: string[] = [];
  for (const n of [10, 100, 1000]) {
    const root = mkdtempSync(path.join(os.tmpdir(), `strato-bench-${n}-`));
    for (let i = 0; i < n; i++) {
      const dir = path.join(root, `pkg${i % 10}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `worker_${i}.py`), workerFile(i));
    }
    await loadProject(root); // warm up
    const runs = n >= 1000 ? 5 : 10;
    let best = Infinity;
    let endpoints = 0;
    for (let r = 0; r < runs; r++) {
      const t = performance.now();
      const model = await loadProject(root);
      best = Math.min(best, performance.now() - t);
      endpoints = model.endpoints.length;
    }
    let parseBest = Infinity;
    for (let r = 0; r < runs; r++) {
      const t = performance.now();
      for (const f of listProjectFiles(root).pythonFiles) parser.parse(readFileSync(path.join(root, f), 'utf8'))?.delete();
      parseBest = Math.min(parseBest, performance.now() - t);
    }
    rows.push(
      `${String(n).padStart(5)} files  ${String(endpoints).padStart(5)} endpoints  analysis ${best.toFixed(1).padStart(7)} ms  parse-only baseline ` +
        `${parseBest.toFixed(1).padStart(7)} ms  ratio ` +
        `${(best / parseBest).toFixed(2)}x${n === 1000 ? `  (target < 1000 ms: ${best < 1000 ? 'met' : 'MISSED'})` : ''}`,
    );
    if (n === 1000)
      report('analysis', [
        {
          what: 'project analysis, 1,000 files (best)',
          value: `${best.toFixed(0)} ms`,
          baseline: `tree-sitter parsing alone: ${parseBest.toFixed(0)} ms`,
          ratio: `${(best / parseBest).toFixed(2)}x`,
          target: `< 1 s: ${verdict(best < 1000)}`,
        },
      ]);
    rmSync(root, { recursive: true, force: true });
  }
  console.log('project analysis (best of runs, files read from disk)');
  for (const r of rows) console.log('  ' + r);
}

main();
