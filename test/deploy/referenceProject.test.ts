// A project written in the reference product's style, every Endpoint parameter used, only the import line
// changed: it builds (the manifest records everything), deploys on the real embedded platform and runs end to
// end, with its volume shared by a queue-based and a load-balanced endpoint and a script calling by id.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, runCli } from '../helpers/cli';
import { call, PYTHON, startTestPlatform, type TestPlatform } from '../helpers/platform';
import { runPython } from '../helpers/python';
import type { Manifest } from '../../engine/src/protocol/manifest';

let p: TestPlatform;
let dir: string;
let env: NodeJS.ProcessEnv;

before(async () => {
  process.env.STRATO_GPUS = ''; // the GPU endpoint runs here on the CPU, whatever nvidia-smi says
  p = await startTestPlatform();
  dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'strato-reference-')), 'reference-style');
  fs.cpSync(path.join(REPO, 'test', 'fixtures', 'reference-style'), dir, { recursive: true });
  env = { STRATO_API_URL: p.url, STRATO_API_KEY: p.key };
});
after(async () => {
  await p?.close();
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
});

test('the worker file imports in real Python with every parameter', () => {
  const r = spawnSync(PYTHON, ['-c', 'import workers.reference_style as m; print(m.api.config()["datacenter"], m.embed.endpoint.config()["volume"])'], {
    cwd: dir,
    env: { ...process.env, PYTHONPATH: path.join(REPO, 'engine', 'python') },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "['EU-RO-1'] [{'name': 'models', 'size': 20, 'datacenter': 'EU-RO-1'}]");
});

test('it builds, deploys and runs: the volume is shared, the manifest records every parameter, a script calls by id', async () => {
  const built = await runCli(['build'], { cwd: dir, env });
  assert.equal(built.code, 0, built.stderr + built.stdout);
  const m = JSON.parse(fs.readFileSync(path.join(dir, '.strato', 'strato_manifest.json'), 'utf8')) as Manifest;
  const embed = m.resources.embed;
  assert.deepEqual(
    {
      gpuIds: embed.gpuIds,
      datacenters: embed.datacenters,
      volumes: embed.volumes,
      scaler: [embed.scaler_type, embed.scaler_value],
      cuda: embed.min_cuda_version,
      sys: embed.system_dependencies,
      template: embed.template?.imageName,
      flags: [embed.flashboot, embed.accelerate_downloads],
      env: embed.env,
      timeout: embed.execution_timeout_ms,
    },
    {
      gpuIds: 'ADA_24,NVIDIA H200',
      datacenters: ['EU-RO-1'],
      volumes: [{ name: 'models', size: 20, datacenter: 'EU-RO-1' }],
      scaler: ['QUEUE_DELAY', 4],
      cuda: '12.4',
      sys: ['bash'],
      template: 'runpod/base:0.6',
      flags: [true, true],
      env: { FROM_TEMPLATE: 'yes', MODEL: 'small' },
      timeout: undefined,
    },
  );
  assert.deepEqual([m.resources.api.scaler_type, m.resources.api.scaler_value, m.resources.api.datacenters], ['REQUEST_COUNT', 2, ['EU-RO-1']]);

  const deployed = await runCli(['deploy'], { cwd: dir, env });
  assert.equal(deployed.code, 0, deployed.stderr + deployed.stdout);
  const got = await runCli(['env', 'get', 'production', '--json'], { cwd: dir, env });
  const s = JSON.parse(got.stdout) as { endpoints: Array<{ name: string; id: string; url: string }>; volumes: Array<{ name: string; endpoints: string[] }> };
  assert.deepEqual(
    s.volumes.map((v) => [v.name, v.endpoints]),
    [['models', ['api', 'embed']]],
  );
  const byName = Object.fromEntries(s.endpoints.map((e) => [e.name, e]));

  const r = await call('POST', `${byName.embed.url}/runsync?wait=60000`, { key: p.key, body: { input: { text: 'hello volume' } } });
  assert.deepEqual((r.json as { output: unknown }).output, { length: 12, model: 'small', template: 'yes' }, r.text);
  const last = await call('GET', `${byName.api.url}/last`, { key: p.key, timeoutMs: 60_000 });
  assert.deepEqual(last.json, { last: 'hello volume' }, 'the load-balanced endpoint reads what the queue-based one wrote');

  // Asynchronously: the platform answers from this process meanwhile.
  const client = await runPython([path.join('workers', 'client.py'), byName.embed.id, 'by id'], { cwd: dir, env, timeoutMs: 120_000 });
  assert.equal(client.code, 0, client.stderr);
  assert.deepEqual(JSON.parse(client.stdout), { length: 5, model: 'small', template: 'yes' });

  const vols = await runCli(['volume', 'list', '--json'], { cwd: dir, env });
  assert.equal(vols.code, 0, vols.stderr);
  assert.deepEqual(
    (JSON.parse(vols.stdout) as Array<{ name: string; datacenter: string; sizeGb: number; usedBytes: number }>).map((v) => [
      v.name,
      v.datacenter,
      v.sizeGb,
      v.usedBytes > 0,
    ]),
    [['models', 'EU-RO-1', 20, true]],
    'the usage of what the job just wrote, measured for the listing (it said 0 B until a later listing)',
  );
  // Without --yes and without a terminal: a volume that is there asks for --yes; a name that is not gets the
  // platform's answer at once rather than a confirmation about nothing.
  const ask = await runCli(['volume', 'delete', 'models'], { cwd: dir, env });
  assert.match(ask.stderr, /deleting volume models removes every file on it: pass --yes/);
  const missing = await runCli(['volume', 'delete', 'nope'], { cwd: dir, env });
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /app \S+ has no volume named "nope"/);
  const refused = await runCli(['volume', 'delete', 'models', '--yes'], { cwd: dir, env });
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /volume "models" is mounted by api, embed: undeploy those endpoints/);
  assert.doesNotMatch(refused.stderr, /\n\s+at /, 'a sentence, not a stack trace');
  assert.equal((await runCli(['undeploy', '--yes'], { cwd: dir, env })).code, 0);
  const unknownDc = await runCli(['volume', 'delete', 'models', '--datacenter', 'mars', '--yes'], { cwd: dir, env });
  assert.match(unknownDc.stderr, /--datacenter "mars" is not a datacenter: use one of [A-Z0-9, -]*EU-RO-1/);
  // --datacenter in the forms Endpoint(datacenter=...) takes: any case, '_' for '-'.
  const deleted = await runCli(['volume', 'delete', 'models', '--datacenter', 'eu_ro_1', '--yes'], { cwd: dir, env });
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.match(deleted.stdout, /deleted volume models/);
});
