// `.strato/dev.json` names the project's running dev server by its pid: a file a killed server left is ignored, and
// so is one whose pid another process holds now (a reboot, pids reused), which blocked `strato dev` with "already
// serves this project" and kept the extension pointing at a server that was gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readDevState, writeDevState, type DevState } from '../../engine/src/dev/state';

test("a dev.json is the running server's while its pid is the process that wrote it, not one that started later", async (t) => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'strato-devstate-'));
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.after(() => {
    other.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });
  const state = (pid: number, startedAt: number): DevState => ({
    pid,
    url: 'http://127.0.0.1:8888',
    port: 8888,
    startedAt,
    app: 'a',
    platformUrl: 'http://127.0.0.1:7450',
    endpoints: [],
  });
  writeDevState(root, state(process.pid, Date.now()));
  assert.equal(readDevState(root)?.pid, process.pid, 'this process, started before it wrote the file');
  writeDevState(root, state(other.pid!, Date.now() - 60_000));
  assert.equal(readDevState(root), null, 'a process that started a minute after the file was written is another one');
  writeDevState(root, state(other.pid!, Date.now()));
  assert.equal(readDevState(root)?.pid, other.pid);
  other.kill('SIGKILL');
  await new Promise((r) => other.once('exit', r));
  assert.equal(readDevState(root), null, 'a pid no process holds');
});
