// `strato build` end to end on real files with a real pip: manifest, artifact contents, dependencies
// (merged, excluded, transitive exclusion), ignore rules and secrets, and every error path.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';
import { buildWheel } from '../helpers/wheels';
import { sourceFingerprint } from '../../engine/src/build';

let tmp: string;
let wheels: string;
before(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-build-'));
  wheels = path.join(tmp, 'wheels');
  buildWheel(tmp, wheels, 'tinyfmt', '1.2.0', ['numpy']);
  buildWheel(tmp, wheels, 'numpy', '9.9.9'); // a stand-in: must never reach the artifact, even as a transitive dependency
  buildWheel(tmp, wheels, 'tinyextra', '0.1.0');
  // Stand-ins for a library that requires torch, and torch with a dependency of its own and one it shares.
  buildWheel(tmp, wheels, 'tinyaccel', '0.1.0', ['torch', 'tinyshared']);
  buildWheel(tmp, wheels, 'torch', '9.9.9', ['torchonly', 'tinyshared']);
  buildWheel(tmp, wheels, 'torchonly', '1.0.0');
  buildWheel(tmp, wheels, 'tinyshared', '1.0.0');
});
after(() => rmSync(tmp, { recursive: true, force: true }));

const pipEnv = () => ({ PIP_FIND_LINKS: wheels, PIP_NO_INDEX: '1', PIP_CONFIG_FILE: '/dev/null' });

async function initProject(name: string): Promise<string> {
  const r = await runCli(['init', name], { cwd: tmp });
  assert.equal(r.code, 0, r.stderr);
  return path.join(tmp, name);
}

function listTar(file: string): string[] {
  return execFileSync('tar', ['tzf', file], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/\/$/, ''));
}

test('the init template builds: manifest with exactly the spec fields, handlers, sources, runtime, summary line', async () => {
  const dir = await initProject('tpl');
  const r = await runCli(['build'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /built tpl {2}3 endpoints, \d+ files, 0 deps, [\d.]+ KB in \d+ ms/);
  const manifest = JSON.parse(readFileSync(path.join(dir, '.strato/strato_manifest.json'), 'utf8'));
  assert.equal(manifest.version, 1);
  assert.equal(manifest.project_name, 'tpl');
  assert.match(manifest.source_fingerprint, /^[0-9a-f]{64}$/);
  assert.deepEqual(Object.keys(manifest.resources).sort(), ['cpu-stats', 'gpu-hello', 'lb-api']);
  const gpu = manifest.resources['gpu-hello'];
  assert.equal(gpu.is_load_balanced, false);
  assert.equal(gpu.gpuIds, 'ADA_24');
  assert.deepEqual([gpu.workersMin, gpu.workersMax], [0, 3]);
  assert.deepEqual(
    gpu.functions.map((f: { name: string; module: string }) => [f.name, f.module]),
    [['gpu_hello', 'gpu_worker']],
  );
  assert.equal(typeof gpu.imageName, 'string');
  assert.deepEqual(gpu.env, {});
  const lb = manifest.resources['lb-api'];
  assert.equal(lb.is_load_balanced, true);
  assert.equal(lb.gpuIds, undefined, 'CPU endpoints carry no gpuIds');
  assert.deepEqual(manifest.routes, { 'lb-api': { 'POST /process': 'process', 'GET /health': 'health' } });
  const entries = listTar(path.join(dir, '.strato/artifact.tar.gz'));
  for (const f of [
    'strato_manifest.json',
    'requirements.txt',
    'handler_gpu_hello.py',
    'handler_cpu_stats.py',
    'handler_lb_api.py',
    'gpu_worker.py',
    'lb_worker.py',
    'cpu_worker.py',
    'deps/strato/__init__.py',
    'README.md',
  ]) {
    assert.ok(entries.includes(f), `artifact lacks ${f}`);
  }
  assert.ok(!entries.some((e) => e.startsWith('.strato')), 'the work folder is not packaged');
  assert.ok(!existsSync(path.join(dir, '.strato/.build')), '.strato/.build is removed');
  const extracted = path.join(tmp, 'tpl-x');
  mkdirSync(extracted);
  execFileSync('tar', ['xzf', path.join(dir, '.strato/artifact.tar.gz'), '-C', extracted]);
  assert.match(readFileSync(path.join(extracted, 'handler_gpu_hello.py'), 'utf8'), /from strato\.runtime import serve\nserve\("gpu-hello"\)/);
  assert.deepEqual(JSON.parse(readFileSync(path.join(extracted, 'strato_manifest.json'), 'utf8')), manifest);
  // As its header says: run from the unpacked artifact, with nothing installed (strato comes from its deps/).
  const run = spawnSync(process.env.STRATO_PYTHON || 'python3', ['handler_cpu_stats.py', '--test_input', '{"input": {"numbers": [1, 2, 3]}}'], {
    cwd: extracted,
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: '' },
    timeout: 30_000,
  });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout).output, { count: 3, mean: 2, min: 1, max: 3 });
  // With no input, it shows one built from the function's parameters (the manifest's), and that one runs.
  const bare = spawnSync(process.env.STRATO_PYTHON || 'python3', ['handler_cpu_stats.py'], { cwd: extracted, encoding: 'utf8', timeout: 30_000 });
  assert.equal(bare.status, 1, bare.stderr);
  const shown = /nothing to run: pass --test_input '([^']+)'/.exec(bare.stderr)?.[1];
  assert.ok(shown, bare.stderr);
  assert.deepEqual(JSON.parse(shown), { input: manifest.resources['cpu-stats'].functions[0].sample_input });
  const sample = spawnSync(process.env.STRATO_PYTHON || 'python3', ['handler_cpu_stats.py', '--test_input', shown], {
    cwd: extracted,
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(JSON.parse(sample.stdout).status, 'COMPLETED', sample.stderr);
});

