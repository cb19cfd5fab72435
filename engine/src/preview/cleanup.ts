// What a preview leaves must go: its containers and network (found by label), its temporary data dir (found by name),
// and a previous preview of the same project, which is stopped first (a second preview replaces the first).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isPreviewProcess, previewLockFile } from './state';
import { listContainers, listNetworks, removeContainer, removeNetwork, type DockerEngine } from '../containers';
import { UserError } from '../util/errors';
import { tryLock, type HeldLock } from '../util/pidLock';

/** How long a preview that is asked to stop may take: one still starting stops after its current step (the build). */
const REPLACE_WAIT_MS = 90_000;
/** How long the engine may take to remove containers whose removal is already in progress. */
const REMOVAL_WAIT_MS = 15_000;

/** The prefix of a preview's temporary data dir: its project's key is in the name, so a dir left by a kill is found. */
export function dataDirPrefix(key: string): string {
  return path.join(os.tmpdir(), `strato-preview-${key}-`);
}

/**
 * Force-removes the labelled containers, waits until the engine has let them go (a removal already in progress
 * answers 409 at once), then removes the labelled networks. Throws what could not be removed, so nobody is told it was.
 */
export async function removeLeftovers(engine: DockerEngine, label: string, log: (line: string) => void): Promise<number> {
  let removed = 0;
  for (const c of await listContainers(engine, label)) {
    await removeContainer(engine, c.Id).catch((e: Error) => log(`strato preview: could not remove container ${c.Names[0] ?? c.Id}: ${e.message}`));
    removed++;
  }
  const deadline = Date.now() + REMOVAL_WAIT_MS;
  let left = await listContainers(engine, label);
  while (left.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = await listContainers(engine, label);
  }
  const failed = left.map((c) => `container ${c.Names[0]?.replace(/^\//, '') ?? c.Id.slice(0, 12)}`);
  for (const n of await listNetworks(engine, label)) {
    await removeNetwork(engine, n.Id).then(
      () => removed++,
      (e: Error) => failed.push(`network ${n.Name} (${e.message})`),
    );
  }
  if (failed.length) throw new LeftoversError(failed);
  return removed;
}

/** Preview resources the engine did not remove. */
export class LeftoversError extends UserError {
  constructor(readonly left: string[]) {
    super(`${left.join(' and ')} could not be removed`);
  }
}

/** Deletes the data dirs of this project's earlier previews (a preview killed with SIGKILL cannot delete its own). */
export function removeDataDirs(key: string, keep?: string): void {
  const prefix = dataDirPrefix(key);
  let entries: string[];
  try {
    entries = fs.readdirSync(path.dirname(prefix));
  } catch {
    return;
  }
  for (const e of entries) {
    const dir = path.join(path.dirname(prefix), e);
    if (dir.startsWith(prefix) && dir !== keep) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 2 });
  }
}

/**
 * Makes this process the project's one preview, for its whole life (from before the build): a preview that holds
 * the lock, up or still starting, gets SIGTERM (it cleans up itself) and is waited for; then what any earlier
 * preview left is removed. A preview that does not stop in time is named, and nothing of it is touched.
 */
export async function takeOver(engine: DockerEngine, root: string, key: string, onProgress?: (message: string) => void): Promise<HeldLock> {
  const file = previewLockFile(root);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let signalled = 0;
  const deadline = Date.now() + REPLACE_WAIT_MS;
  for (;;) {
    const got = tryLock(file);
    if ('lock' in got) {
      try {
        await removeLeftovers(engine, `strato.preview=${key}`, () => {});
        removeDataDirs(key);
        return got.lock;
      } catch (e) {
        got.lock.release();
        if (e instanceof LeftoversError)
          throw new UserError(
            `the previous preview of this project left ${e.left.join(' and ')}, which could not be removed: ` +
              'remove them (docker rm -f / docker network rm) and start the preview again',
          );
        throw e;
      }
    }
    const pid = got.holder;
    // A pid reused by another program after a preview was killed: the lock is stale.
    if (pid !== process.pid && !isPreviewProcess(pid)) {
      fs.rmSync(file, { force: true });
      continue;
    }
    if (pid === process.pid || Date.now() > deadline)
      throw new UserError(
        `another preview of this project (pid ${pid}) is running and did not stop within ${REPLACE_WAIT_MS / 1000} s of SIGTERM: ` +
          `stop it (Ctrl+C in its terminal, or kill ${pid}) and start the preview again`,
      );
    if (signalled !== pid) {
      onProgress?.(`stopping the preview of this project that runs as pid ${pid}`);
      process.kill(pid, 'SIGTERM');
      signalled = pid;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
