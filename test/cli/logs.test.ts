// `strato logs` as a user runs it: the real CLI against a real platform (reached by URL, as a remote one would be)
// with a project deployed by `strato deploy`: the last lines, JSON, --tail, --follow until Ctrl+C, and clear errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, runCli } from '../helpers/cli';
import { startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';

let tmp: string;
let dir: string;
let p: TestPlatform;
let env: NodeJS.ProcessEnv;
let endpointId: string;

const WORKER = `from strato import CpuInstanceType, Endpoint


@Endpoint(name="talker", cpu=CpuInstanceType.CPU3C_1_2)
def talk(text: str) -> dict:
    print("said", text)
    return {"text": text}
`;

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-logs-'));
  dir = path.join(tmp, 'chat');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'pyproject.toml'), '[project]\nname = "chat"\nversion = "0.1.0"\n');
  writeFileSync(path.join(dir, 'worker.py'), WORKER);
  p = await startTestPlatform();
  env = { STRATO_API_URL: p.url, STRATO_API_KEY: p.key };
  const d = await runCli(['deploy'], { cwd: dir, env });
  assert.equal(d.code, 0, d.stderr);
  endpointId = (await p.cp.findEndpoint('chat', 'production', 'talker'))!.id;
  assert.equal((await p.jobs.runsync(endpointId, { text: 'hello' })).status, 'COMPLETED');
  // The printed line travels on the worker's stdout, the result on its job channel: it may reach the log a moment later.
  await waitUntil('the printed line in the log', async () =>
    (await (await fetch(`${p.url}/v2/${endpointId}/logs`, { headers: { authorization: `Bearer ${p.key}` } })).text()).includes('said hello'),
  );
});

after(async () => {
  await p?.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('strato logs <endpoint> prints the last lines: time, worker and what the handler printed', async () => {
  const r = await runCli(['logs', 'talker'], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^\d\d:\d\d:\d\d\.\d{3} w-\S+ said hello$/m);
  assert.match(r.stdout, /strato INFO/, 'the runtime lines are there too');
});

test('--json prints one record a line; --tail 1 only the last one', async () => {
  const r = await runCli(['logs', 'talker', '--json'], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const said = lines.find((l) => l.text === 'said hello');
  assert.deepEqual(Object.keys(said).sort(), ['level', 'stream', 'text', 'time', 'worker']);
  assert.deepEqual([said.stream, said.level], ['out', 'info']);
  const one = await runCli(['logs', 'talker', '--tail', '1', '--json'], { cwd: dir, env });
  assert.deepEqual(
    one.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l)),
    lines.slice(-1),
  );
  // --tail 0 asks for no past line: nothing printed, and no claim that the log is empty.
  const none = await runCli(['logs', 'talker', '--tail', '0'], { cwd: dir, env });
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, '');
  assert.doesNotMatch(none.stderr, /no log lines yet/);
});

test('--follow prints new lines as the workers write them, until Ctrl+C', async () => {
  const child = spawn(process.execPath, [CLI, 'logs', 'talker', '--follow', '--tail', '0'], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  try {
    await waitUntil('following', () => err.includes('following talker'), 20_000);
    assert.equal(out, '', 'tail 0 prints no old line');
    await p.jobs.run(endpointId, { text: 'later' });
    await waitUntil('the new line', () => /said later/.test(out), 20_000);
  } finally {
    child.kill('SIGINT');
  }
  await new Promise((r) => child.once('close', r));
  assert.ok(!out.includes('said hello'), out);
});

test('an unknown endpoint, environment or --tail is refused with what exists and how to fix it', async () => {
  const unknown = await runCli(['logs', 'nope'], { cwd: dir, env });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /chat\/production has no endpoint "nope" \(it has talker\)/);
  const noEnv = await runCli(['logs', 'talker', '--env', 'staging'], { cwd: dir, env });
  assert.equal(noEnv.code, 1);
  assert.match(noEnv.stderr, /app "chat" has no environment "staging" \(it has production\)/);
  const badTail = await runCli(['logs', 'talker', '--tail', 'x'], { cwd: dir, env });
  assert.equal(badTail.code, 1);
  assert.match(badTail.stderr, /--tail must be a whole number from 0 to 10000, got "x"/);
  assert.ok(![unknown, noEnv, badTail].some((r) => /\n\s+at /.test(r.stderr)), 'no stack trace');
});
