// A lock file naming the process that holds it (its pid and folder: protocol/layout.ts lockText): taken with an
// exclusive create; a lock whose holder is gone (SIGKILL, power loss), or that was copied with its folder, is taken
// over. The platform's data dir (platform/lock.ts) and a project's build (build/index.ts) are held with it.
import fs from 'node:fs';
import path from 'node:path';
import { lockHolder, lockText } from '../protocol/layout';
import { UserError } from './errors';

export interface HeldLock {
  release(): void;
}

/** Lock files this process holds: a lock naming this pid is its own only when it was taken here (not a pid reused). */
const heldHere = new Set<string>();

/** Takes the lock, or answers the live process that holds it (this one, for a lock taken here and not released). */
export function tryLock(file: string): { lock: HeldLock } | { holder: number } {
  if (heldHere.has(path.resolve(file))) return { holder: process.pid };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      fs.writeSync(fd, lockText(file));
      fs.closeSync(fd);
      heldHere.add(path.resolve(file));
      return { lock: { release: () => release(file) } };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = lockHolder(file);
      if (owner !== null && owner !== process.pid) return { holder: owner };
      fs.rmSync(file, { force: true }); // stale: its owner is gone
    }
  }
  throw new UserError(`could not take the lock ${file}: remove it if no Strato process is running`);
}

function release(file: string): void {
  if (!heldHere.delete(path.resolve(file))) return;
  try {
    if (Number.parseInt(fs.readFileSync(file, 'utf8'), 10) === process.pid) fs.rmSync(file, { force: true });
  } catch {
    /* already gone */
  }
}
