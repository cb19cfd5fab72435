// `strato init`: the template files, `.` for the current directory, conflicts (asked, refused without a
// terminal, --force), and a template that passes the analysis with no diagnostic at all.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';
import { loadProject } from '../../engine/src/project';

const FILES = ['lb_worker.py', 'gpu_worker.py', 'cpu_worker.py', '.env.example', '.gitignore', 'pyproject.toml', 'requirements.txt', 'README.md'];
let tmp: string;
before(() => (tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-init-'))));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('init NAME creates every template file, and the template is valid', async () => {
  const r = await runCli(['init', 'proj'], { cwd: tmp });
  assert.equal(r.code, 0, r.stderr);
  for (const f of FILES) assert.ok(existsSync(path.join(tmp, 'proj', f)), f);
  assert.match(readFileSync(path.join(tmp, 'proj', 'lb_worker.py'), 'utf8'), /@api\.post\("\/process"\)[\s\S]*@api\.get\("\/health"\)/);
  const model = await loadProject(path.join(tmp, 'proj'));
  assert.deepEqual(model.diagnostics, []);
  assert.deepEqual(model.endpoints.map((e) => `${e.name}:${e.kind}`).sort(), ['cpu-stats:QUEUE', 'gpu-hello:QUEUE', 'lb-api:LOAD_BALANCED']);
  assert.ok(
    model.endpoints.every((e) => e.functions.every((f) => f.summary)),
    'every template function has a docstring',
  );
});

test('init . writes into the current directory', async () => {
  const dir = path.join(tmp, 'here');
  mkdirSync(dir);
  const r = await runCli(['init', '.'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(path.join(dir, 'gpu_worker.py')));
  assert.match(readFileSync(path.join(dir, 'pyproject.toml'), 'utf8'), /name = "here"/);
});

test('conflicts are listed and, with no terminal to ask, nothing is overwritten and the exit status is non-zero', async () => {
  const dir = path.join(tmp, 'conflict');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'gpu_worker.py'), 'MINE = 1\n');
  const r = await runCli(['init', '.'], { cwd: dir });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /These files exist and would be overwritten:\n {2}gpu_worker\.py/);
  assert.match(r.stderr, /--force/);
  assert.equal(readFileSync(path.join(dir, 'gpu_worker.py'), 'utf8'), 'MINE = 1\n');
  assert.ok(!existsSync(path.join(dir, 'cpu_worker.py')), 'nothing is written when refused');
  const f = await runCli(['init', '.', '-f'], { cwd: dir });
  assert.equal(f.code, 0, f.stderr);
  assert.match(readFileSync(path.join(dir, 'gpu_worker.py'), 'utf8'), /@Endpoint/);
});

test('init without a name, or onto a file, is a clear error', async () => {
  const none = await runCli(['init'], { cwd: tmp });
  assert.notEqual(none.code, 0);
  assert.match(none.stderr, /missing required argument 'PROJECT_NAME'/);
  writeFileSync(path.join(tmp, 'afile'), 'x');
  const file = await runCli(['init', 'afile'], { cwd: tmp });
  assert.equal(file.code, 1);
  assert.match(file.stderr, /afile exists and is not a directory/);
  const bad = await runCli(['init', 'bad name!'], { cwd: tmp });
  assert.equal(bad.code, 1);
  assert.match(
    bad.stderr,
    /"bad name!" cannot be a project name \(deploy names the app after it\): use 1-63 letters, digits, '-', '_' or '\.', starting with a letter or digit, e\.g\. strato init bad-name\./,
  );
  assert.ok(!existsSync(path.join(tmp, 'bad name!')), 'nothing was written');
  // Accented letters keep their letter in the suggestion ("ünï" was suggested as "n").
  const accented = await runCli(['init', 'ünï modèle'], { cwd: tmp });
  assert.match(accented.stderr, /e\.g\. strato init uni-modele\./);
});
