// A reader that stops early (`strato check | head -1`) closes the pipe under the CLI: the rest of its output goes
// nowhere, with no stack trace, and the command ends as it would have (its exit status, its work done).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI, ensureBuilt } from '../helpers/cli';

let dir: string;
before(() => {
  ensureBuilt();
  dir = mkdtempSync(path.join(os.tmpdir(), 'strato-pipes-'));
  writeFileSync(path.join(dir, 'pyproject.toml'), '[project]\nname = "pipes"\n');
  const endpoints = Array.from({ length: 200 }, (_, i) => `@Endpoint(name="e${i}", cpu="nope")\ndef e${i}(x: int) -> int:\n    return x\n`);
  writeFileSync(path.join(dir, 'worker.py'), `from strato import Endpoint\n\n${endpoints.join('\n')}`);
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('strato check with its output piped to a reader that already left: no stack trace, the same exit status', async () => {
  const child = spawn(process.execPath, [CLI, 'check'], { cwd: dir, env: { ...process.env, STRATO_DATA_DIR: path.join(dir, 'data'), NO_COLOR: '1' } });
  child.stdout.destroy(); // the reader left before the first line: every write meets a closed pipe
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  assert.doesNotMatch(stderr, /EPIPE|node:events|at \w+ \(/, stderr);
  assert.equal(code, 1, 'check still exits 1 on the errors it found');
});

test('colour codes reach a terminal only: stderr sent to a file gets none while stdout is a terminal, and the terminal keeps them', async () => {
  // `script` gives the command a terminal; `init` into a folder it would overwrite writes its warning to stderr (and,
  // its stdin no terminal, does not ask).
  const run = (shell: string) =>
    new Promise<string>((resolve) => {
      const env: NodeJS.ProcessEnv = { ...process.env, STRATO_DATA_DIR: path.join(dir, 'data') };
      delete env.NO_COLOR;
      delete env.NODE_TEST_CONTEXT; // the command is no test of this runner's
      const child = spawn('script', ['-qec', shell, '/dev/null'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.on('close', () => resolve(out));
    });
  const cli = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)}`;
  await run(`${cli} init colours`);
  const err = path.join(dir, 'err.txt');
  await run(`${cli} init colours </dev/null 2>${JSON.stringify(err)}`);
  const written = readFileSync(err, 'utf8');
  assert.match(written, /These files exist and would be overwritten/);
  assert.ok(!written.includes('\x1b['), JSON.stringify(written));
  const onTerminal = await run(`${cli} init colours </dev/null`);
  assert.ok(onTerminal.includes('\x1b[33mThese files exist'), JSON.stringify(onTerminal));
});