test('endpoints whose names differ only by - and _ get a handler each, each serving its own endpoint', async () => {
  const dir = await initProject('twins');
  writeFileSync(
    path.join(dir, 'twins_worker.py'),
    `from strato import Endpoint


@Endpoint(name="foo-bar", cpu="cpu3c-1-2")
def handler(x: int) -> int:
    return x


@Endpoint(name="foo_bar", cpu="cpu3c-1-2")
def other_handler(x: int) -> int:
    return x + 1


@Endpoint(name="foo_bar_2", cpu="cpu3c-1-2")
def third_handler(x: int) -> int:
    return x + 2
`,
  );
  const r = await runCli(['build'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const manifest = JSON.parse(readFileSync(path.join(dir, '.strato/strato_manifest.json'), 'utf8'));
  const files = Object.fromEntries(['foo-bar', 'foo_bar', 'foo_bar_2'].map((n) => [n, manifest.resources[n].handler_file]));
  assert.deepEqual(files, { 'foo-bar': 'handler_foo_bar.py', foo_bar: 'handler_foo_bar_3.py', foo_bar_2: 'handler_foo_bar_2.py' });
  const extracted = path.join(tmp, 'twins-x');
  mkdirSync(extracted);
  execFileSync('tar', ['xzf', path.join(dir, '.strato/artifact.tar.gz'), '-C', extracted]);
  for (const [name, file] of Object.entries(files)) assert.match(readFileSync(path.join(extracted, file), 'utf8'), new RegExp(`serve\\("${name}"\\)`));
});

test('the fingerprint covers the packaged sources: a source change changes it, an ignored file does not', async () => {
  const dir = await initProject('fp');
  const files = ['gpu_worker.py', 'cpu_worker.py'];
  const before1 = sourceFingerprint(dir, files);
  assert.equal(sourceFingerprint(dir, [...files].reverse()), before1, 'order-independent');
  writeFileSync(path.join(dir, 'cpu_worker.py'), readFileSync(path.join(dir, 'cpu_worker.py'), 'utf8') + '\n# changed\n');
  assert.notEqual(sourceFingerprint(dir, files), before1);
  const r1 = await runCli(['build'], { cwd: dir });
  const fp1 = JSON.parse(readFileSync(path.join(dir, '.strato/strato_manifest.json'), 'utf8')).source_fingerprint;
  mkdirSync(path.join(dir, 'tests'));
  writeFileSync(path.join(dir, 'tests', 'test_x.py'), 'assert True\n');
  const r2 = await runCli(['build'], { cwd: dir });
  const fp2 = JSON.parse(readFileSync(path.join(dir, '.strato/strato_manifest.json'), 'utf8')).source_fingerprint;
  assert.equal(r1.code + r2.code, 0);
  assert.equal(fp2, fp1);
});

test(
  'dependencies: requirements.txt and dependencies=[...] merged, installed with pip; base-image packages dropped even when ' + 'transitive; --exclude',
  async () => {
    const dir = await initProject('deps');
    writeFileSync(path.join(dir, 'requirements.txt'), '# shared\ntinyfmt==1.2.0\ntorch>=2\n');
    writeFileSync(
      path.join(dir, 'extra_worker.py'),
      'from strato import Endpoint\n\n@Endpoint(name="extra", cpu="cpu3c-1-2", dependencies=["tinyextra", "numpy"])\ndef extra(x: int = 1):\n    import ' +
        'tinyextra\n    return tinyextra.hello()\n',
    );
    const r = await runCli(['build', '--keep-build'], { cwd: dir, env: pipEnv() });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /2 deps/);
    // The artifact's requirements.txt is the merged one; the project's own file is never written.
    assert.equal(readFileSync(path.join(dir, 'requirements.txt'), 'utf8'), '# shared\ntinyfmt==1.2.0\ntorch>=2\n');
    assert.match(r.stdout, /not installed \(in the base image or --exclude\): torch, numpy/);
    const deps = path.join(dir, '.strato/.build/deps');
    assert.ok(existsSync(path.join(deps, 'tinyfmt/__init__.py')));
    assert.ok(existsSync(path.join(deps, 'tinyextra/__init__.py')));
    assert.ok(!existsSync(path.join(deps, 'numpy')), 'a transitive numpy is removed');
    assert.equal(readFileSync(path.join(dir, '.strato/.build/requirements.txt'), 'utf8'), 'tinyfmt==1.2.0\ntinyextra\n');
    const entries = listTar(path.join(dir, '.strato/artifact.tar.gz'));
    assert.ok(entries.includes('deps/tinyfmt/__init__.py'));
    assert.ok(!entries.some((e) => e.startsWith('deps/numpy')));

    const ex = await runCli(['build', '--exclude', 'tinyextra'], { cwd: dir, env: pipEnv() });
    assert.equal(ex.code, 0, ex.stderr);
    assert.ok(!listTar(path.join(dir, '.strato/artifact.tar.gz')).some((e) => e.startsWith('deps/tinyextra')));
  },
);

test('a base-image package pulled in by another goes with what only it required; what the project needs by another path stays', async () => {
  const dir = await initProject('accel');
  writeFileSync(path.join(dir, 'requirements.txt'), 'tinyaccel\n');
  const r = await runCli(['build'], { cwd: dir, env: pipEnv() });
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const deps = new Set(
    listTar(path.join(dir, '.strato/artifact.tar.gz'))
      .filter((e) => e.startsWith('deps/'))
      .map((e) => e.split('/')[1].replace(/-[^-]+\.dist-info$/, '')),
  );
  assert.deepEqual([...deps].filter((d) => d && d !== 'strato').sort(), ['tinyaccel', 'tinyshared'], "torch and torchonly are the base image's");
});

test("a failed install shows pip's reason in one block and how to fix it", async () => {
  const dir = await initProject('badpip');
  writeFileSync(path.join(dir, 'requirements.txt'), 'no-such-package-xyz==1.0\n');
  const r = await runCli(['build'], { cwd: dir, env: pipEnv() });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /dependency installation failed/);
  assert.match(r.stderr, /\| ERROR: .*no-such-package-xyz/);
  assert.match(r.stderr, /PIP_INDEX_URL or PIP_FIND_LINKS/);
  assert.doesNotMatch(r.stderr, /at .*\.js:\d+/, 'no stack trace');
});

