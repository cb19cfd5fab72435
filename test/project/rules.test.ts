// Every rule of an endpoint's declaration (its parameters, names, routes): a case that triggers it (code, message,
// position) and one that must not. The rules of a file as a whole are in fileRules.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeFiles, analyzeSource, codes, diagnose, HEADER, queue } from '../helpers/analysis';

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

test('a keyword argument given twice is an error (Python refuses it at import)', async () => {
  const d = await diagnose(queue('name="a", workers=(0, 1), workers=(0, 2)'));
  assert.deepEqual(codes(d), ['duplicate-argument']);
  assert.match(d[0].message, /workers is given more than once/);
});
