// `strato deploy --preview` end to end on a real Docker engine (a dockerd of the test's own): the base image built
// by `strato preview image`, every endpoint called through the platform in front, a cross-endpoint call, /stream,
// .env secrets, a second preview replacing the first, Ctrl+C leaving nothing behind; and the error cases.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, ensureBuilt, runCli } from '../helpers/cli';
import { dockerdMissing, startDockerd, type TestDockerd } from '../helpers/dockerd';
import { TEMPLATE_DIR } from '../helpers/platform';
import { createContainer, createNetwork, listContainers, listNetworks, removeContainer, startContainer } from '../../engine/src/containers';
import { previewKey } from '../../engine/src/preview';
import { dataDirPrefix, removeLeftovers } from '../../engine/src/preview/cleanup';

const skip = dockerdMissing();
let d: TestDockerd;
let tmp: string;
/** The CPU base image `strato preview image` made. */
let cpuImage: string;
let env: NodeJS.ProcessEnv;
/** Every preview started, so that a failed test leaves none running. */
const children: ChildProcess[] = [];

interface Preview {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

/** Starts `strato deploy --preview` and waits until its output shows `ready` (by default: it runs) or it exits. */
async function startPreview(cwd: string, args: string[] = [], ready = (out: string) => out.includes('Preview running.')): Promise<Preview> {
  ensureBuilt();
  const child = spawn(process.execPath, [CLI, 'deploy', '--preview', ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (err += b));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const deadline = Date.now() + 90_000;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!ready(out) && !gone) {
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the preview did not start:\n${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, out: () => out, err: () => err, exited };
}

async function post(url: string, key: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

function urls(out: string): { key: string; url: (name: string) => string } {
  const key = /export STRATO_API_KEY=(\S+)/.exec(out)![1];
  return {
    key,
    url: (name) => {
      const m = new RegExp(`^  ${name}  \\[[^\\]]+\\]  (\\S+)$`, 'm').exec(out);
      assert.ok(m, `${name} is listed:\n${out}`);
      return m[1].replace(/\/runsync$/, '');
    },
  };
}

before(async () => {
  if (skip) return;
  d = await startDockerd();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-preview-test-'));
  env = { DOCKER_HOST: d.host, STRATO_PGLITE_TEMPLATE: TEMPLATE_DIR, STRATO_API_KEY: '', STRATO_API_URL: '' };
  const img = await runCli(['preview', 'image'], { cwd: tmp, env });
  assert.equal(img.code, 0, img.stderr);
  const made = /✓ strato\/worker-cpu:py3\.\d+, strato\/worker-gpu:py3\.\d+ from \S+python3\S* \(Python 3\.\d+\): \d+ files, (\d+) MB/.exec(img.stdout);
  assert.ok(made, img.stdout);
  cpuImage = /strato\/worker-cpu:py3\.\d+/.exec(img.stdout)![0];
  // The standard library only: the packages installed into this Python (site-packages) stay out.
  assert.ok(Number(made[1]) < 150, img.stdout);
});

after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await d?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test(
  'preview of a project: timed steps, every endpoint answers from its container, a cross-endpoint call, /stream, .env secrets; a second preview ' +
    'replaces the first; Ctrl+C leaves nothing',
  { skip: skip ?? false },
  async () => {
    assert.equal((await runCli(['init', 'shop'], { cwd: tmp })).code, 0);
    const dir = path.join(tmp, 'shop');
    writeFileSync(
      path.join(dir, 'preview_worker.py'),
      `import os
import socket

from strato import Endpoint, NetworkVolume


@Endpoint(name="tools", cpu="cpu3c-1-2", system_dependencies=["bsdutils"], volume=NetworkVolume(name="cache", size=10))
def tools(text: str) -> dict:
    """Runs a program of a Debian package (not in the base image) and keeps a file on the volume."""
    import subprocess

    folder = os.environ["STRATO_VOLUME_PATH"]
    with open(os.path.join(folder, "note.txt"), "a") as f:
        f.write(text)
    version = subprocess.run(["/usr/bin/script", "--version"], capture_output=True, text=True).stdout.strip()
    with open(os.path.join(folder, "note.txt")) as f:
        return {"folder": folder, "note": f.read(), "script": version}


@Endpoint(name="caller", cpu="cpu3c-1-2")
def caller(text: str) -> dict:
    """Calls the load-balanced lb-api endpoint from this container."""
    from lb_worker import process

    import ssl

    import importlib.util

    cas = ssl.create_default_context().cert_store_stats()["x509_ca"]  # what HTTPS from a worker can verify
    host_package = importlib.util.find_spec("pip") is not None  # installed on this machine, not declared by the project
    return {"host": socket.gethostname(), "secret": os.environ.get("PREVIEW_SECRET"), "result": process(text, uppercase=True), "cas": cas,
            "host_package": host_package}


@Endpoint(name="ticks", cpu="cpu3c-1-2")
def ticks(n: int):
    """Streams n chunks."""
    import time

    for i in range(n):
        time.sleep(0.1)
        yield {"i": i}
`,
    );
    writeFileSync(path.join(dir, '.env'), 'PREVIEW_SECRET=s3cret\n');
    const first = await startPreview(dir);
    const out = first.out();
    assert.deepEqual(
      out
        .split('\n')
        .filter((l) => l.startsWith('✓'))
        .map((l) => l.split(/\s+/)[1]),
      ['build', 'images', 'network', 'containers', 'ready'],
      out + first.err(),
    );
    assert.match(out, /^ {2}gpu-hello {2}\[strato\/worker-gpu:py3\.\d+\] {2}http:\/\/127\.0\.0\.1:\d+\/v2\/\S+\/runsync$/m);
    assert.match(out, /^ {2}cpu-stats {2}\[strato\/worker-cpu:py3\.\d+\]/m);
    assert.match(
      out,
      /Load-balanced endpoints\n {2}lb-api .*\n {4}POST +\/process\n {4}GET +\/health\n {2}sample: curl -X POST http:\/\/127\.0\.0\.1:\d+\/lb\/\S+\/process/,
    );
    assert.match(out, /no NVIDIA runtime: GPU endpoints run on the CPU/);

    const label = `strato.preview=${previewKey(dir)}`;
    const running = await listContainers(d.engine, label);
    assert.equal(running.length, 6, 'one container per endpoint');
    assert.ok(running.every((c) => c.State === 'running'));
    assert.equal((await listNetworks(d.engine, label)).length, 1);

    const { key, url } = urls(out);
    const stats = await post(`${url('cpu-stats')}/runsync`, key, { input: { numbers: [1, 2, 3] } });
    assert.deepEqual([stats.status, stats.json.status, stats.json.output.mean], [200, 'COMPLETED', 2]);
    const hello = await post(`${url('gpu-hello')}/runsync`, key, { input: { prompt: 'hi', repeat: 2 } });
    assert.equal(hello.json.status, 'COMPLETED', JSON.stringify(hello.json));
    const lb = await post(`${url('lb-api')}/process`, key, { text: 'Hello' });
    assert.deepEqual(lb.json, { text: 'Hello', length: 5 });

    // system_dependencies are in the endpoint's image; its volume is mounted read-write at /strato-volume.
    assert.match(out, /^ {2}tools {2}\[strato\/worker-cpu:py3\.\d+-sys-[0-9a-f]{12}\]/m);
    const tools = await post(`${url('tools')}/runsync`, key, { input: { text: 'kept' } });
    assert.equal(tools.json.status, 'COMPLETED', JSON.stringify(tools.json));
    assert.deepEqual([tools.json.output.folder, tools.json.output.note], ['/strato-volume', 'kept']);
    assert.match(tools.json.output.script, /^script from util-linux/);

    const called = await post(`${url('caller')}/runsync`, key, { input: { text: 'abc' } });
    assert.equal(called.json.status, 'COMPLETED', JSON.stringify(called.json));
    assert.deepEqual(called.json.output.result, { text: 'ABC', length: 3 });
    assert.equal(called.json.output.secret, 's3cret', '.env reaches the container as environment');
    assert.ok(called.json.output.cas > 0, "the image's CA bundle is OpenSSL's: HTTPS from a worker verifies certificates");
    assert.equal(called.json.output.host_package, false, "a package of the host's Python is not in the image: a missing dependency shows");
    assert.ok(
      running.some((c) => c.Id.startsWith(called.json.output.host)),
      'the handler ran inside a preview container',
    );

    const job = await post(`${url('ticks')}/run`, key, { input: { n: 4 } });
    const chunks: unknown[] = [];
    for (let i = 0; i < 100; i++) {
      const got = (await (await fetch(`${url('ticks')}/stream/${job.json.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as Array<{
        output: unknown;
      }>;
      chunks.push(...got.map((c) => c.output));
      if (chunks.length >= 4) break;
    }
    assert.deepEqual(
      chunks,
      [0, 1, 2, 3].map((i) => ({ i })),
    );

    // A second preview of the same project stops the first and takes over.
    const second = await startPreview(dir);
    assert.equal(await first.exited, 0, first.err());
    assert.match(second.out(), /Preview running\./, second.err());
    const now = await listContainers(d.engine, label);
    assert.equal(now.length, 6);
    assert.ok(
      now.every((c) => !running.some((o) => o.Id === c.Id)),
      "the first preview's containers are gone",
    );
    const again = await post(`${urls(second.out()).url('cpu-stats')}/runsync`, urls(second.out()).key, { input: { numbers: [4] } });
    assert.equal(again.json.output.max, 4);

    second.child.kill('SIGINT');
    assert.equal(await second.exited, 0, second.err());
    assert.deepEqual(await listContainers(d.engine, label), []);
    assert.deepEqual(await listNetworks(d.engine, label), []);
    assert.equal(existsSync(path.join(dir, '.strato', 'preview.json')), false);
    assert.deepEqual(
      readdirSync(os.tmpdir()).filter((f) => f.startsWith('strato-preview-') && !f.startsWith('strato-preview-test-') && f.includes(String(second.child.pid))),
      [],
    );
  },
);

test('an endpoint whose handler fails to import is reported by name and the others stay up', { skip: skip ?? false }, async () => {
  const dir = path.join(tmp, 'half');
  assert.equal((await runCli(['init', 'half'], { cwd: tmp })).code, 0);
  for (const f of ['gpu_worker.py', 'lb_worker.py']) rmSync(path.join(dir, f));
  writeFileSync(
    path.join(dir, 'broken_worker.py'),
    `import not_a_module_anywhere\nfrom strato import Endpoint\n\n\n@Endpoint(name="broken", cpu="cpu3c-1-2")\ndef broken(x: int) -> int:\n    ` +
      `"""Never imports."""\n    return x\n`,
  );
  const p = await startPreview(dir);
  assert.match(p.err(), /error: broken: .*No module named 'not_a_module_anywhere'/);
  // `strato logs broken` alone would read the background platform: the line says how to read this preview's.
  assert.match(p.err(), /error: broken: .*\(its log: STRATO_API_URL=http:\/\/127\.0\.0\.1:\d+ STRATO_API_KEY=\S+ strato logs broken\)/);
  const { key, url } = urls(p.out());
  const ok = await post(`${url('cpu-stats')}/runsync`, key, { input: { numbers: [5] } });
  assert.equal(ok.json.output.max, 5);
  p.child.kill('SIGTERM');
  assert.equal(await p.exited, 0);
  assert.deepEqual(await listContainers(d.engine, `strato.preview=${previewKey(dir)}`), []);
});

test('errors: no engine, a missing image, a build error; each in one sentence, nothing left behind', { skip: skip ?? false }, async () => {
  const dir = path.join(tmp, 'errs');
  assert.equal((await runCli(['init', 'errs'], { cwd: tmp })).code, 0);
  const noEngine = await runCli(['deploy', '--preview'], { cwd: dir, env: { ...env, DOCKER_HOST: `unix://${path.join(tmp, 'nothing.sock')}` } });
  assert.equal(noEngine.code, 1);
  assert.match(
    noEngine.stderr,
    /^error: no Docker engine answers on \S+nothing\.sock \(ENOENT\): start one .* set DOCKER_HOST=unix:\/\/\/path\/to\/docker\.sock; strato deploy to the embedded platform needs no Docker\.\n$/,
  );

  const missing = await runCli(['deploy', '--preview', '--cpu-image', '127.0.0.1:9/nowhere/python:1'], { cwd: dir, env });
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    /image 127\.0\.0\.1:9\/nowhere\/python:1 \(for cpu-stats, lb-api\) is not in the Docker engine and cannot be pulled \(.*\): run strato preview image --tag 127\.0\.0\.1:9\/nowhere\/python:1 to build it/,
  );
  assert.doesNotMatch(missing.stderr, /\n\s+at /, 'no stack trace');

  writeFileSync(
    path.join(dir, 'bad_worker.py'),
    `from strato import Endpoint\n\n\n@Endpoint(name="bad", cpu="cpu3c-1-2", workers=(5, 1))\ndef bad(x: int) -> int:\n    """Bad bounds."""\n    return x\n`,
  );
  const refused = await runCli(['deploy', '--preview'], { cwd: dir, env });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /bad_worker\.py:4:\d+/);
  assert.match(refused.stderr, /build refused/);
  const label = `strato.preview=${previewKey(dir)}`;
  assert.deepEqual(await listContainers(d.engine, label), []);
  assert.deepEqual(await listNetworks(d.engine, label), []);
});

test(
  'a second preview started while the first is still starting replaces it (nothing of the second is removed); Ctrl+C after the ' +
    'containers step, with a worker that crash-loops, removes the containers, the network and the data dirs',
  { skip: skip ?? false },
  async () => {
    const dir = path.join(tmp, 'early');
    assert.equal((await runCli(['init', 'early'], { cwd: tmp })).code, 0);
    for (const f of ['gpu_worker.py', 'lb_worker.py']) rmSync(path.join(dir, f));
    writeFileSync(
      path.join(dir, 'broken_worker.py'),
      `import not_a_module_anywhere\nfrom strato import Endpoint\n\n\n@Endpoint(name="broken", cpu="cpu3c-1-2")\ndef broken(x: int) -> int:\n    ` +
        `"""Never imports."""\n    return x\n`,
    );
    const key = previewKey(dir);
    const label = `strato.preview=${key}`;
    // What a preview killed with SIGKILL leaves: its data dir (database, builds, volumes); the next preview deletes it.
    const killed = `${dataDirPrefix(key)}killed`;
    mkdirSync(path.join(killed, 'builds'), { recursive: true });
    const dataDirs = () => readdirSync(os.tmpdir()).filter((f) => path.join(os.tmpdir(), f).startsWith(dataDirPrefix(key)));

    // The first holds the project's preview from its start (before its build).
    const first = await startPreview(dir, [], (o) => existsSync(path.join(dir, '.strato', 'preview.lock')) || /✓ build/.test(o));
    const second = await startPreview(dir, [], (o) => /✓ containers/.test(o));
    assert.equal(await first.exited, 130, first.out() + first.err());
    assert.match(first.err(), /the preview was stopped before it was up; its containers and network are removed\./);
    assert.doesNotMatch(second.err(), /already exists|report this as a bug|could not remove/, second.err());
    assert.equal(existsSync(killed), false, "the killed preview's data dir is deleted");
    // Its workers start after the step (the broken one crash-loops): Ctrl+C comes while a container uses the network.
    for (let i = 0; i < 150 && !(await listContainers(d.engine, label)).length; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok((await listContainers(d.engine, label)).length > 0, `the second preview's containers are there: ${second.out()}\n${second.err()}`);
    assert.equal((await listNetworks(d.engine, label)).length, 1);

    second.child.kill('SIGINT');
    const code = await second.exited;
    assert.ok(code === 130 || code === 0, `exit ${code}\n${second.out()}\n${second.err()}`);
    if (code === 130) assert.match(second.err(), /the preview was stopped before it was up; its containers and network are removed\./);
    assert.doesNotMatch(second.err(), /could not remove|cannot write worker log/, second.err());
    assert.deepEqual(await listContainers(d.engine, label), []);
    assert.deepEqual(await listNetworks(d.engine, label), []);
    assert.deepEqual(dataDirs(), []);
    assert.equal(existsSync(path.join(dir, '.strato', 'preview.lock')), false);
  },
);

test('Ctrl+C while it waits for a worker whose import hangs ends the wait at once and removes everything', { skip: skip ?? false }, async () => {
  const dir = path.join(tmp, 'hangs');
  assert.equal((await runCli(['init', 'hangs'], { cwd: tmp })).code, 0);
  for (const f of ['gpu_worker.py', 'lb_worker.py']) rmSync(path.join(dir, f));
  writeFileSync(
    path.join(dir, 'slow_worker.py'),
    `import time\ntime.sleep(600)  # a model download that hangs\nfrom strato import Endpoint\n\n\n@Endpoint(name="slow", cpu="cpu3c-1-2")\n` +
      `def slow(x: int) -> int:\n    """Never ready."""\n    return x\n`,
  );
  const { child, out, err, exited } = await startPreview(dir, [], (o) => /✓ containers/.test(o));
  const t = Date.now();
  child.kill('SIGINT');
  const code = await exited;
  assert.ok(Date.now() - t < 20_000, `the stop took ${Date.now() - t} ms (the ready wait is 60 s)`);
  assert.equal(code, 130, `${out()}\n${err()}`);
  const label = `strato.preview=${previewKey(dir)}`;
  assert.deepEqual(await listContainers(d.engine, label), []);
  assert.deepEqual(await listNetworks(d.engine, label), []);
});

test('the leftovers of a preview wait for a container removal already in progress before the network goes', { skip: skip ?? false }, async () => {
  const label = 'strato.preview=removal-in-progress';
  const labels = { 'strato.preview': 'removal-in-progress' };
  const net = await createNetwork(d.engine, 'strato-preview-removal-test', labels);
  const id = await createContainer(d.engine, {
    name: 'strato-removal-test',
    image: cpuImage,
    cmd: ['python3', '-c', 'import time; time.sleep(600)'],
    env: {},
    labels,
    network: net.name,
  });
  await startContainer(d.engine, id);
  // What the platform's close does to a worker it kills: the removal starts and nobody waits for it.
  const inProgress = removeContainer(d.engine, id);
  const lines: string[] = [];
  await removeLeftovers(d.engine, label, (l) => lines.push(l));
  await inProgress;
  assert.deepEqual(await listNetworks(d.engine, label), [], lines.join('\n'));
  assert.deepEqual(await listContainers(d.engine, label), []);
});
