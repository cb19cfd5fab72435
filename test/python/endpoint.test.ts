// The Endpoint decorator of the Python package, run in a real interpreter: configuration errors (one sentence,
// ValueError), decorated functions and classes staying plain Python, route declarations, and the generated catalog.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, errorsOf, killAll, removeTempDirs, runPython } from './helpers';
import { catalogConstants, enumClasses } from '../../engine/src/catalog';
import { diagnose, queue } from '../helpers/analysis';

after(() => {
  killAll();
  removeTempDirs();
});

async function check(cases: [string, string | null][]): Promise<void> {
  const got = await errorsOf(cases.map(([code]) => code));
  cases.forEach(([code, expected], i) => assert.equal(got[i], expected, code));
}

describe('Endpoint configuration', () => {
  test('valid configurations are accepted', async () => {
    await check([
      ['Endpoint("a")', null],
      ['Endpoint("a", gpu=GpuGroup.ADA_24, workers=3, idle_timeout=3600, gpu_count=8)', null],
      ['Endpoint("a", gpu=[GpuGroup.AMPERE_80, GpuType.NVIDIA_H200, "NVIDIA L4"], workers=(1, 5))', null],
      ['Endpoint("a", cpu=CpuInstanceType.CPU5C_8_16, env={"K": "v"}, dependencies=["requests"])', null],
      ['Endpoint("a", cpu="cpu3g-2-8", execution_timeout_ms=120000, max_concurrency=10)', null],
      ['Endpoint(name="a-b_1", gpu="any", workers=[0, 1])', null],
    ]);
  });

  test('each invalid parameter raises ValueError with one clear sentence', async () => {
    await check([
      [
        'Endpoint("a", gpu=GpuGroup.ADA_24, cpu=CpuInstanceType.CPU3C_1_2)',
        'gpu and cpu are mutually exclusive: specify one or neither (neither means any GPU).',
      ],
      ['Endpoint("a", workers=(3, 1))', 'workers min (3) cannot exceed max (1): did you mean (1, 3)?'],
      ['Endpoint("a", workers=(-1, 2))', 'workers cannot be negative: (-1, 2); use numbers >= 0.'],
      ['Endpoint("a", workers=-2)', 'workers cannot be negative: (0, -2); use numbers >= 0.'],
      ['Endpoint("a", workers="3")', "workers must be an int n, meaning (0, n), or a pair (min, max) of ints, e.g. workers=(0, 3); got '3'."],
      ['Endpoint("a", workers=(0, 0))', 'workers max is 0, so the endpoint could never run a job: allow at least one worker, e.g. workers=(0, 1).'],
      ['Endpoint("a", workers=(0, 101))', 'workers max (101) is above the limit of 100.'],
      ['Endpoint("a", idle_timeout=0)', 'idle timeout must be between 1 and 3600 seconds, got 0.'],
      ['Endpoint("a", idle_timeout=3601)', 'idle timeout must be between 1 and 3600 seconds, got 3601.'],
      ['Endpoint("a", gpu_count=0)', 'gpu_count must be between 1 and 8, got 0.'],
      ['Endpoint("a", max_concurrency=0)', 'max_concurrency must be between 1 and 1000, got 0.'],
      ['Endpoint("a", max_concurrency=1.5)', 'max_concurrency must be an integer between 1 and 1000, got 1.5.'],
      ['Endpoint("a", execution_timeout_ms=-1)', 'execution_timeout_ms must be between 0 and 86400000, got -1.'],
      ['Endpoint("a", env={"K": 1})', "env value of 'K' must be a str, got: 1"],
      ['Endpoint("a", env=["K=v"])', "env must be a dict of str to str, got: ['K=v']"],
      ['Endpoint("a", env={"A=B": "v"})', 'env name "A=B" cannot be a variable name: use a non-empty name without \'=\' or NUL characters.'],
      ['Endpoint("a", env={"A": "x\\0y"})', 'env value of "A" holds a NUL character, which no process environment can: remove it.'],
      [
        'Endpoint("a", env={"A": "x" * 70000})',
        'env value of "A" is 70000 bytes, over the limit of 65536: put large data in a file or a volume, not in the environment.',
      ],
      ['Endpoint("a", dependencies="numpy")', "dependencies must be a list of package names (non-empty strings), got: 'numpy'"],
      ['Endpoint("a", cpu="cpu9-1-1")', "unknown cpu instance type 'cpu9-1-1': use a CpuInstanceType such as CpuInstanceType.CPU3C_2_4 ('cpu3c-2-4')"],
      ['Endpoint("bad name")', "'bad name' cannot be an endpoint name: use 1 to 63 letters, digits, '-' or '_', starting with a letter or digit."],
    ]);
  });

  test('an unknown GPU is refused in the words of the analysis, a short model name (H100) naming the models it means', async () => {
    const names = ['RTX 9999', 'H100', 'RTX 4090', 'a100', 'L40S ', 'B200'];
    const raised = await errorsOf(names.map((n) => `Endpoint("a", gpu=${JSON.stringify(n)})`));
    for (const [i, name] of names.entries()) {
      const said = (await diagnose(queue(`name="a", gpu=${JSON.stringify(name)}`))).find((d) => d.code === 'unknown-gpu');
      assert.ok(said, `the analysis flags gpu=${JSON.stringify(name)}`);
      assert.equal(raised[i], said.message, name);
    }
    assert.match(raised[1]!, /^unknown GPU "H100": the models of that name are "NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", "NVIDIA H100 NVL"; write one/);
    assert.equal(raised[2], 'unknown GPU "RTX 4090": did you mean "NVIDIA GeForce RTX 4090"?');
  });

  test('a second function on one queue endpoint, or routes mixed with a function, is refused', async () => {
    await check([
      [
        'e = Endpoint("a")\n@e\ndef f(): pass\n@e\ndef g(): pass',
        "endpoint 'a' already serves 'f': a queue-based endpoint has one function or class; give 'g' its own Endpoint(name=...)",
      ],
      [
        'e = Endpoint("a")\n@e.get("/x")\ndef f(): pass\n@e\ndef g(): pass',
        "endpoint 'a' has routes (GET /x): a load-balanced endpoint cannot also decorate a function; give the function its own Endpoint(...)",
      ],
    ]);
  });
});

