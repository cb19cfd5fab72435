// Every validation rule: a case that triggers it (code, message, position) and one that must not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { analyzeFiles, analyzeSource, codes, HEADER } from '../helpers/analysis';
import { REPO } from '../helpers/cli';

const queue = (args: string, body = '    return {}') => `${HEADER}\n@Endpoint(${args})\ndef fn(x: int = 1):\n${body}\n`;

async function diagnose(src: string) {
  return (await analyzeSource(src)).diagnostics;
}

test('a clean queue endpoint has no diagnostics and the expected config', async () => {
  const m = await analyzeSource(
    queue(
      'name="a", gpu=GpuGroup.ADA_24, workers=(1, 3), idle_timeout=30, dependencies=["requests>=2.31", "pillow[webp]==10.*"], env={"K": "v"}, ' +
        'gpu_count=2, max_concurrency=4, execution_timeout_ms=120000',
    ),
  );
  assert.deepEqual(m.diagnostics, []);
  assert.equal(m.endpoints.length, 1);
  assert.deepEqual(m.endpoints[0].config, {
    gpu: ['ADA_24'],
    workersMin: 1,
    workersMax: 3,
    idleTimeout: 30,
    dependencies: ['requests>=2.31', 'pillow[webp]==10.*'],
    env: { K: 'v' },
    gpuCount: 2,
    maxConcurrency: 4,
    executionTimeoutMs: 120000,
    volumes: [],
    scalerValue: 4,
    minCudaVersion: '12.8',
    systemDependencies: [],
    flashboot: true,
    accelerateDownloads: true,
  });
});

test('gpu and cpu together are one problem, on gpu=, pointing at cpu=, with a keep-one fix', async () => {
  const src = queue('name="a", gpu="ADA_24", cpu="cpu3c-1-2"');
  const d = await diagnose(src);
  assert.deepEqual(codes(d), ['gpu-and-cpu']);
  assert.match(d[0].message, /mutually exclusive/);
  assert.equal(d[0].fix?.kind, 'keep-gpu-or-cpu');
  assert.equal(d[0].related?.length, 1);
  const line = src.split('\n')[d[0].related![0].range.start.line];
  assert.equal(line.slice(d[0].related![0].range.start.character, d[0].related![0].range.end.character), 'cpu="cpu3c-1-2"');
  assert.deepEqual(codes(await diagnose(queue('name="a", cpu="cpu3c-1-2"'))), []);
});

