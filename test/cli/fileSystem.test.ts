// A file system refusal on the user's own paths (a file where the .strato folder goes, a folder where a file goes)
// is said with the path and what to do, not as a bug of Strato's with a request to report it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, runCli } from '../helpers/cli';

let dir: string;
before(() => {
  ensureBuilt();
  dir = mkdtempSync(path.join(os.tmpdir(), 'strato-fs-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('a file where the .strato folder goes, and a folder where the artifact goes: the path and the fix, no bug report', async () => {
  const project = (name: string) => {
    const p = path.join(dir, name);
    mkdirSync(p);
    writeFileSync(path.join(p, 'requirements.txt'), '');
    writeFileSync(
      path.join(p, 'worker.py'),
      'from strato import Endpoint\n\n\n@Endpoint(name="a", cpu="cpu3c-1-2")\ndef a(x: int = 1) -> int:\n    return x\n',
    );
    return p;
  };
  const fileThere = project('file-there');
  writeFileSync(path.join(fileThere, '.strato'), 'not a folder\n');
  const a = await runCli(['build'], { cwd: fileThere, env: { STRATO_DATA_DIR: path.join(dir, 'data') } });
  assert.equal(a.code, 1);
  assert.match(a.stderr, /^error: cannot mkdir \S*\.strato: something is already there where a folder or file is to be made; move or remove it \(EEXIST\)$/m);
  const folderThere = project('folder-there');
  mkdirSync(path.join(folderThere, '.strato', 'artifact.tar.gz'), { recursive: true });
  const b = await runCli(['build'], { cwd: folderThere, env: { STRATO_DATA_DIR: path.join(dir, 'data') } });
  assert.equal(b.code, 1);
  // The folder is named, not the file that was to take its place, and that file is not left behind.
  assert.match(b.stderr, /^error: cannot write \S*\/\.strato\/artifact\.tar\.gz: it is a folder where a file is needed; move or remove it \(EISDIR\)$/m);
  assert.ok(!existsSync(path.join(folderThere, '.strato', 'artifact.tar.gz.partial')));
  for (const r of [a, b]) assert.doesNotMatch(r.stderr, /report this as a bug/);
});