describe('decorated code stays plain Python', () => {
  // Outside a worker a call goes to the deployed endpoint (test/deploy/remoteCalls.test.ts); STRATO_LOCAL=1, the
  // endpoint's own worker and the local test server run the function in-process, and __wrapped__ always does.
  test('with STRATO_LOCAL=1, sync, async and generator functions and classes are called as before and expose .endpoint', async () => {
    const r = await runPython(
      [
        '-c',
        `
import asyncio, inspect
from strato import Endpoint, GpuGroup

@Endpoint(name="add", gpu=GpuGroup.ADA_24, workers=(0, 2))
def add(a, b=1):
    """Adds."""
    return a + b

@Endpoint(cpu="cpu3c-1-2")
async def double(x):
    return 2 * x

@Endpoint()
def count(n):
    yield from range(n)

@Endpoint(name="model")
class Model:
    def __init__(self, k=3):
        self.k = k
    def predict(self, x):
        return x * self.k

assert add(2) == 3 and add(2, b=5) == 7
assert add.__name__ == "add" and add.__doc__ == "Adds." and add.__wrapped__(1, 1) == 2
assert add.endpoint.name == "add" and add.endpoint.workers == (0, 2) and add.endpoint.gpu == ["ADA_24"]
assert inspect.iscoroutinefunction(double) and asyncio.run(double(4)) == 8
assert double.endpoint.name == "double" and double.endpoint.cpu == "cpu3c-1-2" and double.endpoint.gpu is None
assert inspect.isgeneratorfunction(count) and list(count(3)) == [0, 1, 2]
m = Model(k=2)
assert isinstance(m, Model) and m.predict(5) == 10 and Model.endpoint.name == "model"

# The reference product makes every decorated function awaitable: \`await add(2)\` of a plain def gets its value too,
# while a call without await, and the same call outside a coroutine, stay plain.
async def caller():
    awaited = await add(2)
    plain = add(3)
    return awaited, plain, [await add(i) for i in range(2)]
assert asyncio.run(caller()) == (3, 4, [1, 2]), asyncio.run(caller())
print("ok")
`,
      ],
      { env: { STRATO_LOCAL: '1' } },
    );
    assert.equal(r.stdout.trim(), 'ok', r.stderr);
  });
});

