// `strato dev` reloading on saves other than an edit of an endpoint's code: dependencies that do not install, and
// requirements unchanged (reused) or changed (installed again); a data file the build packages; folders made and
// removed at once in the project; --no-reload. The real dev server (bundled CLI), a real platform, real Python workers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startServing } from '../helpers/devServer';
import { buildWheel } from '../helpers/wheels';
import { call, project as makeProject, serve as startDevOn, useDevBed } from './devBed';

const bed = useDevBed();
const project = (name: string) => makeProject(bed, name);
const serve = (dir: string, args: string[] = []) => startDevOn(bed, dir, args);

test('folders made and removed at once in the project (a test run, a build) do not end the dev server; saves still reload', async () => {
  const dir = await project('churn');
  const dev = await serve(dir);
  for (let i = 0; i < 300; i++) {
    mkdirSync(path.join(dir, `bed.tmp${i}`, 'sub', 'deeper'), { recursive: true });
    rmSync(path.join(dir, `bed.tmp${i}`), { recursive: true, force: true });
  }
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(dev.child.exitCode, null, `the dev server is up:\n${dev.stderr()}`);
  const cpuFile = path.join(dir, 'cpu_worker.py');
  writeFileSync(cpuFile, readFileSync(cpuFile, 'utf8').replace('"count": len(numbers),', '"count": len(numbers),\n        "edited": True,'));
  assert.equal((await call(dev.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1] } })).body.output.edited, true);
  assert.equal(await dev.stop(), 0);
});

test('a save whose dependencies do not install: every route answers why, nothing says it reloaded, the next good save builds again', async () => {
  const dir = await project('pipfail');
  const emptyIndex = path.join(bed.tmp, 'no-wheels');
  mkdirSync(emptyIndex, { recursive: true });
  const dev = await startServing(['--host', '127.0.0.1', '--port', '0'], {
    cwd: dir,
    env: { ...bed.env, PIP_NO_INDEX: '1', PIP_FIND_LINKS: emptyIndex, PIP_CONFIG_FILE: '/dev/null' },
  });
  bed.running.push(dev);
  assert.equal((await call(dev.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1] } })).status, 200);
  const cpuFile = path.join(dir, 'cpu_worker.py');
  const original = readFileSync(cpuFile, 'utf8');
  writeFileSync(cpuFile, original.replace('workers=(0, 2)', 'workers=(0, 2), dependencies=["no-such-package-xyz"]'));
  await dev.waitFor(/reload failed/, 60_000, 'stderr');
  const broken = await call(dev.port, 'POST', '/gpu_worker/runsync', { input: {} });
  assert.equal(broken.status, 400, JSON.stringify(broken.body));
  // The project's error, not one of the file that was saved: no position to point at, a code of its own.
  assert.equal(broken.body.error, 'the project has an error; fix it and save');
  assert.match(broken.body.detail, /^error: the saved project did not build: dependency installation failed.* \[project-error\]$/s);
  assert.match(dev.stderr(), /reload failed: every route answers with the error until a save fixes it/);
  assert.match(dev.stderr(), /installing 1 dependency for Linux x86_64, Python [\d.]+ \(pip\)\.\.\./);
  assert.doesNotMatch(dev.stderr().slice(dev.stderr().indexOf('reload failed')), /reloaded in/, 'a failed reload is not reported as done');
  writeFileSync(cpuFile, original);
  await dev.waitFor(/reloaded in \d+ ms/, 60_000, 'stderr');
  assert.equal((await call(dev.port, 'POST', '/gpu_worker/runsync', { input: {} })).status, 200);
  await dev.stop();
});

test('a save that leaves the requirements as they were reuses the installed dependencies; a new requirement installs again', async () => {
  const dir = await project('reuse');
  const wheels = path.join(bed.tmp, 'reuse-wheels');
  buildWheel(bed.tmp, wheels, 'tinyreuse', '1.0.0');
  buildWheel(bed.tmp, wheels, 'tinyreuse2', '1.0.0');
  const cpuFile = path.join(dir, 'cpu_worker.py');
  const original = readFileSync(cpuFile, 'utf8');
  writeFileSync(cpuFile, original.replace('workers=(0, 2)', 'workers=(0, 2), dependencies=["tinyreuse"]'));
  const dev = await startServing(['--host', '127.0.0.1', '--port', '0'], {
    cwd: dir,
    env: { ...bed.env, PIP_NO_INDEX: '1', PIP_FIND_LINKS: wheels, PIP_CONFIG_FILE: '/dev/null' },
  });
  bed.running.push(dev);
  assert.match(dev.stderr(), /installing 1 dependency for Linux x86_64/);
  const gpuFile = path.join(dir, 'gpu_worker.py');
  const seen = dev.stderr().length;
  writeFileSync(gpuFile, `${readFileSync(gpuFile, 'utf8')}\n# an edit that changes no requirement\n`);
  await dev.waitFor(/reloaded in \d+ ms/, 60_000, 'stderr');
  const second = dev.stderr().slice(seen);
  assert.match(second, /dependencies unchanged: the 1 dependency for Linux x86_64, Python [\d.]+ installed before are reused/);
  assert.doesNotMatch(second, /installing/);
  assert.equal((await call(dev.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1, 3] } })).body.output.mean, 2);
  writeFileSync(cpuFile, original.replace('workers=(0, 2)', 'workers=(0, 2), dependencies=["tinyreuse", "tinyreuse2"]'));
  await dev.waitFor(/installing 2 dependencies/, 60_000, 'stderr');
  await dev.waitFor(/reloaded in \d+ ms[\s\S]*reloaded in \d+ ms/, 60_000, 'stderr');
  assert.equal(readdirSync(path.join(dir, '.strato', 'deps')).length, 1, 'one install is kept, not one per set of requirements');
  await dev.stop();
});

test('a saved data file is served on the next call, as a saved Python file is; --no-reload keeps the code it started with', async () => {
  const dir = await project('datafile');
  writeFileSync(path.join(dir, 'note.txt'), 'v1\n');
  writeFileSync(
    path.join(dir, 'note_worker.py'),
    'import pathlib\n\nfrom strato import Endpoint\n\n\n@Endpoint(name="note", cpu="cpu3c-1-2")\ndef note() -> dict:\n' +
      '    return {"note": (pathlib.Path(__file__).parent / "note.txt").read_text().strip()}\n',
  );
  const d = await serve(dir);
  assert.equal((await call(d.port, 'POST', '/note_worker/runsync', { input: {} })).body.output.note, 'v1');
  writeFileSync(path.join(dir, 'note.txt'), 'v2\n');
  assert.equal((await call(d.port, 'POST', '/note_worker/runsync', { input: {} })).body.output.note, 'v2');
  await d.stop();
  const fixed = await serve(dir, ['--no-reload']);
  writeFileSync(path.join(dir, 'note.txt'), 'v3\n');
  writeFileSync(path.join(dir, 'note_worker.py'), readFileSync(path.join(dir, 'note_worker.py'), 'utf8').replace('"note":', '"edited": True, "note":'));
  assert.deepEqual((await call(fixed.port, 'POST', '/note_worker/runsync', { input: {} })).body.output, { note: 'v2' });
  await fixed.stop();
});
