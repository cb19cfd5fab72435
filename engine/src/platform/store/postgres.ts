// A PostgreSQL server as the platform's database (`strato platform serve --database postgres://...`), through the
// `pg` driver (pure JavaScript), behind the same SqlDriver as the embedded PGlite: the store's SQL runs unchanged on
// both. Several platform nodes can share one server.
import pg from 'pg';
import { parse as parseConnectionString } from 'pg-connection-string';
import { UserError } from '../../util/errors';
import { unavailable } from '../errors';
import type { SqlDriver } from './types';
import { inlined, type NamedCall } from './namedStatements';
import { refusedText } from './storableText';

/** The URL without its password, for messages and logs. */
export function redactDatabaseUrl(url: string): string {
  // A password is the URL's own (user:pw@) or a parameter (?password=...), which pg reads as well.
  const maskParameter = (u: string) => u.replace(/([?&]password=)[^&#]*/gi, '$1***');
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return maskParameter(u.toString());
  } catch {
    // pg takes some URLs the WHATWG parser does not (a Unix socket: postgres://user:pw@/db?host=/run/postgresql).
    return parses(url) ? maskParameter(url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*:)[^@]*@/, '$1***@')) : '(a database URL that cannot be parsed)';
  }
}

/** Whether pg can read the URL: its own parser decides, as it is the one that will read it. */
function parses(url: string): boolean {
  try {
    parseConnectionString(url);
    return true;
  } catch {
    return false;
  }
}

/** bigint columns (times in ms, counters) as numbers, as PGlite gives them; they stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** `from`: where the URL was given (`--database`, or `STRATO_DATABASE_URL`), as errors name it. */
export async function openPostgres(url: string, log: (line: string) => void = () => {}, from = '--database'): Promise<SqlDriver> {
  if (!/^postgres(ql)?:\/\//.test(url) || !parses(url)) {
    // The URL itself is never echoed: it may hold a password.
    const got = parses(url)
      ? `"${redactDatabaseUrl(url)}"`
      : 'one that cannot be parsed (check its brackets, and %-encode reserved characters in the password)';
    throw new UserError(`${from} must be a PostgreSQL URL such as postgres://user:password@host:5432/strato, got ${got}`);
  }
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 10_000, idleTimeoutMillis: 30_000, types });
  // A connection that breaks while idle (the server restarted) is dropped from the pool; the next query reconnects.
  pool.on('error', (e) => log(`strato platform: a database connection was lost (${e.message}); reconnecting on the next query`));
  try {
    await pool.query('select 1');
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw new UserError(`cannot reach the database at ${redactDatabaseUrl(url)}: ${(e as Error).message}; check that the server runs and the URL is right`);
  }
  return new PgDriver(pool, url, log);
}

/** Errors that mean the server cannot be reached now (refused, reset, shut down, starting): 503, not 500. */
function isOutage(e: unknown): boolean {
  const code = String((e as { code?: unknown })?.code ?? '');
  const message = (e as Error)?.message ?? '';
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', '57P01', '57P02', '57P03'].includes(code) ||
    code.startsWith('08') ||
    /Connection terminated|timeout exceeded when trying to connect/i.test(message)
  );
}

/** The same error, or the platform's 503 sentence when the database is out of reach. */
async function guarded<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (isOutage(e))
      throw unavailable(`the platform's database is unavailable (${(e as Error).message || String((e as { code?: string }).code)}); try again in a moment`);
    throw refusedText(e) ?? e;
  }
}

/** How long a broken LISTEN connection waits before it is made again. */
const RELISTEN_MS = 1000;

class PgDriver implements SqlDriver {
  readonly vacuumsItself = true;
  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    private readonly log: (line: string) => void,
  ) {}

  async listen(channel: string, onNotify: (payload: string) => void, onReconnect: () => void): Promise<{ close(): Promise<void> }> {
    let client: pg.Client | null = null;
    let closed = false;
    let retry: NodeJS.Timeout | undefined;
    let reported = false; // one line per outage, not one per attempt
    const connect = async (again: boolean): Promise<void> => {
      const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 10_000, types });
      const lost = (e?: Error) => {
        if (client !== c) return;
        client = null;
        c.end().catch(() => undefined);
        if (closed) return;
        if (e && !reported) this.log(`strato platform: the connection that hears other nodes' changes was lost (${e.message}); connecting again`);
        reported ||= Boolean(e);
        retry = setTimeout(() => void connect(true).catch(() => undefined), RELISTEN_MS);
        retry.unref();
      };
      c.on('error', lost);
      c.on('end', () => lost());
      c.on('notification', (n) => onNotify(n.payload ?? ''));
      client = c;
      try {
        await c.connect();
        await c.query(`listen ${channel}`);
      } catch (e) {
        if (!again) {
          client = null;
          await c.end().catch(() => undefined);
          throw e;
        }
        lost(e as Error);
        return;
      }
      if (again) {
        if (reported) this.log("strato platform: hearing other nodes' changes again");
        reported = false;
        onReconnect();
      }
    };
    await guarded(() => connect(false));
    return {
      close: async () => {
        closed = true;
        clearTimeout(retry);
        const c = client;
        client = null;
        await c?.end().catch(() => undefined);
      },
    };
  }

  async query<T>(sql: string, params?: unknown[]): Promise<T[]> {
    return guarded(async () => (await this.pool.query(sql, params)).rows as T[]);
  }

  /** No parameters: the simple protocol, so several statements run as one implicit transaction. */
  async exec(sql: string): Promise<void> {
    await guarded(() => this.pool.query(sql));
  }

  /** The arguments written in: one round trip, one implicit transaction, whichever connection of the pool is free. */
  execNamed(calls: readonly NamedCall[]): Promise<void> {
    return this.exec(calls.map(inlined).join(';\n'));
  }

  transaction<T>(fn: (tx: Pick<SqlDriver, 'query'>) => Promise<T>): Promise<T> {
    return guarded(() => this.inTransaction(fn));
  }

  private async inTransaction<T>(fn: (tx: Pick<SqlDriver, 'query'>) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      const out = await fn({ query: async <R>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[] });
      await client.query('commit');
      return out;
    } catch (e) {
      await client.query('rollback').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
