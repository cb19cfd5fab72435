// A worker host that leaves after its platform died (issue #11): `strato platform agent` gets SIGTERM while a job of
// a platform that was SIGKILLed still runs on it. It stops its worker, says "stopped" and its process ends: what it
// could not tell the dead platform (the worker's exit) is dropped, not retried every second for ever.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { buildTestArtifact } from '../helpers/artifact';
import { CLI, ensureBuilt } from '../helpers/cli';
import { call, deploy, PYTHON, spawnPlatformProcess, TEST_KEY, waitUntil, type PlatformProcess } from '../helpers/platform';
import { queueSpec } from '../helpers/testWorkers';

const HOLD_PY = `
import time


def hold(marker, seconds=30):
    with open(marker, "w") as f:
        f.write("started")
    time.sleep(seconds)
    return {}
`;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-agent-leave-'));
let platform: PlatformProcess | undefined;
after(() => {
  platform?.killGroup();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('an agent stopped after its platform died ends its process once it says "stopped"', async () => {
  ensureBuilt();
  // The platform serves another datacenter than the endpoint's: its worker can only run on the host.
  platform = await spawnPlatformProcess(path.join(tmp, 'platform'), ['--datacenter', 'EU-RO-1']);
  const args = ['platform', 'agent', '--join', platform.url, '--key', TEST_KEY, '--name', 'h1', '--datacenter', 'US-KS-2'];
  const agent = spawn(process.execPath, [CLI, ...args, '--data-dir', path.join(tmp, 'agent')], {
    env: { ...process.env, STRATO_GPUS: '', STRATO_PYTHON: PYTHON, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  agent.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  agent.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const ended = new Promise<number | null>((r) => agent.on('close', (code) => r(code)));
  try {
    await waitUntil('the host to join', () => out.includes('joined '), 20_000);
    const cp = new ControlPlaneClient({ baseUrl: platform.url, apiKey: TEST_KEY });
    const spec = queueSpec('pinned', 'hold', { file: 'hold.py', workers: [0, 1], resource: { datacenters: ['US-KS-2'] } });
    const eps = await deploy(cp, await buildTestArtifact({ 'hold.py': HOLD_PY }, [spec]));
    const marker = path.join(tmp, 'started');
    const r = await call('POST', `${eps.pinned.url}/run`, { body: { input: { marker } } });
    assert.equal(r.status, 200, r.text);
    await waitUntil('the job to run on the host', () => fs.existsSync(marker), 30_000);

    await platform.crash();
    agent.kill('SIGTERM');
    await waitUntil('the agent to say it stopped', () => /^strato agent: stopped$|^stopped$/m.test(out), 20_000);
    const code = await Promise.race([ended, new Promise<'running'>((r) => setTimeout(() => r('running'), 5000).unref())]);
    assert.notEqual(code, 'running', `the agent's process still runs 5 s after "stopped":\n${out}`);
  } finally {
    agent.kill('SIGKILL');
  }
});
