// One platform per data dir: two processes opening the same embedded database would corrupt it. The lock file
// holds the owner's pid and the data dir; a lock left by a dead process (SIGKILL, power loss), or copied with its data
// dir, is taken over (util/pidLock.ts).
import { UserError } from '../util/errors';
import { tryLock, type HeldLock } from '../util/pidLock';

export type DataDirLock = HeldLock;

export function acquireLock(file: string): DataDirLock {
  const got = tryLock(file);
  if ('lock' in got) return got.lock;
  throw new UserError(
    `another Strato platform (pid ${got.holder}) is using the data dir of ${file.replace(/[/\\][^/\\]*$/, '')}; ` +
      `stop it (Ctrl+C in its terminal; \`strato platform stop\` when it is the background one; else kill ${got.holder}) or pass ` +
      'a different --data-dir',
  );
}