test('an unknown GPU string gets a did-you-mean and a replace fix; known groups and models pass', async () => {
  const d = await diagnose(queue('name="a", gpu="ADA_42"'));
  assert.deepEqual(codes(d), ['unknown-gpu']);
  assert.match(d[0].message, /did you mean "ADA_24"\?/);
  assert.deepEqual(d[0].fix, { kind: 'replace-value', range: d[0].range, replacement: '"ADA_24"' });
  assert.deepEqual(d[0].range.start, { line: 2, character: 24 });
  assert.deepEqual(codes(await diagnose(queue('name="a", gpu=["NVIDIA H200", GpuType.NVIDIA_L4, "any"]'))), []);
  // A short model name as other tools write it: the model it means, or the models of that name.
  const [short] = await diagnose(queue('name="a", gpu="RTX 4090"'));
  assert.equal(short.message, 'unknown GPU "RTX 4090": did you mean "NVIDIA GeForce RTX 4090"?');
  assert.deepEqual(short.fix, { kind: 'replace-value', range: short.range, replacement: '"NVIDIA GeForce RTX 4090"' });
  const [several] = await diagnose(queue('name="a", gpu="H100"'));
  assert.match(several.message, /^unknown GPU "H100": the models of that name are "NVIDIA H100 [^"]+", "NVIDIA H100 [^"]+"(, "NVIDIA H100 [^"]+")*; write one/);
  assert.equal(several.fix, undefined, 'no one model to write');
});

test('GPU and CPU names are matched regardless of case, as the Python package accepts them; the config keeps the catalog spelling', async () => {
  const gpu = await analyzeSource(queue('name="a", gpu=["ada_24", "nvidia h200"]'));
  assert.deepEqual([gpu.diagnostics, gpu.endpoints[0].config.gpu], [[], ['ADA_24', 'NVIDIA H200']]);
  const cpu = await analyzeSource(queue('name="a", cpu="CPU3C-2-4"'));
  assert.deepEqual([cpu.diagnostics, cpu.endpoints[0].config.cpu], [[], 'cpu3c-2-4']);
});

test('an unknown enum member is reported with the closest member', async () => {
  const d = await diagnose(queue('name="a", gpu=GpuGroup.AMPERE_8'));
  assert.deepEqual(codes(d), ['unknown-gpu']);
  assert.match(d[0].message, /GpuGroup\.AMPERE_8 does not exist: did you mean GpuGroup\.AMPERE_80\?/);
  const c = await diagnose(queue('name="a", cpu=CpuInstanceType.CPU3C_1_3'));
  assert.deepEqual(codes(c), ['unknown-cpu']);
});

test("an unknown enum member's fix keeps the file's own spelling: an alias or the module prefix", async () => {
  const src =
    'import strato\nfrom strato import Endpoint as E, GpuGroup as G\n\n@E(name="a", gpu=G.ADA_2)\ndef a(x: int = 1):\n    return x\n\n' +
    '@strato.Endpoint(name="b", gpu=strato.GpuGroup.AMPERE_4)\ndef b(x: int = 1):\n    return x\n';
  const d = await diagnose(src);
  assert.deepEqual(
    d.map((x) => [x.code, x.message, x.fix && 'replacement' in x.fix ? x.fix.replacement : undefined]),
    [
      ['unknown-gpu', 'G.ADA_2 (GpuGroup.ADA_2) does not exist: did you mean G.ADA_24?', 'G.ADA_24'],
      ['unknown-gpu', 'strato.GpuGroup.AMPERE_4 (GpuGroup.AMPERE_4) does not exist: did you mean strato.GpuGroup.AMPERE_48?', 'strato.GpuGroup.AMPERE_48'],
    ],
  );
});

test('an unknown CPU shape gets a suggestion; every catalog shape passes', async () => {
  const d = await diagnose(queue('name="a", cpu="cpu3c-2-5"'));
  assert.deepEqual(codes(d), ['unknown-cpu']);
  assert.match(d[0].message, /did you mean "cpu3c-2-4"/);
  assert.deepEqual(codes(await diagnose(queue('name="a", cpu=CpuInstanceType.CPU5C_8_16'))), []);
});

test('workers: bad shape, negative, min > max (with swap fix), int form', async () => {
  assert.deepEqual(codes(await diagnose(queue('name="a", workers=(1, 2, 3)'))), ['invalid-workers']);
  assert.deepEqual(codes(await diagnose(queue('name="a", workers="3"'))), ['invalid-workers']);
  const neg = await diagnose(queue('name="a", workers=(-1, 2)'));
  assert.match(neg[0].message, /workers cannot be negative: \(-1, 2\)/);
  const rev = await diagnose(queue('name="a", workers=(5, 2)'));
  assert.match(rev[0].message, /workers min \(5\) cannot exceed max \(2\)/);
  assert.deepEqual(rev[0].fix, { kind: 'swap-workers', range: rev[0].range, replacement: '(2, 5)' });
  const m = await analyzeSource(queue('name="a", workers=4'));
  assert.deepEqual([m.diagnostics.length, m.endpoints[0].config.workersMin, m.endpoints[0].config.workersMax], [0, 0, 4]);
  const dflt = await analyzeSource(queue('name="a"'));
  assert.deepEqual([dflt.endpoints[0].config.workersMin, dflt.endpoints[0].config.workersMax, dflt.endpoints[0].config.gpu], [0, 1, ['any']]);
});

test('dependencies must be a list of valid requirement strings', async () => {
  assert.deepEqual(codes(await diagnose(queue('name="a", dependencies="requests"'))), ['invalid-dependencies']);
  const d = await diagnose(queue('name="a", dependencies=["ok", "not valid!"]'));
  assert.deepEqual(codes(d), ['invalid-dependencies']);
  assert.match(d[0].message, /"not valid!" is not a valid requirement/);
  assert.deepEqual(
    codes(await diagnose(queue('name="a", dependencies=["transformers>=4.40,<5", "torch; python_version>\'3.9\'", "pkg @ https://x/y.whl"]'))),
    [],
  );
  // Requirements pip installs from a URL, as the Python package accepts them.
  assert.deepEqual(
    codes(await diagnose(queue('name="a", dependencies=["git+https://github.com/org/repo.git@v1#egg=repo", "https://host/pkg-1.0-py3-none-any.whl"]'))),
    [],
  );
  assert.deepEqual(codes(await diagnose(queue('name="a", dependencies=["git+https://has space"]'))), ['invalid-dependencies']);
});

test('numeric parameters out of range or of the wrong type', async () => {
  for (const arg of ['execution_timeout_ms=-1', 'idle_timeout=0', 'idle_timeout=4000', 'gpu_count=0', 'max_concurrency=0']) {
    assert.deepEqual(codes(await diagnose(queue(`name="a", ${arg}`))), ['out-of-range'], arg);
  }
  assert.match((await diagnose(queue('name="a", idle_timeout=0')))[0].message, /idle timeout must be between 1 and 3600 seconds/);
  assert.deepEqual(codes(await diagnose(queue('name="a", max_concurrency="2"'))), ['invalid-type']);
  assert.deepEqual(codes(await diagnose(queue('name="a", idle_timeout=3600, gpu_count=1, max_concurrency=1, execution_timeout_ms=5 * 60 * 1000'))), []);
  // 0 is the reference product's default: no limit of the endpoint's own, so the platform's applies.
  const zero = await analyzeSource(queue('name="a", execution_timeout_ms=0'));
  assert.deepEqual(codes(zero.diagnostics), []);
  assert.equal(zero.endpoints[0].config.executionTimeoutMs, undefined);
});

test('env must be a dict of strings with valid names', async () => {
  assert.deepEqual(codes(await diagnose(queue('name="a", env=["A"]'))), ['invalid-env']);
  assert.deepEqual(codes(await diagnose(queue('name="a", env={"A": 1}'))), ['invalid-env']);
  assert.deepEqual(codes(await diagnose(queue('name="a", env={"1A": "x"}'))), ['invalid-env']);
  // Values in Python's words: None is no string to quote, True is written "True".
  assert.match((await diagnose(queue('name="a", env={"K": None}')))[0].message, /^env value of K is None, which no environment variable holds: give a string/);
  assert.match((await diagnose(queue('name="a", env={"K": True}')))[0].message, /write it in quotes, e\.g\. "True"\.$/);
  assert.deepEqual(codes(await diagnose(queue('name="a", env={"A_1": "x", "B": "y"}'))), []);
});

test('values that are not literals are reported where the build needs them; constants and enums are fine', async () => {
  const d = await diagnose(queue('name=make_name(), gpu=os.environ["GPU"]'));
  assert.deepEqual(codes(d), ['not-literal', 'not-literal']);
  assert.match(d[0].message, /must be a literal value/);
  const ok = await analyzeSource(`${HEADER}NAME = "svc"\nG = GpuGroup.AMPERE_80\nW = (0, 2)\n@Endpoint(name=NAME, gpu=G, workers=W)\ndef f():\n    pass\n`);
  assert.deepEqual(ok.diagnostics, []);
  assert.equal(ok.endpoints[0].name, 'svc');
  assert.deepEqual(ok.endpoints[0].config.gpu, ['AMPERE_80']);
});

test('a float where an int is due is an error, whole or not (the Python package refuses 1e3 and 3.0 there at import)', async () => {
  for (const args of ['idle_timeout=1e3', 'idle_timeout=1.5', 'gpu_count=2.0', 'workers=(0, 3.0)', 'workers=2.0', 'idle_timeout=T'])
    assert.equal(
      (await diagnose(queue(`name="a", ${args}`).replace('\n@Endpoint', '\nT = 10.0\n@Endpoint')))[0]?.code,
      args.startsWith('workers') ? 'invalid-workers' : 'invalid-type',
      args,
    );
  const [d] = await diagnose(queue('name="a", idle_timeout=1e3'));
  assert.equal(d.message, 'idle_timeout must be an integer between 1 and 3600, got 1e3.');
  assert.deepEqual(codes(await diagnose(queue('name="a", idle_timeout=1000, workers=(0, 3)'))), []);
});

test('unknown parameters are errors with a suggestion', async () => {
  const d = await diagnose(queue('name="a", worker=(0, 1)'));
  assert.deepEqual(codes(d), ['unknown-parameter']);
  assert.match(d[0].message, /did you mean 'workers'/);
});

test('endpoint names must be valid; the function name is the default', async () => {
  const d = await diagnose(queue('name="my endpoint!"'));
  assert.deepEqual(codes(d), ['invalid-endpoint-name']);
  assert.equal(d[0].fix?.kind, 'rename-endpoint');
  const m = await analyzeSource(queue('gpu="any"'));
  assert.deepEqual([m.diagnostics.length, m.endpoints[0].name], [0, 'fn']);
  assert.deepEqual(codes(await diagnose(queue('name="ok-name_2"'))), []);
  // A name taken from the code is held to the same rule (the Python package refuses it at import), and one from a
  // constant is shown as its value.
  for (const [fn, message] of [
    [
      'café',
      '"café" (the name it takes from the code when no name= is given) cannot be an endpoint name: use 1 to 63 letters, digits, \'-\' or \'_\', starting with a letter or digit; give it one, e.g. name="caf".',
    ],
    ['_private', /^"_private" \(the name it takes from the code .*; give it one, e\.g\. name="private"\.$/],
    [`f${'x'.repeat(70)}`, /^"fx{70}" \(the name it takes from the code/],
  ] as const) {
    const [dd] = await diagnose(queue('gpu="any"').replace('def fn', `def ${fn}`));
    assert.equal(dd?.code, 'invalid-endpoint-name', fn);
    if (typeof message === 'string') assert.equal(dd.message, message);
    else assert.match(dd.message, message);
    assert.equal(dd.fix, undefined, 'no name= to rename');
  }
  const [unicode] = await diagnose(queue('name="unicode-名前-x"'));
  assert.match(unicode.message, /, e\.g\. "unicode-x"\.$/, 'no run of dashes');
  const [constant] = await diagnose(queue('name=NAME').replace('\n@Endpoint', '\nNAME = "bad name"\n@Endpoint'));
  assert.match(constant.message, /^"bad name" \(the value of NAME\) cannot be an endpoint name: .*, e\.g\. "bad-name"\.$/);
});

const lb = (routes: string, decl = 'api = Endpoint(name="svc", cpu="cpu3c-1-2", workers=(1, 2))') => `${HEADER}${decl}\n${routes}`;

test("a route's path parameter must be a Python identifier, as the workers hold it: a FastAPI convertor ({path:path}) is named", async () => {
  const [conv] = await diagnose(lb('@api.get("/files/{path:path}")\ndef files(path: str):\n    return path\n'));
  assert.equal(conv?.code, 'route-path-param');
  assert.equal(
    conv.message,
    'path parameter {path:path} in /files/{path:path} must be a Python identifier; a convertor (:path) is not taken: write {path}, which matches one path segment',
  );
  assert.equal((await diagnose(lb('@api.get("/x/{a-b}")\ndef x():\n    return 1\n')))[0]?.code, 'route-path-param');
  assert.deepEqual(codes(await diagnose(lb('@api.get("/items/{item_id}/{名前}")\ndef x(item_id: int):\n    return 1\n'))), []);
});

test('routes: missing slash (with fix), reserved /ping, unknown method, duplicate route', async () => {
  const slash = await diagnose(lb('@api.post("process")\ndef p(text: str):\n    return text\n'));
  assert.deepEqual(codes(slash), ['route-path-slash']);
  assert.match(slash[0].message, /path must start with '\/', got: process/);
  assert.deepEqual(slash[0].fix, { kind: 'add-slash', range: slash[0].range, replacement: '"/process"' });
  assert.deepEqual(codes(await diagnose(lb('@api.get("/ping")\ndef p():\n    return 1\n'))), ['route-path-reserved']);
  const method = await diagnose(lb('@api.pots("/x")\ndef p():\n    return 1\n'));
  assert.deepEqual(codes(method), ['unknown-method']);
  assert.match(method[0].message, /did you mean \.post/);
  const dup = await diagnose(lb('@api.post("/x")\ndef a():\n    return 1\n@api.post("/x")\ndef b():\n    return 2\n'));
  assert.deepEqual(codes(dup), ['duplicate-route']);
  assert.match(dup[0].message, /duplicate route: POST \/x \(already registered to 'a'\)/);
  assert.equal(dup[0].related?.length, 1);
  const ok = await analyzeSource(
    lb(
      '@api.post("/x")\ndef a(text: str):\n    return 1\n@api.get("/x")\ndef b():\n    return 2\n@api.delete("/items/{id}")\nasync def c(id: str):\n  ' +
        '  return 3\n',
    ),
  );
  assert.deepEqual(ok.diagnostics, []);
  assert.deepEqual(
    ok.endpoints[0].routes.map((r) => `${r.method} ${r.path} ${r.function.name}`),
    ['POST /x a', 'GET /x b', 'DELETE /items/{id} c'],
  );
  assert.equal(ok.endpoints[0].kind, 'LOAD_BALANCED');
  assert.equal(ok.endpoints[0].variable, 'api');
});

test('a load-balanced endpoint with no routes is an error', async () => {
  const d = await diagnose(lb(''));
  assert.deepEqual(codes(d), ['lb-no-routes']);
  assert.match(d[0].message, /has no routes: add one with @api\.post/);
});

test('duplicate endpoint names across files are reported at both places with related information', async () => {
  const p = await analyzeFiles({
    'a.py': queue('name="same"'),
    'b.py': lb('@api.get("/h")\ndef h():\n    return 1\n', 'api = Endpoint(name="same", cpu="cpu3c-1-2")'),
  });
  const d = p.diagnostics.filter((x) => x.code === 'duplicate-endpoint-name');
  assert.deepEqual(d.map((x) => x.file).sort(), ['a.py', 'b.py']);
  assert.equal(d.find((x) => x.file === 'a.py')?.related?.[0].file, 'b.py');
  assert.equal(d.find((x) => x.file === 'b.py')?.related?.[0].file, 'a.py');
  assert.equal(d[0].fix?.kind, 'rename-endpoint');
  const other = await analyzeFiles({ 'a.py': queue('name="one"'), 'b.py': queue('name="two"') });
  assert.deepEqual(other.diagnostics, []);
});

test('a duplicate name that also breaks the name rule is renamed to a valid one', async () => {
  const p = await analyzeFiles({ 'a.py': queue('name="with space"'), 'b.py': queue('name="with space"').replace('def fn', 'def other') });
  const dup = p.diagnostics.filter((d) => d.code === 'duplicate-queue-function');
  assert.equal(dup.length, 2);
  for (const d of dup) {
    assert.match(d.message, /e\.g\. "with-space-\d"\.$/);
    assert.match(d.fix?.kind === 'rename-endpoint' ? d.fix.suggestion : '', /^with-space-\d$/);
  }
});

test('two queue functions under one name are their own rule', async () => {
  const p = await analyzeFiles({ 'a.py': queue('name="same"'), 'b.py': queue('name="same"').replace('def fn', 'def other') });
  assert.deepEqual(codes(p.diagnostics), ['duplicate-queue-function', 'duplicate-queue-function']);
  assert.match(p.diagnostics[0].message, /two queue-based functions are named "same"/);
});

test('a third-party import at the top of a worker file is a warning with a move fix; stdlib, local and strato are fine', async () => {
  const src =
    `import numpy as np\nimport os, json\nfrom . import helpers\nimport mylib\n${HEADER}\n@Endpoint(name="a")\ndef f(x: int):\n    ` +
    `"""Doc."""\n    return np.zeros(x)\n`;
  const m = await analyzeSource(src, 'worker.py', ['mylib']);
  assert.deepEqual(codes(m.diagnostics), ['top-level-import']);
  const d = m.diagnostics[0];
  assert.equal(d.severity, 'warning');
  assert.match(d.message, /'numpy' is a third-party package imported at the top/);
  assert.equal(d.fix?.kind, 'move-import');
  if (d.fix?.kind === 'move-import') assert.deepEqual(d.fix.targets, [{ position: { line: 9, character: 4 }, text: 'import numpy as np\n    ' }]);
  // A file without endpoints may import what it likes.
  assert.deepEqual(codes((await analyzeSource('import numpy\nx = 1\n')).diagnostics), []);
});

test("the move fix writes a multi-line import as one line that parses (comments and continuations dropped), with the file's line endings", async () => {
  const multi = `from requests import (\n    get,  # the getter\n    post,\n)\nimport yaml, \\\n    toml\n${HEADER}\n@Endpoint(name="a")\ndef f(u: str):\n    return get(u), post(u), yaml, toml\n`;
  const fixes = (await analyzeSource(multi)).diagnostics.map((d) => (d.fix?.kind === 'move-import' ? d.fix.targets.map((t) => t.text) : []));
  assert.deepEqual(fixes, [['from requests import (get, post)\n    '], ['import yaml, toml\n    ']]);
  const crlf = `import requests\r\n${HEADER.replace(/\n/g, '\r\n')}\r\n@Endpoint(name="a")\r\ndef f(u: str):\r\n    return requests.get(u)\r\n`;
  const [d] = (await analyzeSource(crlf)).diagnostics;
  assert.deepEqual(d.fix?.kind === 'move-import' && d.fix.targets.map((t) => t.text), ['import requests\r\n    ']);
});

test("a file still importing the reference product's package is an error with a fix to the strato import (its endpoints were left out without a word)", async () => {
  const src = 'from runpod_flash import Endpoint, GpuGroup\n\n@Endpoint(name="old", gpu=GpuGroup.ADA_24)\ndef old(x: int):\n    return x\n';
  const m = await analyzeSource(src);
  assert.deepEqual(codes(m.diagnostics), ['reference-import']);
  const [d] = m.diagnostics;
  assert.equal(d.severity, 'error');
  assert.match(d.message, /^runpod_flash is the reference product's package, which Strato replaces: change the import line to import from strato/);
  assert.deepEqual(d.fix, { kind: 'replace-value', range: d.range, replacement: 'from strato import Endpoint, GpuGroup' });
  const fixed = `from strato import Endpoint, GpuGroup${src.slice(src.indexOf('\n'))}`;
  const after = await analyzeSource(fixed);
  assert.deepEqual([codes(after.diagnostics), after.endpoints.map((e) => e.name)], [[], ['old']], 'fixed: its endpoint is found');
  for (const [line, replacement] of [
    ['import runpod_flash', 'import strato as runpod_flash'],
    ['import runpod_flash as rf', 'import strato as rf'],
    ['from runpod_flash.sub import x', undefined],
  ] as const) {
    const [r] = (await analyzeSource(`${line}\n`)).diagnostics;
    assert.equal(r.code, 'reference-import', line);
    assert.equal(r.fix?.kind === 'replace-value' ? r.fix.replacement : undefined, replacement, line);
  }
});

test('a class endpoint with no public method is an error (nothing a job can call); one with a base class is left to the runtime', async () => {
  const cls = (body: string, bases = '') => `${HEADER}\n@Endpoint(name="m")\nclass Model${bases}:\n${body}\n`;
  const [d] = await diagnose(cls('    def __init__(self):\n        self.w = 1\n\n    def _load(self):\n        pass\n'));
  assert.equal(d?.code, 'class-without-method');
  assert.equal(d.message, "class Model has no public method to call: define one (its name not starting with '_').");
  assert.deepEqual(codes(await diagnose(cls('    def predict(self, x):\n        return x\n'))), []);
  assert.deepEqual(codes(await diagnose(cls('    pass\n', '(Base)'))), [], 'its methods may come from Base');
});

test("no move fix when a class endpoint's body uses the import outside its methods (it runs at import time); a method-only use is moved", async () => {
  const cls = (attr: string) =>
    `import numpy as np\n${HEADER}\n@Endpoint(name="m", gpu="ADA_24")\nclass Model:\n${attr}\n    def run(self, x):\n        return np.zeros(3).tolist()\n`;
  const [inBody] = (await analyzeSource(cls('    dtype = np.float32\n'))).diagnostics;
  assert.equal(inBody.code, 'top-level-import');
  assert.equal(inBody.fix, undefined, 'moving it into run() would leave dtype = np.float32 without np');
  const [inDefault] = (await analyzeSource(cls('    class Config:\n        kind = np.float32\n'))).diagnostics;
  assert.equal(inDefault.fix, undefined, 'a nested class body runs at import time too');
  const [methodOnly] = (await analyzeSource(cls('    name = "m"\n'))).diagnostics;
  assert.equal(methodOnly.fix?.kind, 'move-import');
});

test('syntax errors are reported and never stop the analysis of the rest', async () => {
  const m = await analyzeSource(`${HEADER}@Endpoint(name="ok")\ndef f():\n    return 1\n\ndef broken(:\n    pass\n`);
  assert.ok(m.diagnostics.some((d) => d.code === 'syntax-error'));
  assert.equal(m.endpoints.length, 1);
  for (const junk of ['\u0000\u0001\u0002', '@Endpoint(', 'from strato import Endpoint\n@Endpoint(name=', 'x'.repeat(100000), '"""']) {
    await analyzeSource(junk); // must not throw
  }
});

test('a top-level file named like a module the worker runtime imports is an error on that file; other names are fine', async () => {
  const src = queue('name="a"');
  for (const [file, hidden] of [
    ['json.py', "Python's json module, which the Strato runtime imports"],
    ['strato.py', 'the strato package itself'],
    ['socket/__init__.py', "Python's socket module"],
  ]) {
    const d = (await analyzeSource(src, file)).diagnostics;
    assert.deepEqual(codes(d), ['shadowed-module'], file);
    assert.equal(d[0].severity, 'error');
    assert.ok(d[0].message.startsWith(`${file} has the name of ${hidden}`), d[0].message);
    assert.match(d[0].message, /workers would fail to start; rename it/);
  }
  // A helper without endpoints hides the module as much as a worker file does.
  assert.deepEqual(codes((await analyzeSource('x = 1\n', 'json.py')).diagnostics), ['shadowed-module']);
  for (const file of ['jsonish.py', 'lib/json.py', 'code.py', 'worker.py']) assert.deepEqual(codes((await analyzeSource(src, file)).diagnostics), [], file);
  // The catalog names every module the runtime imports: a new import in engine/python/strato is caught here.
  const dir = path.join(REPO, 'engine/python/strato');
  const runtime = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.py'))
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  const imported = new Set<string>();
  for (const m of runtime.matchAll(/^\s*(?:import ([\w., ]+)|from (\w+)[\w.]* import)/gm))
    for (const name of (m[1] ?? m[2]).split(',')) imported.add(name.trim().split(/[. ]/)[0]);
  const { runtimeModules } = await import('../../engine/src/catalog');
  const { STDLIB_MODULES } = await import('../../engine/src/project/stdlib');
  for (const name of imported) if (STDLIB_MODULES.has(name)) assert.ok(runtimeModules.includes(name), `catalog.json runtimeModules lacks ${name}`);
});

test('@Endpoint inside a module-level if, try or with block is an error naming the block: the analysis and the build read the top level', async () => {
  const src =
    `${HEADER}\nif True:\n    @Endpoint(name="inif", gpu="ADA_24")\n    def f(x):\n        return x\ntry:\n    @Endpoint(name="intry")\n    def g(x):\n        return x\n` +
    `except Exception:\n    pass\n\n@Endpoint(name="top")\ndef h(x):\n    return x\n`;
  const m = await analyzeSource(src);
  assert.deepEqual(
    m.diagnostics.map((d) => [d.code, d.message.split(':')[0]]),
    [
      ['nested-endpoint', 'f is inside an if block'],
      ['nested-endpoint', 'g is inside a try block'],
    ],
  );
  assert.match(
    m.diagnostics[0].message,
    /Strato finds endpoints at the top level of a file \(the build does not run it\), so this endpoint would not exist; move f to the top level/,
  );
  assert.deepEqual(
    m.endpoints.map((e) => e.name),
    ['top'],
  );
});

test('@Endpoint on a method or a nested function, and a route inside a function, are errors: they would not be served', async () => {
  const src =
    `${HEADER}\napi = Endpoint(name="api", cpu="cpu3c-1-2")\n\n\nclass Holder:\n    @Endpoint(name="method")\n    def m(self, x: int):\n        return x\n\n\n` +
    `def outer():\n    @Endpoint(name="nested")\n    def inner(x: int):\n        return x\n\n    @api.post("/later")\n    def later():\n        return 1\n\n    return inner\n\n\n` +
    `@api.get("/ok")\ndef ok():\n    return 1\n`;
  const m = await analyzeSource(src);
  const nested = m.diagnostics.filter((d) => d.code === 'nested-endpoint');
  assert.deepEqual(
    nested.map((d) => [d.range.start.line + 1, d.severity, d.message.split(':')[0]]),
    [
      [7, 'error', 'm is a method'],
      [13, 'error', 'inner is a nested function'],
      [17, 'error', 'later is a nested function'],
    ],
  );
  assert.match(nested[0].message, /Strato serves only module-level functions and classes, so this endpoint would not exist; move m to the top level/);
  assert.match(nested[2].message, /so this route would not exist/);
  assert.deepEqual(
    m.endpoints.map((e) => e.name),
    ['api'],
    'the module-level ones are still found',
  );
  // A decorator of another library on a method is no business of Strato's.
  assert.deepEqual(
    codes((await analyzeSource(`${HEADER}\nimport functools\n\n\nclass C:\n    @functools.cache\n    def m(self):\n        return 1\n`)).diagnostics),
    [],
  );
});

test('a keyword argument given twice is an error (Python refuses it at import)', async () => {
  const d = await diagnose(queue('name="a", workers=(0, 1), workers=(0, 2)'));
  assert.deepEqual(codes(d), ['duplicate-argument']);
  assert.match(d[0].message, /workers is given more than once/);
});
