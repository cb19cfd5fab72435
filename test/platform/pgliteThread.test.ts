// The embedded database on its own thread (store/pglite.ts, pgliteThread.ts): transactions commit and roll back across
// the thread boundary, statements sent together commit together and wait for an open transaction, PostgreSQL's errors
// arrive with their fields, the platform's event loop keeps turning while a
// statement runs, a process whose database is idle exits by itself while one waiting for an answer gets it, and calls
// after a close fail with a sentence.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NamedStatement } from '../../engine/src/platform/store/namedStatements';
import { openPglite } from '../../engine/src/platform/store/pglite';
import { DATABASE_THREAD_NAME } from '../../engine/src/platform/threads';
import { REPO } from '../helpers/cli';
import { TEMPLATE_DIR } from '../helpers/platform';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-pglite-thread-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('a transaction commits all its statements or, when one fails, none; the error keeps PostgreSQL fields', async () => {
  const db = await openPglite(path.join(tmp, 'tx'), { templateDir: TEMPLATE_DIR });
  try {
    await db.exec('create table t (id integer primary key, v text)');
    const result = await db.transaction(async (tx) => {
      await tx.query('insert into t values ($1, $2)', [1, 'one']);
      await tx.query('insert into t values ($1, $2)', [2, 'two']);
      return (await tx.query<{ n: number }>('select count(*)::int as n from t'))[0].n;
    });
    assert.equal(result, 2, 'the transaction sees its own rows');

    const failed = await db
      .transaction(async (tx) => {
        await tx.query('insert into t values ($1, $2)', [3, 'three']);
        await tx.query('insert into t values ($1, $2)', [1, 'again']); // the primary key refuses it
      })
      .then(
        () => null,
        (e: Error & { code?: string }) => e,
      );
    assert.ok(failed, 'the transaction failed');
    assert.match(failed.message, /duplicate key value violates unique constraint/);
    assert.equal(failed.code, '23505');

    // The failed transaction left nothing behind; one the caller's own code throws in is rolled back too.
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('insert into t values ($1, $2)', [4, 'four']);
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.deepEqual(await db.query('select id, v from t order by id'), [
      { id: 1, v: 'one' },
      { id: 2, v: 'two' },
    ]);
    await assert.rejects(db.query('select * from missing_table'), (e: Error & { code?: string }) => e.code === '42P01' && /missing_table/.test(e.message));
  } finally {
    await db.close();
  }
  await assert.rejects(db.query('select 1'), /the embedded database is closed/);
});

test('statements sent together (exec) commit together or not at all, and wait for a transaction that is open', async () => {
  const db = await openPglite(path.join(tmp, 'exec'), { templateDir: TEMPLATE_DIR });
  try {
    await db.exec('create table t (id integer primary key, v text)');
    await db.exec(`insert into t values (1, 'one'); insert into t values (2, 'two')`);
    // The second statement fails: the first is undone with it, and PostgreSQL's fields arrive.
    const failed = await db.exec(`insert into t values (3, 'three'); insert into t values (1, 'again')`).then(
      () => null,
      (e: Error & { code?: string; detail?: string }) => e,
    );
    assert.ok(failed, 'the statements failed');
    assert.equal(failed.code, '23505');
    assert.match(failed.detail ?? '', /\(id\)=\(1\) already exists/);
    await assert.rejects(db.exec('selec 1'), (e: Error & { code?: string }) => e.code === '42601' && /syntax error/.test(e.message));

    // While a transaction is open, statements sent with exec wait for its end: they never run inside it.
    const order: string[] = [];
    const tx = db.transaction(async (t) => {
      await t.query(`insert into t values (10, 'in the transaction')`);
      await new Promise((r) => setTimeout(r, 200));
      order.push('transaction');
      throw new Error('rolled back');
    });
    await new Promise((r) => setTimeout(r, 20));
    const exec = db.exec(`insert into t values (11, 'after it')`).then(() => order.push('exec'));
    await assert.rejects(tx, /rolled back/);
    await exec;
    assert.deepEqual(order, ['transaction', 'exec']);
    assert.deepEqual(await db.query('select id from t order by id'), [{ id: 1 }, { id: 2 }, { id: 11 }]);
  } finally {
    await db.close();
  }
});

