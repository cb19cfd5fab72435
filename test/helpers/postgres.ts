// A real PostgreSQL server of the test's own: Debian's binaries, a cluster in a temp dir on a free port of
// 127.0.0.1, run as an unprivileged user when the tests run as root (initdb refuses root), removed afterwards.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './ports';

export interface TestPostgres {
  /** postgres://strato@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  /** A new empty database; its URL. */
  createDatabase(): Promise<string>;
  /** The folder of the server's Unix socket, and its port (the socket's name: .s.PGSQL.<port>). */
  socket: { dir: string; port: number };
  /** Stops the server (fast: the data is thrown away) and removes its directory. */
  stop(): void;
  /** pg_ctl stop / start, the data kept (an outage). */
  pause(): void;
  resume(): void;
}

/** The newest Debian PostgreSQL bin dir, or null. */
function binDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], 'bin') : null;
}

/** Why a server cannot be started here, or null. */
export function postgresMissing(): string | null {
  return binDir() ? null : 'PostgreSQL is not installed (apt-get install postgresql)';
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  if (!bin) throw new Error(postgresMissing()!);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) fs.chownSync(dir, 65534, 65534); // nobody: initdb and postgres refuse to run as root
  const run = (cmd: string, args: string[]) => {
    const full = asRoot ? ['runuser', ['-u', 'nobody', '--', path.join(bin, cmd), ...args]] : [path.join(bin, cmd), args];
    const r = spawnSync(full[0] as string, full[1] as string[], { encoding: 'utf8', cwd: dir, timeout: 60_000 });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  const port = await freePort();
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'strato', '-E', 'UTF8', '--no-sync']);
  const start = () =>
    run('pg_ctl', [
      '-D',
      data,
      '-l',
      path.join(dir, 'server.log'),
      '-w',
      '-o',
      `-p ${port} -h 127.0.0.1 -k ${dir} -c fsync=off -c max_connections=200`,
      'start',
    ]);
  start();
  const url = (database = 'postgres') => `postgres://strato@127.0.0.1:${port}/${database}`;
  let n = 0;
  let running = true;
  return {
    url,
    socket: { dir, port },
    async createDatabase() {
      const name = `strato_${process.pid}_${++n}_${Math.random().toString(36).slice(2, 8)}`;
      const c = new pg.Client({ connectionString: url() });
      await c.connect();
      try {
        await c.query(`create database ${name}`);
      } finally {
        await c.end();
      }
      return url(name);
    },
    pause() {
      if (running) run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
      running = false;
    },
    resume() {
      if (!running) start();
      running = true;
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        /* already stopped */
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

const byDataDir = new Map<string, string>();

/**
 * A fresh database on the server named by STRATO_TEST_DATABASE (the conformance run), else undefined. A platform
 * restarted on the same data dir gets the same database back, as a real node would.
 */
export async function testDatabase(dataDir?: string): Promise<string | undefined> {
  const server = process.env.STRATO_TEST_DATABASE;
  if (!server) return undefined;
  if (dataDir && byDataDir.has(dataDir)) return byDataDir.get(dataDir);
  const name = `strato_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  try {
    await c.query(`create database ${name}`);
  } finally {
    await c.end();
  }
  const u = new URL(server);
  u.pathname = `/${name}`;
  if (dataDir) byDataDir.set(dataDir, u.toString());
  return u.toString();
}
