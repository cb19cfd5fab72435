// The embedded database: PGlite (PostgreSQL compiled to WebAssembly) on a file-backed data dir. A new data
// dir costs an initdb of several seconds, so it is done once per machine into a template that later data
// dirs copy (a few hundred ms). Durability: PGlite writes WAL with plain write(2) before COMMIT returns, so a
// committed transaction survives a crash or SIGKILL of the process; its file system layer does not forward
// fsync, so it is not guaranteed across a power loss or kernel crash.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { SqlDriver } from './types';

export interface PgliteOpenOptions {
  /** Pre-initialised data dir to copy from; created on first use. */
  templateDir?: string;
  log?: (line: string) => void;
}

export function defaultTemplateDir(dataRoot: string): string {
  return process.env.STRATO_PGLITE_TEMPLATE ? path.resolve(process.env.STRATO_PGLITE_TEMPLATE) : path.join(dataRoot, 'cache', 'pglite-template-v1');
}

const isInitialised = (dir: string) => fs.existsSync(path.join(dir, 'PG_VERSION'));

export async function openPglite(dir: string, opts: PgliteOpenOptions = {}): Promise<SqlDriver> {
  let fromTemplate = false;
  if (!isInitialised(dir) && opts.templateDir) {
    try {
      await ensureTemplate(opts.templateDir, opts.log);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.cpSync(opts.templateDir, dir, { recursive: true });
      fromTemplate = true;
    } catch (e) {
      opts.log?.(`strato platform: database template unusable (${(e as Error).message}); initialising directly`);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  fs.mkdirSync(dir, { recursive: true });
  try {
    return new PgliteDriver(await PGlite.create({ dataDir: dir }));
  } catch (e) {
    if (!fromTemplate || !opts.templateDir) throw e;
    // A template from another PGlite version: drop it and initialise this data dir directly.
    opts.log?.(`strato platform: the database template does not open (${(e as Error).message}); recreating it`);
    fs.rmSync(opts.templateDir, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    return new PgliteDriver(await PGlite.create({ dataDir: dir }));
  }
}

/** Creates the template once: initdb into a private dir, then an atomic rename (a racing process just loses). */
async function ensureTemplate(templateDir: string, log?: (line: string) => void): Promise<void> {
  if (isInitialised(templateDir)) return;
  fs.mkdirSync(path.dirname(templateDir), { recursive: true });
  const tmp = `${templateDir}.tmp-${process.pid}-${Date.now()}`;
  log?.('strato platform: initialising the database template (once per machine, a few seconds)');
  const db = await PGlite.create({ dataDir: tmp });
  await db.query('select 1');
  await db.close();
  try {
    fs.renameSync(tmp, templateDir);
  } catch {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!isInitialised(templateDir)) throw new Error(`could not create ${templateDir}`);
  }
}

class PgliteDriver implements SqlDriver {
  constructor(private readonly db: PGlite) {}

  async query<T>(sql: string, params?: unknown[]): Promise<T[]> {
    const r = await this.db.query<T>(sql, params);
    return r.rows;
  }

  async exec(sql: string): Promise<void> {
    await this.db.exec(sql);
  }

  transaction<T>(fn: (tx: Pick<SqlDriver, 'query'>) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) =>
      fn({
        query: async <R>(sql: string, params?: unknown[]) => (await tx.query<R>(sql, params)).rows,
      }),
    );
  }

  async close(): Promise<void> {
    if (!this.db.closed) await this.db.close();
  }
}
