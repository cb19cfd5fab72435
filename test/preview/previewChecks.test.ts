// The preview's refusals and clean-up rules that need no Docker engine, tested with plain node: image names checked
// before anything runs, a socket the user may not open told apart from a missing engine, a killed preview's data dir,
// workers held back while the engine does not answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import { connectError, DockerEngine } from '../../engine/src/containers/engine';
import { ContainerLauncher } from '../../engine/src/preview/launcher';
import type { LaunchSpec } from '../../engine/src/platform/workers/launcher';
import type { Worker } from '../../engine/src/platform/workers/worker';
import { startPreview } from '../../engine/src/preview';
import { dataDirPrefix, removeDataDirs } from '../../engine/src/preview/cleanup';
import { UserError } from '../../engine/src/util/errors';

test('an image name that is none (flag, environment or .env) is refused in one sentence before the engine is asked', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'strato-preview-names-'));
  const saved = { cpu: process.env.STRATO_PREVIEW_CPU_IMAGE, gpu: process.env.STRATO_PREVIEW_GPU_IMAGE };
  delete process.env.STRATO_PREVIEW_CPU_IMAGE;
  delete process.env.STRATO_PREVIEW_GPU_IMAGE;
  // No engine answers here: a refusal that came after connecting would say so instead.
  const dockerHost = `unix://${path.join(root, 'no-engine.sock')}`;
  const refused = async (o: { cpuImage?: string }, message: RegExp) => {
    const e = await startPreview(root, { ...o, dockerHost }).then(
      () => assert.fail('the preview started'),
      (err: Error) => err,
    );
    assert.ok(e instanceof UserError, `${e.name}: ${e.message}`);
    assert.match(e.message, message);
  };
  try {
    await refused({ cpuImage: 'MyImage:1' }, /^--cpu-image "MyImage:1" is not an image name: use lowercase repository names/);
    writeFileSync(path.join(root, '.env'), 'STRATO_PREVIEW_GPU_IMAGE=Team/GPU\n');
    await refused({}, /^STRATO_PREVIEW_GPU_IMAGE in \.env "Team\/GPU" is not an image name/);
    process.env.STRATO_PREVIEW_CPU_IMAGE = 'Bad Name';
    await refused({}, /^STRATO_PREVIEW_CPU_IMAGE in the environment "Bad Name" is not an image name/);
    // Valid names (a registry with a port, a digest) pass the check: what answers next is the missing engine.
    delete process.env.STRATO_PREVIEW_CPU_IMAGE;
    writeFileSync(path.join(root, '.env'), `STRATO_PREVIEW_GPU_IMAGE=registry.local:5000/team/gpu@sha256:${'a'.repeat(64)}\n`);
    await refused({ cpuImage: 'strato-base-cpu:py3.11' }, /^no Docker engine answers on \S+no-engine\.sock \(ENOENT\)/);
  } finally {
    for (const [k, v] of [
      ['STRATO_PREVIEW_CPU_IMAGE', saved.cpu],
      ['STRATO_PREVIEW_GPU_IMAGE', saved.gpu],
    ] as const)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    rmSync(root, { recursive: true, force: true });
  }
});

test('a Docker socket this user may not open is reported as permission denied with the fix, not as a missing engine', () => {
  const denied = Object.assign(new Error('connect EACCES /var/run/docker.sock'), { code: 'EACCES' });
  const e = connectError('/var/run/docker.sock', denied);
  assert.ok(e instanceof UserError);
  assert.match(e.message, /^permission denied on the Docker socket \/var\/run\/docker\.sock \(EACCES\): add your user to the docker group/);
  assert.match(e.message, /DOCKER_HOST=unix:\/\/\//);
  assert.doesNotMatch(e.message, /no Docker engine answers/);
  const missing = connectError('/x.sock', Object.assign(new Error('connect ENOENT /x.sock'), { code: 'ENOENT' }));
  assert.match(missing.message, /^no Docker engine answers on \/x\.sock \(ENOENT\): start one/);
});

test("the data dirs a killed preview left are found by the project's key and deleted; other projects' are kept", () => {
  const mine = [`${dataDirPrefix('aaaaaaaaaaaa')}x1`, `${dataDirPrefix('aaaaaaaaaaaa')}x2`];
  const other = `${dataDirPrefix('bbbbbbbbbbbb')}x1`;
  for (const d of [...mine, other]) {
    mkdirSync(path.join(d, 'builds'), { recursive: true });
    writeFileSync(path.join(d, 'builds', 'artifact'), 'x');
  }
  try {
    removeDataDirs('aaaaaaaaaaaa', mine[1]);
    assert.deepEqual(
      [...mine, other].map((d) => existsSync(d)),
      [false, true, true],
    );
  } finally {
    for (const d of [...mine, other]) rmSync(d, { recursive: true, force: true });
  }
});

test("an engine that stops answering holds workers back (they wait, their endpoints' jobs do not fail) until it answers again", async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'strato-preview-gone-'));
  const socket = path.join(root, 'docker.sock');
  const lines: string[] = [];
  const launcher = new ContainerLauncher({
    engine: new DockerEngine(`unix://${socket}`),
    network: () => ({ name: 'n', gateway: '10.0.0.1', platformPort: 1 }),
    images: new Map([['ep', 'img']]),
    gpus: () => false,
    labels: {},
    prefix: 'p',
    secrets: {},
    log: (l) => lines.push(l),
  });
  const server = http.createServer((_req, res) => res.end('OK'));
  try {
    assert.equal(launcher.unavailable(), null);
    const worker = { id: 'w-abcdef', loadBalanced: false } as unknown as Worker;
    const spec = { endpoint: { name: 'ep', config: { handlerFile: 'handler_ep.py' } }, root, env: {}, volumes: [], gpuCount: 0 } as unknown as LaunchSpec;
    const proc = launcher.launch(worker, spec);
    let stderr = '';
    proc.stderr!.on('data', (d) => (stderr += d));
    const code = await new Promise((r) => proc.once('exit', r));
    assert.equal(code, 125);
    assert.match(stderr, /the Docker engine does not answer on .*docker\.sock \(ENOENT\): start it again/);
    assert.match(launcher.unavailable() ?? '', /the Docker engine does not answer/, 'no worker starts meanwhile');
    await new Promise<void>((r) => server.listen(socket, r));
    for (let i = 0; i < 50 && launcher.unavailable() !== null; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(launcher.unavailable(), null, 'the engine answers again: workers start');
    assert.deepEqual(
      lines.map((l) => l.replace(socket, 'SOCKET')),
      [
        'strato preview: the Docker engine stopped answering on SOCKET (ENOENT): workers start again once it answers',
        'strato preview: the Docker engine answers again on SOCKET: workers start again',
      ],
    );
  } finally {
    server.close();
    rmSync(root, { recursive: true, force: true });
  }
});