describe('load-balanced routes', () => {
  test('route decorators keep the function callable (plain with STRATO_LOCAL=1) and record "METHOD /path"', async () => {
    const r = await runPython(
      [
        '-c',
        `
from strato import Endpoint
api = Endpoint(name="api", cpu="cpu3c-1-2", workers=(1, 3))

def process(text):
    return text

wrapped = api.post("/process")(process)
assert wrapped.__wrapped__ is process and wrapped("x") == "x" and api.routes["POST /process"] is process
@api.get("/items/{item_id}")
def item(item_id): return item_id
@api.put("/p")
def p(): pass
@api.patch("/p")
def pa(): pass
@api.delete("/p")
def d(): pass
assert list(api.routes) == ["POST /process", "GET /items/{item_id}", "PUT /p", "PATCH /p", "DELETE /p"]
assert api.is_load_balanced and item(4) == 4
print("ok")
`,
      ],
      { env: { STRATO_LOCAL: '1' } },
    );
    assert.equal(r.stdout.trim(), 'ok', r.stderr);
  });

  test('bad paths and duplicate routes are refused with the reference messages', async () => {
    await check([
      ['api = Endpoint("api")\n@api.post("process")\ndef f(): pass', "path must start with '/', got: process"],
      ['api = Endpoint("api")\n@api.get("/ping")\ndef f(): pass', "path '/ping' is reserved"],
      ['api = Endpoint("api")\n@api.post("/x")\ndef fn(): pass\n@api.post("/x")\ndef other(): pass', "duplicate route: POST /x (already registered to 'fn')"],
      ['api = Endpoint("api")\n@api.post("/x")\ndef fn(): pass\n@api.get("/x")\ndef other(): pass', null],
      ['api = Endpoint("api")\n@api.get("/items/{1x}")\ndef f(): pass', 'path parameter {1x} in /items/{1x} must be a Python identifier'],
    ]);
  });
});

describe('catalog', () => {
  test('strato/catalog.py is what scripts/gen-python-catalog.mjs generates from catalog.json', () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'gen-python-catalog.mjs'), '--stdout'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const committed = readFileSync(path.join(ROOT, 'engine', 'python', 'strato', 'catalog.py'), 'utf8');
    assert.equal(committed, r.stdout, 'catalog.py is out of date: run node scripts/gen-python-catalog.mjs');
  });

  test('the enums hold every catalog entry with its string value, as the analysis reads them', async () => {
    const classes = Object.keys(enumClasses);
    const r = await runPython([
      '-c',
      `
import json, strato
from strato import GpuGroup, CpuInstanceType, CPU_DATACENTERS
print(json.dumps({"enums": {c: {m.name: m.value for m in getattr(strato, c)} for c in ${JSON.stringify(classes)}},
                  "cpu": [str(d) for d in CPU_DATACENTERS], "s": str(GpuGroup.ANY), "f": f"{CpuInstanceType.CPU3C_1_2}"}))
`,
    ]);
    const got = JSON.parse(r.stdout);
    assert.deepEqual(got.enums, enumClasses);
    assert.deepEqual(got.cpu, catalogConstants.CPU_DATACENTERS);
    assert.equal(got.enums.GpuGroup.ANY, 'any');
    assert.equal(got.enums.GpuType.ANY, 'any');
    assert.equal(got.enums.DataCenter.EU_RO_1, 'EU-RO-1');
    assert.equal(got.enums.CudaVersion.V12_8, '12.8');
    assert.deepEqual([got.s, got.f], ['any', 'cpu3c-1-2']);
  });
});
