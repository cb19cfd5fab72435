// Where the platform keeps its state: the user's data directory (STRATO_DATA_DIR, else $XDG_DATA_HOME/strato,
// else ~/.local/share/strato), and inside a platform data dir the database, builds, logs, key and state files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type * as Crypto from 'node:crypto';

/** The local platform's port unless it is taken (then any free one, written to its state file). */
export const DEFAULT_PORT = 7450;

export function userDataRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.STRATO_DATA_DIR) return path.resolve(env.STRATO_DATA_DIR);
  const xdg = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : null;
  return path.join(xdg ?? path.join(os.homedir(), '.local', 'share'), 'strato');
}

/** The data dir of the local platform (daemon or `platform serve` without --data-dir). */
export function defaultPlatformDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(userDataRoot(env), 'platform');
}

export interface PlatformLayout {
  root: string;
  db: string;
  uploads: string;
  artifacts: string;
  builds: string;
  logs: string;
  /** Network volumes: <app id>/<datacenter>/<name>, kept across deploys and undeploys. */
  volumes: string;
  keyFile: string;
  stateFile: string;
  lockFile: string;
  daemonLog: string;
}

export function platformLayout(dataDir: string): PlatformLayout {
  const root = path.resolve(dataDir);
  return {
    root,
    db: path.join(root, 'db'),
    uploads: path.join(root, 'uploads'),
    artifacts: path.join(root, 'artifacts'),
    builds: path.join(root, 'builds'),
    logs: path.join(root, 'logs'),
    volumes: path.join(root, 'volumes'),
    keyFile: path.join(root, 'api-key'),
    stateFile: path.join(root, 'platform.json'),
    lockFile: path.join(root, 'platform.lock'),
    daemonLog: path.join(root, 'platform.log'),
  };
}

export function ensureLayout(l: PlatformLayout): void {
  fs.mkdirSync(l.root, { recursive: true, mode: 0o700 });
  for (const d of [l.uploads, l.artifacts, l.builds, l.logs, l.volumes]) fs.mkdirSync(d, { recursive: true });
}

/** A new account key: 32 random bytes, url-safe, prefixed so that it is recognisable in a leaked log. */
export function newApiKey(): string {
  // node:crypto loads here, not with the module: commands that only read the layout (`strato --help` among them) skip its 2 ms.
  const { randomBytes } = require('node:crypto') as typeof Crypto;
  return `strato_${randomBytes(32).toString('base64url')}`;
}

export function readKeyFile(file: string): string | undefined {
  try {
    const key = fs.readFileSync(file, 'utf8').trim();
    return key || undefined;
  } catch {
    return undefined;
  }
}

/** Reads the key file, creating it (mode 0600, written atomically) with a new key when it does not exist. */
export function loadOrCreateKey(file: string): string {
  const existing = readKeyFile(file);
  if (existing) return existing;
  const key = newApiKey();
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${key}\n`, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  try {
    fs.linkSync(tmp, file); // fails if another process created it first: then theirs wins
  } catch {
    /* keep the existing file */
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return readKeyFile(file) ?? key;
}

/** What a running platform writes so that clients and `platform status|stop` find it. */
export interface PlatformState {
  pid: number;
  url: string;
  host: string;
  port: number;
  startedAt: number;
  version: string;
  dataDir: string;
}

export function readState(file: string): PlatformState | undefined {
  try {
    const s = JSON.parse(fs.readFileSync(file, 'utf8')) as PlatformState;
    return typeof s.pid === 'number' && typeof s.url === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}

export function writeState(file: string, state: PlatformState): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(state, null, 2), { mode: 0o600 });
  fs.renameSync(tmp, file);
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** What a data dir lock holds: the owner's pid, and the data dir it locks (a lock copied with its data dir is stale). */
export function lockText(lockFile: string): string {
  return `${process.pid}\n${realDir(lockFile)}\n`;
}

const realDir = (lockFile: string) => {
  try {
    return fs.realpathSync(path.dirname(lockFile));
  } catch {
    return path.resolve(path.dirname(lockFile));
  }
};

/**
 * The pid of the live process that holds a platform's data dir lock (`lockFile`), or null: none, its holder is gone,
 * or the lock names another data dir (this one is a copy, lock file included, of a dir that process uses).
 */
export function lockHolder(lockFile: string): number | null {
  let text: string;
  try {
    text = fs.readFileSync(lockFile, 'utf8');
  } catch {
    return null;
  }
  const [pid, dir] = text.split('\n');
  const owner = Number.parseInt(pid, 10);
  if (dir && dir !== realDir(lockFile)) return null;
  return Number.isInteger(owner) && pidAlive(owner) ? owner : null;
}
