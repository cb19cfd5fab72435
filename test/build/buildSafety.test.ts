// What a build must never do, whatever happens around it: package a secret reached through a symbolic link, or lose
// the last good artifact when two builds run at once or one is killed while it writes (the real CLI on real files).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, ensureBuilt, runCli } from '../helpers/cli';
import { buildProject } from '../../engine/src/build';

let tmp: string;
before(() => {
  ensureBuilt();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-build-safety-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

const WORKER = 'from strato import Endpoint\n\n\n@Endpoint(name="e1", cpu="cpu3c-1-2")\ndef f(x: int = 0):\n    return x\n';

function project(name: string, files: Record<string, string | Buffer> = {}): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'requirements.txt'), '');
  writeFileSync(path.join(dir, 'worker.py'), WORKER);
  for (const [f, content] of Object.entries(files)) writeFileSync(path.join(dir, f), content);
  return dir;
}

const listTar = (file: string) => execFileSync('tar', ['tzf', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

test('a link is judged by where it leads: a key or a credentials folder behind an innocent name is left out, and named', async () => {
  const home = path.join(tmp, 'home');
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY');
  writeFileSync(path.join(home, 'server.pem'), 'CERT');
  writeFileSync(path.join(home, 'shared.py'), 'X = 1\n');
  const dir = project('links');
  symlinkSync(path.join(home, '.ssh', 'id_rsa'), path.join(dir, 'notsecret.txt'));
  symlinkSync(path.join(home, '.ssh'), path.join(dir, 'keys'));
  symlinkSync(path.join(home, 'server.pem'), path.join(dir, 'cert.txt'));
  symlinkSync(path.join(home, 'shared.py'), path.join(dir, 'shared.py'));
  const r = await runCli(['build'], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const entries = listTar(path.join(dir, '.strato', 'artifact.tar.gz'));
  assert.ok(entries.includes('shared.py'), 'a shared module linked in is packaged as before');
  for (const left of ['notsecret.txt', 'keys/id_rsa', 'keys/', 'cert.txt']) assert.ok(!entries.includes(left), `${left} was packaged`);
  assert.match(r.stdout, /notsecret\.txt/);
  assert.match(r.stdout, /keys\//);
  assert.match(r.stdout, /cert\.txt/);
});

test('two builds of one project at once: the second waits for the first, both succeed, the artifact is whole', async () => {
  const dir = project('twice', { 'blob.bin': randomBytes(3 * 1024 * 1024) });
  const [a, b] = await Promise.all([runCli(['build'], { cwd: dir }), runCli(['build'], { cwd: dir })]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  const entries = listTar(path.join(dir, '.strato', 'artifact.tar.gz'));
  assert.ok(entries.includes('blob.bin') && entries.includes('strato_manifest.json'), entries.join(' '));
  assert.ok(!existsSync(path.join(dir, '.strato', 'build.lock')), 'the lock is released');
  // Whether those two overlapped is the machine's to decide; a build that finds the lock held waits, saying so, and
  // goes on once its holder is gone.
  const holder = spawn('sleep', ['2'], { stdio: 'ignore' });
  writeFileSync(path.join(dir, '.strato', 'build.lock'), `${holder.pid}\n${realpathSync(path.join(dir, '.strato'))}\n`);
  const waited = await runCli(['build'], { cwd: dir });
  assert.equal(waited.code, 0, waited.stderr);
  assert.match(waited.stderr, new RegExp(`waiting for another build of this project to end \\(pid ${holder.pid}\\)`));
  assert.ok(!existsSync(path.join(dir, '.strato', 'build.lock')), 'the lock is released');
});

test('a build killed while it writes the artifact leaves the last good one as it was; the next build works', async () => {
  const dir = project('killed', { 'blob.bin': randomBytes(1024) });
  assert.equal((await runCli(['build'], { cwd: dir })).code, 0);
  const artifact = path.join(dir, '.strato', 'artifact.tar.gz');
  const good = digest(artifact);
  writeFileSync(path.join(dir, 'blob.bin'), randomBytes(60 * 1024 * 1024)); // incompressible: seconds to write
  const child = spawn(process.execPath, [CLI, 'build'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      if (/writing the artifact/.test(err)) setTimeout(resolve, 300);
    });
    child.on('exit', () => reject(new Error(`the build ended before it was killed: ${err}`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.on('close', r));
  assert.equal(digest(artifact), good, 'the last good artifact is untouched');
  const again = await runCli(['build'], { cwd: dir });
  assert.equal(again.code, 0, again.stderr);
  assert.ok(listTar(artifact).includes('blob.bin'));
  assert.ok(!existsSync(`${artifact}.partial`), 'no partial file is left by the next build');
});

test('a build that fails releases its lock: the next build in the same process (the dev server, the extension) runs at once', async () => {
  const dir = project('fails-then-builds', { 'requirements.txt': 'no-such-package-xyz\n' });
  const env = { PIP_NO_INDEX: '1', PIP_FIND_LINKS: path.join(tmp, 'no-wheels'), PIP_CONFIG_FILE: '/dev/null' };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    await assert.rejects(buildProject(dir), /no-such-package-xyz/);
    assert.ok(!existsSync(path.join(dir, '.strato', 'build.lock')), 'released');
    writeFileSync(path.join(dir, 'requirements.txt'), '');
    const steps: string[] = [];
    const built = await buildProject(dir, { onProgress: (s) => steps.push(s) });
    assert.ok(existsSync(built.artifactPath));
    assert.ok(!steps.some((s) => /waiting for another build/.test(s)), steps.join('\n'));
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
});
