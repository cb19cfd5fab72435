// The embedded database: PGlite (PostgreSQL compiled to WebAssembly) on a file-backed data dir, run on a thread of its
// own (pgliteThread.ts) so that its statements never stall the platform's requests. A new data dir costs an initdb of
// several seconds, so it is done once per machine into a template that later data dirs copy (a few hundred ms).
// Durability: PGlite writes WAL with plain write(2) before COMMIT returns, so a committed transaction survives a crash
// or SIGKILL of the process; its file system layer does not forward fsync, so it is not guaranteed across a power loss
// or kernel crash.
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startThread } from '../threads';
import { executeSql, prepareSql, type NamedCall } from './namedStatements';
import { refusedText } from './storableText';
import type { SqlDriver } from './types';

export interface PgliteOpenOptions {
  /** Pre-initialised data dir to copy from; created on first use. */
  templateDir?: string;
  log?: (line: string) => void;
}

export function defaultTemplateDir(dataRoot: string): string {
  return process.env.STRATO_PGLITE_TEMPLATE ? path.resolve(process.env.STRATO_PGLITE_TEMPLATE) : path.join(dataRoot, 'cache', 'pglite-template-v1');
}

/** What the database thread is started with. */
export interface ThreadOpen {
  dir: string;
  templateDir?: string;
}
type CallBody =
  | { op: 'query'; sql: string; params?: unknown[]; tx?: number }
  | { op: 'exec'; sql: string }
  | { op: 'begin' }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'close' };
/** A call to the database thread; `id` names its answer. */
export type ThreadCall = { id: number } & CallBody;
/** The thread's messages: an answer to a call, a log line, and once at start whether the database opened. */
export type ThreadAnswer =
  { id: number; rows?: unknown[]; error?: Record<string, unknown> } | { log: string } | { ready: true } | { failed: Record<string, unknown> };

/** The database's error as the thread sent it: PostgreSQL's message, with its fields (code, detail...) kept. */
function rebuilt(fields: Record<string, unknown>): Error {
  return Object.assign(new Error(String(fields.message)), fields);
}

/** Opens the data dir `dir` (from the template when it is new) on the database thread (pgliteThread.ts). */
export function openPglite(dir: string, opts: PgliteOpenOptions = {}): Promise<SqlDriver> {
  return new Promise((resolve, reject) => {
    const thread = startThread('pglite-thread', 'store/pgliteThread.ts', { dir, templateDir: opts.templateDir } satisfies ThreadOpen);
    const driver = new PgliteDriver(thread);
    thread.on('message', (m: ThreadAnswer) => {
      if ('id' in m) driver.answered(m);
      else if ('log' in m) opts.log?.(m.log);
      else if ('ready' in m) {
        thread.unref(); // until a call waits
        resolve(driver);
      } else {
        reject(rebuilt(m.failed));
        driver.stopped(String(m.failed.message));
        void thread.terminate();
      }
    });
    const gone = (why: string) => {
      reject(new Error(why));
      if (driver.stopped(why)) opts.log?.(`strato platform: ${why}; the platform cannot read or write its state until it is restarted`);
    };
    thread.on('error', (e) => gone(`the embedded database's thread failed: ${e.message}`));
    thread.on('exit', (code) => gone(`the embedded database's thread stopped (exit code ${code})`));
  });
}

/**
 * The embedded database, seen from the platform's thread: each call is a message to the database thread, answered by
 * its id. The thread holds the process open only while a call waits for its answer.
 */
class PgliteDriver implements SqlDriver {
  readonly vacuumsItself = false;
  private waiting = new Map<number, { resolve: (rows: unknown[] | undefined) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private down: string | null = null;

  constructor(private readonly thread: Worker) {}

  private call(c: CallBody): Promise<unknown[] | undefined> {
    if (this.down) return Promise.reject(new Error(this.down));
    const id = this.nextId++;
    if (this.waiting.size === 0) this.thread.ref();
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.thread.postMessage({ ...c, id } as ThreadCall);
    });
  }

  answered(m: { id: number; rows?: unknown[]; error?: Record<string, unknown> }): void {
    const w = this.waiting.get(m.id);
    if (!w) return;
    this.waiting.delete(m.id);
    if (this.waiting.size === 0) this.thread.unref();
    if (m.error) w.reject(refusedText(m.error) ?? rebuilt(m.error));
    else w.resolve(m.rows);
  }

  /** The thread is gone: every call waiting and every later one fails with why. True when it was not closed. */
  stopped(why: string): boolean {
    const unexpected = this.down === null;
    this.down ??= why;
    for (const w of this.waiting.values()) w.reject(new Error(why));
    this.waiting.clear();
    return unexpected;
  }

  async query<T>(sql: string, params?: unknown[]): Promise<T[]> {
    return ((await this.call({ op: 'query', sql, params })) ?? []) as T[];
  }

  async exec(sql: string): Promise<void> {
    await this.call({ op: 'exec', sql });
  }

  /** Statements prepared in the database's one session, each once: a later call waits for it, a failed one is tried again. */
  private prepared = new Map<string, Promise<void>>();

  /** Each statement planned once (PREPARE), then the calls as one Query message of EXECUTEs: one implicit transaction. */
  async execNamed(calls: readonly NamedCall[]): Promise<void> {
    for (const { statement } of calls) {
      let ready = this.prepared.get(statement.name);
      if (!ready) {
        ready = this.exec(prepareSql(statement));
        this.prepared.set(statement.name, ready);
        ready.catch(() => this.prepared.delete(statement.name));
      }
      await ready;
    }
    await this.exec(calls.map(executeSql).join(';\n'));
  }

  async transaction<T>(fn: (tx: Pick<SqlDriver, 'query'>) => Promise<T>): Promise<T> {
    const [tx] = (await this.call({ op: 'begin' })) as [number];
    let result: T;
    try {
      result = await fn({ query: async <R>(sql: string, params?: unknown[]) => ((await this.call({ op: 'query', sql, params, tx })) ?? []) as R[] });
    } catch (e) {
      await this.call({ op: 'end', tx, commit: false }).catch(() => undefined);
      throw e;
    }
    await this.call({ op: 'end', tx, commit: true });
    return result;
  }

  async close(): Promise<void> {
    if (this.down) return;
    await this.call({ op: 'close' });
    this.down = 'the embedded database is closed';
    await this.thread.terminate();
  }
}