test('named statements are prepared once in the session, and the calls of one batch commit together or not at all', async () => {
  const db = await openPglite(path.join(tmp, 'named-statements'), { templateDir: TEMPLATE_DIR });
  const put: NamedStatement = { name: 'test_put', types: ['json'], sql: `insert into t select * from json_populate_recordset(null::t, $1)` };
  const drop: NamedStatement = { name: 'test_drop', types: ['int'], sql: `delete from t where id = $1` };
  const prepared = async () => (await db.query<{ name: string }>('select name from pg_prepared_statements order by name')).map((r) => r.name);
  try {
    await db.exec('create table t (id integer primary key, v text)');
    await db.execNamed([
      {
        statement: put,
        args: [
          JSON.stringify([
            { id: 1, v: "it's one" },
            { id: 2, v: 'two' },
          ]),
        ],
      },
    ]);
    await db.execNamed([
      { statement: put, args: [JSON.stringify([{ id: 3, v: 'three' }])] },
      { statement: drop, args: ['2'] },
    ]);
    assert.deepEqual(await prepared(), ['test_drop', 'test_put'], 'each statement prepared once, and kept');
    // The second call fails (id 1 exists): the first, in the same batch, is undone with it.
    await assert.rejects(
      db.execNamed([
        { statement: drop, args: ['3'] },
        { statement: put, args: [JSON.stringify([{ id: 1, v: 'again' }])] },
      ]),
      (e: Error & { code?: string }) => e.code === '23505',
    );
    assert.deepEqual(await db.query('select id, v from t order by id'), [
      { id: 1, v: "it's one" },
      { id: 3, v: 'three' },
    ]);
    // A statement that cannot be prepared fails its batch, and is tried again by the next (here: once its table exists).
    const late: NamedStatement = { name: 'test_late', types: ['int'], sql: 'insert into later values ($1)' };
    await assert.rejects(db.execNamed([{ statement: late, args: ['1'] }]), /relation "later" does not exist/);
    await db.exec('create table later (id integer)');
    await db.execNamed([{ statement: late, args: ['7'] }]);
    assert.deepEqual(await db.query('select id from later'), [{ id: 7 }]);
  } finally {
    await db.close();
  }
});

test('the database thread is named for top -H and ps -L (Linux)', { skip: !fs.existsSync('/proc/self/task') }, async () => {
  // A thread can end between the listing and the read (a closed database's thread among them): it has no name then.
  const names = () =>
    fs.readdirSync('/proc/self/task').flatMap((t) => {
      try {
        return [fs.readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim()];
      } catch {
        return [];
      }
    });
  // The databases the tests above closed have ended their threads, or do so within moments.
  for (let tries = 0; names().includes(DATABASE_THREAD_NAME) && tries < 100; tries++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(!names().includes(DATABASE_THREAD_NAME), `threads: ${names().join(', ')}`);
  const db = await openPglite(path.join(tmp, 'named'), { templateDir: TEMPLATE_DIR });
  try {
    assert.ok(names().includes(DATABASE_THREAD_NAME), `threads: ${names().join(', ')}`);
  } finally {
    await db.close();
  }
});

test("the platform's event loop keeps turning while a statement runs on the database's thread", async () => {
  const db = await openPglite(path.join(tmp, 'busy'), { templateDir: TEMPLATE_DIR });
  try {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = Date.now();
    const [{ n }] = await db.query<{ n: number }>('select count(*)::int as n from generate_series(1, 3000000) a, generate_series(1, 2) b');
    const took = Date.now() - started;
    clearInterval(timer);
    assert.equal(n, 6_000_000);
    // On the platform's own thread, the statement would have run with no tick at all.
    assert.ok(took < 100 || ticks >= 3, `the loop ticked ${ticks} times during a ${took} ms statement`);
  } finally {
    await db.close();
  }
});

test('a process whose database waits for nothing exits by itself; one waiting for an answer gets it first', () => {
  const script = `
    const { openPglite } = require(${JSON.stringify(path.join(REPO, 'engine/src/platform/store/pglite.ts'))});
    openPglite(${JSON.stringify(path.join(tmp, 'exit'))}, { templateDir: ${JSON.stringify(TEMPLATE_DIR)} })
      .then((db) => db.query('select 40 + 2 as answer'))
      .then((rows) => console.log('answer', rows[0].answer));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.signal, null, `the process did not exit by itself: ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^answer 42$/m);
});
