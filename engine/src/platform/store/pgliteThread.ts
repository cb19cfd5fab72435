// The thread that runs the embedded database (pglite.ts): PGlite executes each statement synchronously in WebAssembly,
// so on the platform's own thread every group commit stalled the requests and job results behind it (the p90 and p99
// of a warm `/runsync`, bench/platform-jobs.ts). Here it runs beside them. The data dir is made from the template here
// too, so that the platform's thread never loads PGlite at all.
import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, protocol, type Transaction } from '@electric-sql/pglite';
import { DATABASE_THREAD_NAME, nameThisThread } from '../threads';
import type { ThreadAnswer, ThreadCall, ThreadOpen } from './pglite';

const isInitialised = (dir: string) => fs.existsSync(path.join(dir, 'PG_VERSION'));
const log = (line: string) => parentPort!.postMessage({ log: line } satisfies ThreadAnswer);

async function open({ dir, templateDir }: ThreadOpen): Promise<PGlite> {
  let fromTemplate = false;
  if (!isInitialised(dir) && templateDir) {
    try {
      await ensureTemplate(templateDir);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.cpSync(templateDir, dir, { recursive: true });
      fromTemplate = true;
    } catch (e) {
      log(`strato platform: database template unusable (${(e as Error).message}); initialising directly`);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  fs.mkdirSync(dir, { recursive: true });
  try {
    return await PGlite.create({ dataDir: dir });
  } catch (e) {
    if (!fromTemplate || !templateDir) throw e;
    // A template from another PGlite version: drop it and initialise this data dir directly.
    log(`strato platform: the database template does not open (${(e as Error).message}); recreating it`);
    fs.rmSync(templateDir, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    return PGlite.create({ dataDir: dir });
  }
}

/** Creates the template once: initdb into a private dir, then an atomic rename (a racing process just loses). */
async function ensureTemplate(templateDir: string): Promise<void> {
  if (isInitialised(templateDir)) return;
  fs.mkdirSync(path.dirname(templateDir), { recursive: true });
  const tmp = `${templateDir}.tmp-${process.pid}-${Date.now()}`;
  log('strato platform: initialising the database template (once per machine, a few seconds)');
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

/** An error as plain data: its message and PostgreSQL's fields (code, detail, ...) cross to the platform's thread. */
function plain(e: unknown): Record<string, unknown> {
  if (!(e instanceof Error)) return { message: String(e) };
  const out: Record<string, unknown> = { message: e.message };
  for (const [k, v] of Object.entries(e)) if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) out[k] = v;
  return out;
}

/**
 * Runs statements whose rows nobody reads (the group commit of jobs, migrations): one simple-protocol Query message, as
 * `db.exec` sends it, taking the same two locks. `exec` also sends a Sync after every query, checks for COPY blobs
 * and turns the answer into result sets (copying its 316 type parsers into a new object each time): a one-row insert
 * cost 430-500 µs that way, 203-214 this way. The Sync is sent only after an error, where it ends what the error left
 * open.
 */
function execStatements(db: PGlite, sql: string): Promise<void> {
  return db._runExclusiveTransaction(() =>
    db.runExclusive(async () => {
      try {
        await db.execProtocol(protocol.serialize.query(sql));
      } catch (e) {
        await db.execProtocol(protocol.serialize.sync(), { throwOnError: false });
        throw e;
      }
    }),
  );
}

/** Open transactions: their handle, how the platform ends them, and the call that ended them (answered once done). */
const transactions = new Map<number, { tx: Transaction; end: (commit: boolean) => void; endCall?: number }>();
let nextTx = 1;
const ROLLBACK = Symbol('rollback');

function serve(db: PGlite): void {
  const answer = (m: ThreadAnswer) => parentPort!.postMessage(m);
  const settle = (id: number, work: Promise<unknown>) =>
    work.then(
      (rows) => answer({ id, rows: rows as unknown[] | undefined }),
      (e: unknown) => answer({ id, error: plain(e) }),
    );
  parentPort!.on('message', (c: ThreadCall) => {
    switch (c.op) {
      case 'query': {
        const on = c.tx === undefined ? db : transactions.get(c.tx)?.tx;
        if (!on) return answer({ id: c.id, error: { message: `transaction ${c.tx} is not open` } });
        return void settle(
          c.id,
          on.query(c.sql, c.params).then((r) => r.rows),
        );
      }
      case 'exec':
        return void settle(c.id, execStatements(db, c.sql));
      case 'begin': {
        // The transaction's body waits here until the platform ends it; PGlite runs nothing else meanwhile.
        const txId = nextTx++;
        let began = false;
        const finished = (e: unknown) => {
          const endCall = transactions.get(txId)?.endCall;
          transactions.delete(txId);
          if (!began) answer({ id: c.id, error: plain(e) });
          else if (endCall !== undefined) answer(e === null ? { id: endCall } : { id: endCall, error: plain(e) });
        };
        db.transaction(async (tx) => {
          const commit = await new Promise<boolean>((end) => {
            transactions.set(txId, { tx, end });
            began = true;
            answer({ id: c.id, rows: [txId] });
          });
          if (!commit) throw ROLLBACK;
        }).then(
          () => finished(null),
          (e: unknown) => finished(e === ROLLBACK ? null : e),
        );
        return;
      }
      case 'end': {
        const t = transactions.get(c.tx);
        if (!t) return answer({ id: c.id, error: { message: `transaction ${c.tx} is not open` } });
        t.endCall = c.id;
        return t.end(c.commit);
      }
      case 'close':
        return void settle(
          c.id,
          db.close().then(() => undefined),
        ).then(() => parentPort!.close());
    }
  });
}

nameThisThread(DATABASE_THREAD_NAME);
void open(workerData as ThreadOpen).then(
  (db) => {
    serve(db);
    parentPort!.postMessage({ ready: true } satisfies ThreadAnswer);
  },
  (e: unknown) => parentPort!.postMessage({ failed: plain(e) } satisfies ThreadAnswer),
);
