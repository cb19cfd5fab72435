// `strato platform start|stop|status|serve` from the bundled CLI (dist/cli.js, so PGlite loads from the
// bundle), the key file (mode 0600), and client configuration: the local daemon found or started on demand,
// STRATO_API_KEY from the environment or .env first, clear errors for a refused key or an unreachable platform.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveApiConfig } from '../../engine/src/api/config';
import { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { stopDaemon } from '../../engine/src/api/localPlatform';
import { pidAlive, readState } from '../../engine/src/protocol/layout';
import { CLI, ensureBuilt, runCli } from '../helpers/cli';
import { PYTHON, TEMPLATE_DIR, waitUntil } from '../helpers/platform';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-daemon-'));
const userDir = path.join(tmp, 'user');
const platformDir = path.join(userDir, 'platform');
const env = { STRATO_DATA_DIR: userDir, STRATO_PGLITE_TEMPLATE: TEMPLATE_DIR, STRATO_PYTHON: PYTHON, STRATO_API_URL: '', STRATO_API_KEY: '' };
const saved: Record<string, string | undefined> = {};

before(() => {
  ensureBuilt();
  for (const [k, v] of Object.entries({ ...env, STRATO_CLI: CLI })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
});
after(async () => {
  const s = readState(path.join(platformDir, 'platform.json'));
  await stopDaemon(platformDir).catch(() => undefined);
  if (s && pidAlive(s.pid)) process.kill(s.pid, 'SIGKILL');
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('start, status and stop the background platform; the key file is owner-only', async () => {
  const down = await runCli(['platform', 'status'], { cwd: tmp, env });
  assert.equal(down.code, 3);
  assert.match(down.stdout, /not running/);
  const up = await runCli(['platform', 'start'], { cwd: tmp, env, timeoutMs: 90_000 });
  assert.equal(up.code, 0, up.stderr);
  // The first start of a data dir prepares a database: it says so instead of being silent for seconds.
  assert.match(up.stderr, /first time: preparing its database/);
  const url = /started: (http:\/\/\S+)/.exec(up.stdout)?.[1];
  assert.ok(url, up.stdout);
  const keyFile = path.join(platformDir, 'api-key');
  assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
  const status = await runCli(['platform', 'status'], { cwd: tmp, env });
  assert.equal(status.code, 0);
  assert.match(status.stdout, new RegExp(`running: ${url}`));
  // A project whose .env names another platform: that one's status, as every other command there talks to it (not
  // the background one's, mixed with the other's nodes). Nothing listens there: said, naming it.
  const elsewhere = path.join(tmp, 'elsewhere');
  fs.mkdirSync(elsewhere);
  fs.writeFileSync(path.join(elsewhere, '.env'), 'STRATO_API_URL=http://127.0.0.1:9\nSTRATO_API_KEY=k\n');
  const named = await runCli(['platform', 'status'], { cwd: elsewhere, env });
  assert.equal(named.code, 1, named.stdout);
  assert.match(named.stderr, /could not reach the Strato platform at http:\/\/127\.0\.0\.1:9 /);
  assert.doesNotMatch(named.stdout, /running:/);
  const again = await runCli(['platform', 'start'], { cwd: tmp, env });
  assert.match(again.stdout, /already running/);
  assert.doesNotMatch(again.stderr, /first time/);
  // Flags for a start that does not happen are said to be left unapplied, not dropped without a word.
  const flagged = await runCli(['platform', 'start', '--port', '7999', '--api-key', 'abc'], { cwd: tmp, env });
  assert.match(flagged.stderr, /note: --port, --api-key not applied: the platform was already running as it is/);

  // Clients without STRATO_API_URL find it and read its key file.
  const cfg = await resolveApiConfig({ projectDir: tmp, env: { ...process.env } });
  assert.equal(cfg.baseUrl, url);
  assert.equal(cfg.source, 'local');
  assert.equal(cfg.apiKey, fs.readFileSync(keyFile, 'utf8').trim());
  assert.deepEqual(await new ControlPlaneClient(cfg).listApps(), []);

  // STRATO_API_KEY from .env comes first; a wrong one is refused with a message naming it.
  fs.writeFileSync(path.join(tmp, '.env'), 'STRATO_API_KEY="not-the-key"\n');
  const wrong = await resolveApiConfig({ projectDir: tmp, env: { ...process.env } });
  assert.equal(wrong.apiKey, 'not-the-key');
  await assert.rejects(new ControlPlaneClient(wrong).listApps(), /refused the API key \(401\); check STRATO_API_KEY/);
  fs.rmSync(path.join(tmp, '.env'));

  const stop = await runCli(['platform', 'stop'], { cwd: tmp, env });
  assert.match(stop.stdout, /stopped/);
  assert.equal((await runCli(['platform', 'status'], { cwd: tmp, env })).code, 3);
  await assert.rejects(new ControlPlaneClient(cfg).listApps(), /could not reach the Strato platform .*strato platform start/);
});

test('clients start the local platform on demand; commands that start it at the same moment all use the one that won', async () => {
  // Two deploys at once, or the editor and a terminal: the starts race for the data dir, and the losers wait for
  // the winner instead of failing with its lock error (and earlier runs' log lines).
  const starts = await Promise.all([1, 2, 3].map(() => runCli(['platform', 'start'], { cwd: tmp, env, timeoutMs: 90_000 })));
  for (const s of starts) assert.equal(s.code, 0, s.stderr);
  const urls = new Set(starts.map((s) => /(?:started|already running): (http:\/\/\S+)/.exec(s.stdout)?.[1]));
  assert.equal(urls.size, 1, starts.map((s) => s.stdout).join('\n'));
  const cfg = await resolveApiConfig({ projectDir: tmp, env: { ...process.env } });
  assert.deepEqual(await new ControlPlaneClient(cfg).listApps(), []);
  const r = await stopDaemon(platformDir);
  assert.equal(r.stopped, true);
});

test('STRATO_API_URL without STRATO_API_KEY is an error that says what to set', async () => {
  await assert.rejects(resolveApiConfig({ projectDir: tmp, env: { STRATO_API_URL: 'http://127.0.0.1:9' } }), /STRATO_API_KEY is not/);
  const cfg = await resolveApiConfig({ projectDir: tmp, env: { STRATO_API_URL: 'http://127.0.0.1:9/', STRATO_API_KEY: 'k' } });
  assert.deepEqual(cfg, { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', source: 'STRATO_API_URL' });
});

test('`platform serve` runs in the foreground from the bundle and stops on SIGINT; GPUs named by STRATO_GPUS are shown', async () => {
  const dir = path.join(tmp, 'fg');
  const child = spawn(process.execPath, [CLI, 'platform', 'serve', '--data-dir', dir, '--port', '0'], {
    env: { ...process.env, ...env, STRATO_GPUS: 'NVIDIA L4, H100' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  try {
    const url = await waitUntil('serve to listen', () => /listening on (http:\/\/\S+)/.exec(out)?.[1], 60_000);
    // A data dir of its own: clients on this machine do not find it by themselves, and it says what to set.
    const keyFile = await waitUntil(
      'the key line',
      () => /API key: in (\S+); with this --data-dir, clients find neither the platform nor its key: set STRATO_API_URL=/.exec(out)?.[1],
      10_000,
    );
    const r = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { authorization: fs.readFileSync(keyFile, 'utf8').trim(), 'content-type': 'application/json' },
      body: '{"query":"{ apps { id } }"}',
    });
    assert.deepEqual(await r.json(), { data: { apps: [] } });
    assert.match(out, /GPUs: NVIDIA L4, H100 \(STRATO_GPUS, in place of nvidia-smi's\)/);
    // A short name is taken as written, with the models it may mean; a model name gets no note.
    assert.match(out, /note: GPU "H100" is not a model name as nvidia-smi reports it.*write "NVIDIA H100 80GB HBM3"/);
    assert.doesNotMatch(out, /note: GPU "NVIDIA L4"/);
    child.kill('SIGINT');
    assert.equal(await exited, 0);
    assert.match(out, /stopped/);
  } finally {
    child.kill('SIGKILL');
  }
});
