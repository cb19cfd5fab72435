// Every endpoint parameter rule walked through its three users: the analysis (what the language server and the
// build show), the Python package's Endpoint (a real interpreter) and the platform's check of a saved endpoint.
// The three must give the same answer in the same words, because they read one table (catalog.json).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { intParameters, parameterDefaults } from '../../engine/src/catalog/parameterRules';
import { parameters } from '../../engine/src/catalog';
import { resolveConfig } from '../../engine/src/platform/controlPlane/endpointConfig';
import type { Manifest } from '../../engine/src/protocol/manifest';
import { analyzeSource, HEADER } from '../helpers/analysis';
import { errorsOf, removeTempDirs, runPython } from '../python/helpers';

after(removeTempDirs);

/** Error messages of `Endpoint("a", <args>)` in Python, one per case; null when it was accepted. */
function pythonErrors(args: string[]): Promise<(string | null)[]> {
  return errorsOf(args.map((a) => `Endpoint('a', ${a})`));
}

/** The analysis' first error on `@Endpoint(name="a", <args>)`, or null. */
async function analysisError(args: string): Promise<string | null> {
  const model = await analyzeSource(`${HEADER}@Endpoint(name="a", ${args})\ndef f():\n    pass\n`);
  return model.diagnostics.find((d) => d.severity === 'error')?.message ?? null;
}

/** The platform's refusal of a manifest resource carrying these values, or null. */
function platformError(resource: Record<string, unknown>): string | null {
  const manifest = { resources: { a: { is_load_balanced: false, workersMin: 0, workersMax: 1, functions: [], ...resource } } } as unknown as Manifest;
  try {
    resolveConfig(manifest, 'a');
    return null;
  } catch (e) {
    return (e as Error).message.replace(/^endpoint "a": /, '');
  }
}

/** Decorator argument text -> the manifest fields the build writes for it. */
const MANIFEST_FIELD: Record<string, (v: number) => Record<string, unknown>> = {
  idle_timeout: (v) => ({ idle_timeout: v }),
  gpu_count: (v) => ({ gpu_count: v }),
  execution_timeout_ms: (v) => ({ execution_timeout_ms: v }),
  max_concurrency: (v) => ({ max_concurrency: v }),
  scaler_value: (v) => ({ scaler_value: v }),
};

