// A reader that stops early (`strato check | head -1`) closes the pipe under the CLI: the rest of its output goes
// nowhere, with no stack trace, and the command ends as it would have (its exit status, its work done).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
