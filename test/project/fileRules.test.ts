// The rules of a worker file as a whole: its imports (a third-party package at the top and the fix that moves it, the
// reference product's package), where its declarations sit (nested, inside a module-level block, a class with no
// method to call), its own name, and its syntax errors. Each: a case that triggers it and one that must not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadProject } from '../../engine/src/project';
import { analyzeSource, codes, diagnose, HEADER, queue } from '../helpers/analysis';
import { REPO } from '../helpers/cli';

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
  // A function that uses it on its `def` line cannot take the import: moving it into the other one would leave that
  // one without it (a NameError on its first call).
  const oneLine =
    `import requests\n${HEADER}\n@Endpoint(name="a", cpu="cpu3c-1-2")\ndef a(url): return requests.get(url).text\n\n\n` +
    `@Endpoint(name="b", cpu="cpu3c-1-2")\ndef b(url):\n    return requests.get(url).status_code\n`;
  const [both] = (await analyzeSource(oneLine)).diagnostics;
  assert.equal(both.code, 'top-level-import');
  assert.equal(both.fix, undefined);
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

test("a name bound again below an endpoint's function is an error there (its worker would import the other); above it, fine", async () => {
  const src =
    `${HEADER}\ndef one(x):\n    return "earlier, replaced by the endpoint"\n\n` +
    `@Endpoint(name="one", cpu="cpu3c-1-2")\ndef one(x):\n    return 1\n\n` +
    `@Endpoint(name="two", cpu="cpu3c-1-2")\ndef f(x):\n    return 1\n\n` +
    `@Endpoint(name="three", cpu="cpu3c-1-2")\ndef f(x):\n    return 2\n\n` +
    `@Endpoint(name="four", cpu="cpu3c-1-2")\nclass Model:\n    def predict(self, x):\n        return x\n\nModel = None\n`;
  const d = await diagnose(src);
  assert.deepEqual(codes(d), ['redefined-function', 'redefined-function']);
  assert.equal(d[0].range.start.line, 10, 'on the first f, not the last');
  assert.match(
    d[0].message,
    /^f is bound again at line 15: the worker of endpoint "two" imports f from worker by name and would run what line 15 binds, not this function; give one of them another name\.$/,
  );
  assert.match(d[1].message, /^Model is bound again at line 23: the worker of endpoint "four" .* not this class;/);
});

test('a load-balanced variable bound again serves, below each binding, that endpoint; an alias serves the one it names', async () => {
  const src =
    `${HEADER}api = Endpoint(name="lb-a", cpu="cpu3c-1-2")\n\n@api.post("/x")\ndef x():\n    return 1\n\n` +
    `api = Endpoint(name="lb-b", cpu="cpu3c-1-2")\n\n@api.get("/y")\ndef y():\n    return 2\n\n` +
    `alias = api\n\n@alias.post("/z")\ndef z():\n    return 3\n`;
  const m = await analyzeSource(src);
  assert.deepEqual(m.diagnostics, []);
  const routes = Object.fromEntries(m.endpoints.map((e) => [e.name, e.routes.map((r) => `${r.method} ${r.path}`)]));
  assert.deepEqual(routes, { 'lb-a': ['POST /x'], 'lb-b': ['GET /y', 'POST /z'] });
});

test('a constant is read as Python reads it when the decorator runs: its last assignment above; one assigned only below is no value', async () => {
  const src =
    `${HEADER}NAME = "before"\nWORKERS = (0, 2)\n\n@Endpoint(name=NAME, cpu="cpu3c-1-2", workers=WORKERS)\ndef f(x):\n    return x\n\n` +
    `NAME = "after"\nWORKERS = (0, 9)\n\n@Endpoint(name=NAME, cpu="cpu3c-1-2", workers=WORKERS)\ndef g(x):\n    return x\n\n` +
    `@Endpoint(name=LATE, cpu="cpu3c-1-2")\ndef h(x):\n    return x\n\nLATE = "late"\n`;
  const m = await analyzeSource(src);
  assert.deepEqual(
    m.endpoints.map((e) => [e.name, e.config.workersMax]),
    [
      ['before', 2],
      ['after', 9],
      ['h', 1],
    ],
  );
  assert.deepEqual(codes(m.diagnostics), ['not-literal']);
  assert.equal(m.diagnostics[0].range.start.line, 15, 'on LATE, which Python has not bound yet there (NameError)');
});

test('a worker file that is not UTF-8 is an error naming the line, unless it declares its encoding as Python takes it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-encoding-'));
  try {
    const worker = (first: string) =>
      Buffer.concat([
        Buffer.from(`${first}from strato import Endpoint\n\n@Endpoint(name="a", cpu="cpu3c-1-2")\ndef a():\n    """caf`),
        Buffer.from([0xe9]),
        Buffer.from('"""\n'),
      ]);
    fs.writeFileSync(path.join(dir, 'requirements.txt'), '');
    fs.writeFileSync(path.join(dir, 'latin.py'), worker(''));
    fs.writeFileSync(path.join(dir, 'declared.py'), worker('# -*- coding: latin-1 -*-\n').toString('latin1').replace('name="a"', 'name="b"'), 'latin1');
    fs.writeFileSync(path.join(dir, 'replacement.py'), `from strato import Endpoint\n\n@Endpoint(name="c", cpu="cpu3c-1-2")\ndef c():\n    return "\uFFFD"\n`);
    const p = await loadProject(dir);
    const errors = p.diagnostics.filter((d) => d.severity === 'error');
    assert.deepEqual(
      errors.map((d) => [d.file, d.range.start.line]),
      [['latin.py', 4]],
    );
    assert.match(errors[0].message, /^latin\.py is not UTF-8 \(byte 0xe9 on line 5\): Python reads a source file as UTF-8 unless .*; save it as UTF-8$/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a byte order mark is no text: positions on the first line are the columns an editor shows (it leaves the mark out)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-bom-'));
  try {
    const line = 'from strato import Endpoint; api = Endpoint(name="bad name", cpu="cpu3c-1-2")';
    fs.writeFileSync(path.join(dir, 'requirements.txt'), '');
    fs.writeFileSync(path.join(dir, 'bom.py'), `\uFEFF${line}\n`);
    const p = await loadProject(dir);
    const named = p.diagnostics.find((d) => d.code === 'invalid-endpoint-name');
    assert.ok(named, JSON.stringify(p.diagnostics));
    assert.deepEqual([named.range.start.line, named.range.start.character], [0, line.indexOf('"bad name"')]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