describe('one table for every parameter rule', () => {
  test('every bounded parameter is refused below and above its bounds in the same words by all three', async () => {
    const cases: Array<{ args: string; resource: Record<string, unknown> }> = [];
    for (const name of intParameters) {
      const doc = parameters.find((p) => p.name === name)!;
      for (const v of [doc.min! - 1, doc.max! + 1, doc.min!, doc.max!]) cases.push({ args: `${name}=${v}`, resource: MANIFEST_FIELD[name](v) });
    }
    const py = await pythonErrors(cases.map((c) => c.args));
    for (const [i, c] of cases.entries()) {
      const fromAnalysis = await analysisError(c.args);
      // execution_timeout_ms <= 0 means "none declared" on the platform (decisions.md); its lower bound is the analysis' and Python's.
      const lowerTimeout = c.args === 'execution_timeout_ms=-1';
      assert.equal(py[i], fromAnalysis, `Python and the analysis on ${c.args}`);
      if (!lowerTimeout) assert.equal(platformError(c.resource), fromAnalysis, `the platform and the analysis on ${c.args}`);
    }
    assert.ok(py.filter((m) => m !== null).length >= intParameters.length * 2 - 1, 'the out-of-bounds cases are refused');
  });

  test('workers: shape, sign, order, empty and upper bound, in the same words by all three', async () => {
    const cases: Array<[string, [number, number] | null]> = [
      ['workers=(3, 1)', [3, 1]],
      ['workers=(-1, 2)', [-1, 2]],
      ['workers=(0, 0)', [0, 0]],
      ['workers=(0, 101)', [0, 101]],
      ['workers=(2, 5)', [2, 5]],
      ['workers=7', [0, 7]],
      ["workers='3'", null], // shown as written: single quotes read the same as Python's repr
      ['workers=(1, 2, 3)', null],
    ];
    const py = await pythonErrors(cases.map(([a]) => a));
    for (const [i, [args, pair]] of cases.entries()) {
      const fromAnalysis = await analysisError(args);
      assert.equal(py[i], fromAnalysis, `Python and the analysis on ${args}`);
      if (pair) assert.equal(platformError({ workersMin: pair[0], workersMax: pair[1] }), fromAnalysis, `the platform and the analysis on ${args}`);
    }
    assert.match(py[0]!, /cannot exceed max/);
    assert.equal(py[4], null);
  });

  test('gpu and cpu together, and a bad endpoint name, read the same in Python and in the analysis', async () => {
    const py = await pythonErrors(['gpu="any", cpu="cpu3c-1-2"']);
    assert.equal(py[0], await analysisError('gpu="any", cpu="cpu3c-1-2"'));
    const r = await runPython(['-c', "from strato import Endpoint\ntry:\n    Endpoint('bad name')\nexcept ValueError as e:\n    print(e)"]);
    const bad = r.stdout.trim();
    const model = await analyzeSource(`${HEADER}@Endpoint(name='bad name')\ndef f():\n    pass\n`);
    const fromAnalysis = model.diagnostics.find((d) => d.code === 'invalid-endpoint-name')!.message;
    assert.ok(fromAnalysis.startsWith(bad.slice(0, -1)), `${fromAnalysis} extends ${bad}`);
  });

  test("the reference product's parameters are refused in the same words by Python and the analysis", async () => {
    const imports = 'NetworkVolume, DataCenter, CudaVersion, ServerlessScalerType, PodTemplate';
    const cases = [
      'cpu="cpu3c-2-4", datacenter="US-KS-2"',
      'datacenter=DataCenter.EU_RO_1, volume=NetworkVolume(name="models", datacenter=DataCenter.US_KS_2)',
      'volume=[NetworkVolume(name="a"), NetworkVolume(name="b", datacenter="US-KS-2")]',
      'volume=NetworkVolume(name="big", size=5000)',
      'volume=NetworkVolume(name="bad name")',
      'volume=[NetworkVolume(name="a"), NetworkVolume(name="a")]',
      'datacenter="MARS-1"',
      'min_cuda_version="10.0"',
      'scaler_type="FAST"',
      'scaler_value=0',
      'image="Not An Image"',
      'system_dependencies=["Bad Pkg"]',
      'flashboot="yes"',
      'template=PodTemplate(imageName="x", bogus=1)',
      'template=PodTemplate(imageName="x", env=[{"key": "A"}])',
      'template=PodTemplate(env="A=1")',
    ];
    const py = await errorsOf(cases.map((a) => `Endpoint('a', ${a})`));
    for (const [i, args] of cases.entries()) {
      const model = await analyzeSource(`from strato import Endpoint, ${imports}\n@Endpoint(name="a", ${args})\ndef f():\n    pass\n`);
      const fromAnalysis = model.diagnostics.find((d) => d.severity === 'error')?.message ?? null;
      assert.ok(py[i], `Python refuses ${args}`);
      // Values are shown as written (source text) by the analysis and as repr by Python: compare the sentence around them.
      const shape = (m: string) => m.replace(/(got|datacenter) .*$/, '$1 …').replace(/\[.*?\]|'[^']*'|"[^"]*"/g, '…');
      assert.equal(shape(py[i]!), shape(fromAnalysis ?? ''), `Python and the analysis on ${args}`);
    }
    // And what the reference accepts, both accept: lower-case ids with '_', CudaVersion members, the CPU datacenter.
    const ok = [
      'datacenter="eu_ro_1"',
      'cpu="cpu3c-2-4", datacenter=DataCenter.EU_RO_1',
      'min_cuda_version=CudaVersion.V12_4',
      'scaler_type=ServerlessScalerType.REQUEST_COUNT, scaler_value=2',
      'volume=NetworkVolume(name="models", size=50, datacenter=DataCenter.US_KS_2), datacenter=[DataCenter.US_KS_2, "EU-RO-1"]',
      'system_dependencies=["ffmpeg", "libgl1"], image="ghcr.io/org/worker:1.2", flashboot=False, accelerate_downloads=False, execution_timeout_ms=0',
      'template=PodTemplate(imageName="x", containerDiskInGb=20, env={"A": "1"})',
      'template=PodTemplate(containerDiskInGb=100, env=[{"key": "MY_VAR", "value": "v"}])',
    ];
    assert.deepEqual(
      await errorsOf(ok.map((a) => `Endpoint('a', ${a})`)),
      ok.map(() => null),
    );
    for (const args of ok) {
      const model = await analyzeSource(`from strato import Endpoint, ${imports}\n@Endpoint(name="a", ${args})\ndef f():\n    pass\n`);
      assert.deepEqual(model.diagnostics, [], args);
    }
  });

  test("a Pod template's env, as a dict or as the reference's list of key and value, sits under the endpoint's env in both", async () => {
    const args = 'template=PodTemplate(env=[{"key": "MY_VAR", "value": "v"}, {"key": "B", "value": "t"}]), env={"B": "own"}';
    const model = await analyzeSource(`from strato import Endpoint, PodTemplate\n@Endpoint(name="a", ${args})\ndef f():\n    pass\n`);
    assert.deepEqual(model.endpoints[0].config.env, { MY_VAR: 'v', B: 'own' });
    assert.deepEqual(model.endpoints[0].config.template?.env, { MY_VAR: 'v', B: 't' }, 'recorded as names to values');
    const r = await runPython(['-c', `import json\nfrom strato import Endpoint, PodTemplate\nprint(json.dumps(Endpoint('a', ${args}).env))`]);
    assert.deepEqual(JSON.parse(r.stdout), { MY_VAR: 'v', B: 'own' });
    const bad = 'template=PodTemplate(env={"A": 1})';
    const refused = await analyzeSource(`from strato import Endpoint, PodTemplate\n@Endpoint(name="a", ${bad})\ndef f():\n    pass\n`);
    assert.match(refused.diagnostics.find((d) => d.severity === 'error')?.message ?? '', /^PodTemplate env value of A must be a string/);
    assert.match((await pythonErrors([bad]))[0] ?? '', /env value of 'A' must be a str/);
  });

  test("the reference's other GpuType spellings (its docs' NVIDIA_A100_80GB_PCIe, its code's unprefixed names) are the same models in both", async () => {
    const args = 'gpu=[GpuType.NVIDIA_A100_80GB_PCIe, GpuType.A100_SXM4_80GB, GpuType.H200]';
    const model = await analyzeSource(`${HEADER}@Endpoint(name="a", ${args})\ndef f():\n    pass\n`);
    assert.deepEqual(model.diagnostics, []);
    const models = ['NVIDIA A100 80GB PCIe', 'NVIDIA A100-SXM4-80GB', 'NVIDIA H200'];
    assert.deepEqual(model.endpoints[0].config.gpu, models);
    const r = await runPython(['-c', `import json\nfrom strato import Endpoint, GpuType\nprint(json.dumps([str(g) for g in Endpoint('a', ${args}).gpu]))`]);
    assert.deepEqual(JSON.parse(r.stdout), models);
    const unknown = await analysisError('gpu=GpuType.A100_80GB_PCI');
    assert.match(unknown ?? '', /GpuType\.A100_80GB_PCI does not exist/);
  });

  test('defaults are the same in the analysis, the platform and Python', async () => {
    const model = await analyzeSource(`${HEADER}@Endpoint(name="a")\ndef f():\n    pass\n`);
    const c = model.endpoints[0].config;
    const manifest = { resources: { a: { is_load_balanced: false, functions: [] } } } as unknown as Manifest;
    const p = resolveConfig(manifest, 'a');
    const r = await runPython([
      '-c',
      "import json\nfrom strato import Endpoint\ne = Endpoint('a')\nprint(json.dumps([e.workers, e.idle_timeout, e.gpu_count, e.max_concurrency]))",
    ]);
    const fromPython = JSON.parse(r.stdout);
    const expected = [[...parameterDefaults.workers], parameterDefaults.idleTimeout, parameterDefaults.gpuCount, parameterDefaults.maxConcurrency];
    assert.deepEqual([[c.workersMin, c.workersMax], c.idleTimeout, c.gpuCount, c.maxConcurrency], expected);
    assert.deepEqual([[p.workersMin, p.workersMax], p.idleTimeout, p.gpuCount, p.maxConcurrency], expected);
    assert.deepEqual(fromPython, expected);
  });
});