test('a configuration error refuses the build with file:line:col for each error', async () => {
  const dir = await initProject('refused');
  writeFileSync(
    path.join(dir, 'gpu_worker.py'),
    'from strato import Endpoint\n\n@Endpoint(name="g", gpu="ADA_24", cpu="cpu3c-1-2", workers=(3, 1))\ndef g():\n    return 1\n',
  );
  const r = await runCli(['build'], { cwd: dir });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^gpu_worker\.py:3:21: error: gpu and cpu are mutually exclusive/m);
  assert.match(r.stderr, /gpu_worker\.py:3:\d+: error: workers min \(3\) cannot exceed max \(1\)/);
  assert.match(r.stderr, /build refused: 2 errors/);
  assert.ok(!existsSync(path.join(dir, '.strato/artifact.tar.gz')));
});

test('no endpoint found: the error names the decorator syntax, the ignore files and the built-in patterns', async () => {
  const dir = path.join(tmp, 'empty');
  mkdirSync(path.join(dir, 'tests'), { recursive: true });
  writeFileSync(path.join(dir, 'main.py'), 'print("hi")\n');
  writeFileSync(path.join(dir, 'pyproject.toml'), '[project]\nname = "empty"\n');
  writeFileSync(path.join(dir, 'tests', 'w.py'), 'from strato import Endpoint\n@Endpoint(name="x")\ndef f():\n    pass\n');
  const r = await runCli(['build'], { cwd: dir });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no @Endpoint function found in empty: check the decorator syntax/);
  assert.match(r.stderr, /\.gitignore/);
  assert.match(r.stderr, /built-in ignore patterns \(tests\//);
});

test('secrets are never packaged; .gitignore is honoured', async () => {
  const dir = await initProject('secrets');
  writeFileSync(path.join(dir, '.env'), 'STRATO_API_KEY=secret\n');
  writeFileSync(path.join(dir, '.env.local'), 'X=1\n');
  writeFileSync(path.join(dir, 'server.pem'), 'KEY\n');
  writeFileSync(path.join(dir, '.gitignore'), '!.env\nlocal_data/\n');
  mkdirSync(path.join(dir, 'local_data'));
  writeFileSync(path.join(dir, 'local_data', 'big.bin'), 'x');
  // A folder of wheels to install from (PIP_FIND_LINKS=./wheels): installed into deps/, never copied as well.
  mkdirSync(path.join(dir, 'wheels'));
  writeFileSync(path.join(dir, 'wheels', 'six-1.17.0-py2.py3-none-any.whl'), 'wheel');
  const r = await runCli(['build'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const entries = listTar(path.join(dir, '.strato/artifact.tar.gz'));
  for (const left of ['.env', '.env.local', 'server.pem', 'local_data/big.bin', 'wheels/six-1.17.0-py2.py3-none-any.whl'])
    assert.ok(!entries.includes(left), `${left} was packaged`);
  assert.ok(entries.includes('.env.example'));
});

test('secret-looking files are left out by default, named in the build output, and packaged when .stratoinclude names them', async () => {
  const dir = await initProject('creds');
  const secrets: Record<string, string> = {
    '.envrc': 'export K=1\n',
    '.aws/credentials': '[default]\n',
    '.git-credentials': 'https://u:p@h\n',
    id_ecdsa: 'K\n',
    id_rsa: 'K\n',
    id_ed25519: 'K\n',
    'cert.p12': 'K\n',
    'tls.pem': 'K\n',
    'tls.key': 'K\n',
    'credentials.json': '{}\n',
    'secrets.toml': 'a=1\n',
    '.ssh/config': 'Host x\n',
    '.kube/config': 'k\n',
    '.docker/config.json': '{}\n',
    '.pgpass': 'h:5432:*:u:p\n',
    '.netrc': 'machine h\n',
    '.bash_history': 'ls\n',
    '.zsh_history': 'ls\n',
    'sub/.aws/config': '[x]\n',
  };
  for (const [f, text] of Object.entries(secrets)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  const r = await runCli(['build'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const entries = listTar(path.join(dir, '.strato/artifact.tar.gz'));
  for (const f of Object.keys(secrets)) assert.ok(!entries.includes(f), `${f} was packaged`);
  assert.ok(!entries.some((e) => /(^|\/)\.(aws|ssh|kube)(\/|$)/.test(e)), entries.join(' '));
  assert.match(r.stdout, /left out 19 secret-looking files: .*\.aws\/.*\.ssh\/.*id_rsa.*\(name one in \.stratoinclude to package it on purpose\)/);
  writeFileSync(path.join(dir, '.stratoinclude'), 'tls.pem\n');
  const again = await runCli(['build'], { cwd: dir });
  assert.equal(again.code, 0, again.stderr);
  assert.ok(listTar(path.join(dir, '.strato/artifact.tar.gz')).includes('tls.pem'), 'a file named in .stratoinclude is packaged');
  assert.match(again.stdout, /left out 18 secret-looking files/);
});

test('build outside a project (no pyproject.toml, requirements.txt or .strato/) refuses and packages nothing', async () => {
  const home = path.join(tmp, 'home');
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'KEY\n');
  writeFileSync(path.join(home, 'w.py'), 'from strato import Endpoint\n@Endpoint(name="x", cpu="cpu3c-1-2")\ndef f():\n    return 1\n');
  const r = await runCli(['build'], { cwd: home });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /is not a Strato project \(none of pyproject\.toml, requirements\.txt, \.strato\/ is there or in a folder above\), so nothing was packaged: run strato build in the project folder/,
  );
  assert.ok(!existsSync(path.join(home, '.strato')));
  // check in a folder with nothing to check (a CI step's wrong working directory) fails rather than pass on 0 files.
  const nothing = path.join(tmp, 'nothing-here');
  mkdirSync(nothing, { recursive: true });
  const checked = await runCli(['check'], { cwd: nothing });
  assert.equal(checked.code, 1);
  assert.match(checked.stderr, /nothing-here is not a Strato project .*, so nothing was checked: run strato check in the project folder/);
  // A project whose only worker file is unread: not "not a project", but what was left out and why.
  const unread = path.join(tmp, 'unread-only');
  mkdirSync(path.join(unread, 'tests'), { recursive: true });
  writeFileSync(path.join(unread, 'requirements.txt'), '');
  writeFileSync(path.join(unread, 'tests', 'test_w.py'), 'def test_x():\n    pass\n');
  writeFileSync(path.join(unread, 'w.py'), 'from strato import Endpoint\n\x00\n');
  const left = await runCli(['check'], { cwd: unread });
  assert.equal(left.code, 1);
  assert.doesNotMatch(left.stderr, /is not a Strato project/);
  assert.match(left.stderr, /w\.py is not read for endpoints: it holds a NUL byte/);
  assert.match(left.stderr, /error: nothing to check in \S*unread-only: no Python file there is read for endpoints \(the ignore rules leave out tests\//);
  // Python files and not one endpoint: what build and deploy would refuse is not a pass.
  const noEndpoint = path.join(tmp, 'no-endpoint');
  mkdirSync(noEndpoint, { recursive: true });
  writeFileSync(path.join(noEndpoint, 'requirements.txt'), '');
  writeFileSync(path.join(noEndpoint, 'a.py'), 'def f():\n    pass\n');
  const none = await runCli(['check', '--json'], { cwd: noEndpoint });
  assert.equal(none.code, 1);
  assert.match(JSON.parse(none.stdout).error, /^no @Endpoint function found in no-endpoint: check the decorator syntax/);
  // A folder of several projects (a monorepo's top): not checked as one, whose names would collide.
  const mono = path.join(tmp, 'mono');
  mkdirSync(mono, { recursive: true });
  for (const name of ['shop', 'blog']) assert.equal((await runCli(['init', name], { cwd: mono })).code, 0);
  const both = await runCli(['check'], { cwd: mono });
  assert.equal(both.code, 1);
  assert.match(both.stderr, /mono is not a Strato project and holds 2 projects \(blog, shop\): run strato check in each of them/);
  assert.doesNotMatch(both.stderr + both.stdout, /duplicate-endpoint-name/);
  // A project made inside another is said to be part of it.
  const nested = await runCli(['init', 'inner'], { cwd: path.join(mono, 'shop') });
  assert.equal(nested.code, 0);
  assert.match(nested.stderr, /note: inner is inside the project at \S*shop, whose check, build and deploy read it too/);
});

test('warnings do not stop the build and are printed with file:line', async () => {
  const dir = await initProject('warn');
  writeFileSync(
    path.join(dir, 'cpu_worker.py'),
    'import requests\nfrom strato import Endpoint\n\n@Endpoint(name="c", cpu="cpu3c-1-2")\ndef c():\n    return requests.__name__\n',
  );
  const r = await runCli(['build'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /cpu_worker\.py:1:1: warning: 'requests' is a third-party package/);
  assert.doesNotMatch(r.stderr, /pyproject\.toml/, "the template's empty list says nothing");
  // pyproject.toml's dependencies are not what the build installs: said, with where they go.
  const pyproject = path.join(dir, 'pyproject.toml');
  writeFileSync(pyproject, readFileSync(pyproject, 'utf8').replace('dependencies = []', 'dependencies = [\n  "requests>=2",  # HTTP\n  "pillow",\n]'));
  const listed = await runCli(['build'], { cwd: dir });
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    listed.stderr,
    /pyproject\.toml:\d+:1: warning: pyproject\.toml lists dependencies \(requests>=2, pillow\), which the build does not install: put those every endpoint needs in requirements\.txt/,
  );
  // check runs the same rules as the build: a project's CI sees the warning too.
  const checked = await runCli(['check'], { cwd: dir });
  assert.equal(checked.code, 0, checked.stderr);
  assert.match(checked.stdout, /pyproject\.toml:\d+:1: warning: pyproject\.toml lists dependencies \(requests>=2, pillow\)/);
});

test('linked files and folders are packaged as what they point to, a link back to a parent is not followed, and a worker file too large to read is named', async () => {
  const dir = await initProject('linked');
  const shared = path.join(tmp, 'shared-libs');
  mkdirSync(path.join(shared, 'common'), { recursive: true });
  writeFileSync(path.join(shared, 'helpers.py'), 'def twice(v):\n    return v * 2\n');
  writeFileSync(path.join(shared, 'common', 'units.py'), 'KB = 1024\n');
  symlinkSync(path.join(shared, 'helpers.py'), path.join(dir, 'helpers.py'));
  symlinkSync(path.join(shared, 'common'), path.join(dir, 'common'));
  symlinkSync(dir, path.join(shared, 'common', 'back')); // a loop: common/back is the project itself
  symlinkSync(path.join(tmp, 'nowhere.py'), path.join(dir, 'broken.py'));
  // Over 2 MiB: packaged as a module, but not read for endpoints; the one it declares would be lost without a word.
  writeFileSync(
    path.join(dir, 'big.py'),
    `from strato import Endpoint\n\n@Endpoint(name="lost", cpu="cpu3c-1-2")\ndef lost():\n    return DATA\n\nDATA = "${'x'.repeat(2.5 * 1024 * 1024)}"\n`,
  );
  const r = await runCli(['build'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const entries = listTar(path.join(dir, '.strato/artifact.tar.gz'));
  for (const f of ['helpers.py', 'common/units.py', 'big.py']) assert.ok(entries.includes(f), `${f} is packaged: ${entries.join(' ')}`);
  assert.ok(!entries.some((e) => e.startsWith('common/back')), entries.join(' '));
  assert.ok(!entries.includes('broken.py'));
  const out = execFileSync('tar', ['xzOf', path.join(dir, '.strato/artifact.tar.gz'), 'helpers.py'], { encoding: 'utf8' });
  assert.match(out, /def twice/, 'the file, not the link, is packaged');
  assert.match(
    r.stderr,
    /big\.py:1:1: warning: big\.py is not read for endpoints: it is 2\.5 MiB, over the 2 MiB a worker file may have\. Any @Endpoint in it is not deployed/,
  );
});

test('a package named only in a -r file is installed, and the summary counts it', async () => {
  const dir = await initProject('included');
  writeFileSync(path.join(dir, 'requirements.txt'), '-r requirements/base.txt\n');
  mkdirSync(path.join(dir, 'requirements'));
  writeFileSync(path.join(dir, 'requirements', 'base.txt'), 'tinyextra\n');
  const r = await runCli(['build'], { cwd: dir, env: pipEnv() });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /, 1 deps,/);
  assert.ok(listTar(path.join(dir, '.strato/artifact.tar.gz')).includes('deps/tinyextra/__init__.py'));
});
