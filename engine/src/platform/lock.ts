// One platform per data dir: two processes opening the same embedded database would corrupt it. The lock file
// holds the owner's pid and the data dir; a lock left by a dead process (SIGKILL, power loss), or copied with its data
// dir, is taken over.
import fs from 'node:fs';
import { UserError } from '../util/errors';
import { lockHolder, lockText } from '../protocol/layout';

export interface DataDirLock {
  release(): void;
}

export function acquireLock(file: string): DataDirLock {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      fs.writeSync(fd, lockText(file));
      fs.closeSync(fd);
      return {
        release: () => {
          try {
            if (Number.parseInt(fs.readFileSync(file, 'utf8'), 10) === process.pid) fs.rmSync(file, { force: true });
          } catch {
            /* already gone */
          }
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = lockHolder(file);
      if (owner !== null && owner !== process.pid) {
        throw new UserError(
          `another Strato platform (pid ${owner}) is using the data dir of ${file.replace(/[/\\][^/\\]*$/, '')}; ` +
            `stop it (Ctrl+C in its terminal; \`strato platform stop\` when it is the background one; else kill ${owner}) or pass ` +
            'a different --data-dir',
        );
      }
      fs.rmSync(file, { force: true }); // stale: its owner is gone
    }
  }
  throw new UserError(`could not take the platform lock ${file}; remove it if no platform is running`);
}
