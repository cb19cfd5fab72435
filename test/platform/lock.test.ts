// One platform per data dir: the lock names its holder's pid and the data dir it locks, so a data dir copied with its
// lock file (a node cloned from another's folder) is not refused in the name of a process that uses the original.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { acquireLock } from '../../engine/src/platform/lock';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-lock-'));
// A live process other than this one, to stand for a platform holding a lock.
const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
after(() => {
  holder.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

const dirWithLock = (name: string, text: string) => {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'platform.lock'), text);
  return dir;
};

test('a lock held by a live process is refused, naming it; the same lock file copied into another data dir is taken over', () => {
  const original = dirWithLock('original', `${holder.pid}\n${fs.realpathSync(tmp)}/original\n`);
  assert.throws(() => acquireLock(path.join(original, 'platform.lock')), new RegExp(`another Strato platform \\(pid ${holder.pid}\\) is using the data dir`));

  const copy = path.join(tmp, 'copy');
  fs.cpSync(original, copy, { recursive: true });
  const lock = acquireLock(path.join(copy, 'platform.lock'));
  assert.match(fs.readFileSync(path.join(copy, 'platform.lock'), 'utf8'), new RegExp(`^${process.pid}\\n.*copy\\n$`));
  lock.release();
  assert.equal(fs.existsSync(path.join(copy, 'platform.lock')), false, 'released: removed');
  assert.equal(fs.existsSync(path.join(original, 'platform.lock')), true, "the original's lock stays");
});

test('a lock of the earlier form (the pid alone) still refuses while its holder lives, and is taken over once it is gone', () => {
  const dir = dirWithLock('old-form', String(holder.pid));
  assert.throws(() => acquireLock(path.join(dir, 'platform.lock')), /is using the data dir/);
  const gone = dirWithLock('gone', '2147483646');
  acquireLock(path.join(gone, 'platform.lock')).release();
});
