// Worker logs over real HTTP (`GET /v2/<id>/logs`) from a real platform with real Python workers: what the code
// prints with its level, a failed job's traceback, the tail, the cursor, the long-poll of follow, bad parameters, and
// who may read them (keys that may see the app's secrets; not invoke keys, not another app's keys).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobFailureLines, LogsClient } from '../../engine/src/api/logs';
import { LOG_LIMITS, type WorkerLogPage } from '../../engine/src/protocol/logs';
import { LineSplitter } from '../../engine/src/util/lines';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';

const WORKER = `
import sys


def shout(text="hi", unbroken=0):
    print("said", text)
    print("careful", text, file=sys.stderr)
    if unbroken:
        sys.stdout.write("x" * unbroken)
        sys.stdout.flush()
        sys.stdout.write("\\n")
    return {"text": text}


def fail(message="boom"):
    return helper(message)


def helper(message):
    raise ValueError(message)
`;

let tp: TestPlatform;
let shout: { id: string; url: string };
let lb: { id: string };
let keys: Record<string, string>;
const logsUrl = (id: string, q = '') => `${tp.url}/v2/${id}/logs${q}`;
const page = (r: { json: unknown }) => r.json as WorkerLogPage;

before(async () => {
  tp = await startTestPlatform();
  const art = await buildTestArtifact({ 'worker.py': WORKER, 'lb.py': 'def ping():\n    print("pinged")\n    return {"ok": True}\n' }, [
    { name: 'shout', file: 'worker.py', fn: 'shout' },
    { name: 'failing', file: 'worker.py', fn: 'fail' },
    { name: 'api', file: 'lb.py', fn: 'ping', routes: { 'GET /p': 'ping' } },
  ]);
  const eps = await deploy(tp.cp, art, { app: 'shop' });
  shout = eps.shout;
  lb = eps.api;
  keys = {
    deploy: (await tp.cp.createKey('dana', 'deploy', ['shop'])).secret,
    invoke: (await tp.cp.createKey('ivan', 'invoke', ['shop'])).secret,
    other: (await tp.cp.createKey('olga', 'deploy', ['blog'])).secret,
  };
  const job = await tp.jobs.runsync(shout.id, { text: 'hello' });
  assert.equal(job.status, 'COMPLETED', JSON.stringify(job));
});

after(async () => {
  await tp?.close();
});

describe('reading', () => {
  test('the tail holds what the handler printed, by stream, with levels and the worker that wrote it', async () => {
    // What the worker printed travels on its stdout and stderr pipes, the result on its job channel: the lines may
    // reach the log a moment after the job's answer.
    const r = await waitUntil('the printed lines in the log', async () => {
      const x = await call('GET', logsUrl(shout.id));
      const lines = page(x).lines;
      return x.status === 200 && lines.some((l) => l.text === 'said hello') && lines.some((l) => l.text === 'careful hello') ? x : null;
    });
    const p = page(r);
    const said = p.lines.find((l) => l.text === 'said hello');
    const careful = p.lines.find((l) => l.text === 'careful hello');
    assert.ok(said && careful, r.text);
    assert.deepEqual([said.stream, said.level, careful.stream, careful.level], ['out', 'info', 'err', 'warn']);
    assert.match(said.worker, /^w-/);
    assert.ok(Date.parse(said.time) > Date.now() - 60_000, said.time);
    assert.ok(
      p.lines.some((l) => l.stream === 'err' && l.level === 'info' && l.text.startsWith('strato INFO')),
      'the runtime logs at info',
    );
    // A byte position on the embedded database; each node's on PostgreSQL, where nodes may join (the conformance
    // run, test/platform/postgres.test.ts).
    assert.match(p.cursor, process.env.STRATO_TEST_DATABASE ? /^n[0-9a-z]{10}:\d+(,n[0-9a-z]{10}:\d+)*$/ : /^\d+$/);
  });

  test('tail=N answers the last N lines and says older ones were left out', async () => {
    const all = page(await call('GET', logsUrl(shout.id, '?tail=10000')));
    const two = page(await call('GET', logsUrl(shout.id, '?tail=2')));
    assert.deepEqual(two.lines, all.lines.slice(-2));
    assert.equal(two.truncated, true);
    assert.equal(all.truncated, false);
    assert.equal(two.cursor, all.cursor);
  });

  test('since=<cursor> answers only the lines written after it', async () => {
    const before = page(await call('GET', logsUrl(shout.id)));
    assert.deepEqual(page(await call('GET', logsUrl(shout.id, `?since=${before.cursor}`))).lines, []);
    await tp.jobs.runsync(shout.id, { text: 'again' });
    const after = await waitUntil('the new lines', async () => {
      const p = page(await call('GET', logsUrl(shout.id, `?since=${before.cursor}`)));
      return p.lines.some((l) => l.text === 'said again') ? p : null;
    });
    assert.ok(!after.lines.some((l) => l.text === 'said hello'), 'older lines are not repeated');
  });

  test('wait long-polls: the answer comes when the next line is written, not after the whole wait', async () => {
    const now = page(await call('GET', logsUrl(shout.id)));
    const t0 = Date.now();
    const waiting = call('GET', logsUrl(shout.id, `?since=${now.cursor}&wait=20000`));
    await new Promise((r) => setTimeout(r, 300));
    await tp.jobs.run(shout.id, { text: 'late' });
    const r = await waiting;
    assert.equal(r.status, 200, r.text);
    assert.ok(page(r).lines.length > 0, r.text);
    assert.ok(Date.now() - t0 < 15_000, `answered after ${Date.now() - t0} ms`);
  });

  test('a wait with nothing new answers an empty page with the same cursor when it elapses', async () => {
    const lbNow = page(await call('GET', logsUrl(lb.id)));
    const r = page(await call('GET', logsUrl(lb.id, `?since=${lbNow.cursor}&wait=300`)));
    assert.deepEqual(r, { lines: [], cursor: lbNow.cursor, truncated: false });
  });

  test('the client follows: the tail first, then each new page as it comes', async () => {
    const ac = new AbortController();
    const seen: string[] = [];
    const it = new LogsClient({ baseUrl: tp.url, apiKey: tp.key }).follow(shout.id, { tail: 1, signal: ac.signal, waitMs: 5000 });
    const first = await it.next();
    assert.equal((first.value as WorkerLogPage).lines.length, 1);
    void tp.jobs.run(shout.id, { text: 'followed' });
    for await (const p of { [Symbol.asyncIterator]: () => it }) {
      seen.push(...p.lines.map((l) => l.text));
      if (seen.includes('said followed')) break;
    }
    ac.abort();
    assert.ok(seen.includes('said followed'), seen.join('\n'));
  });

  test('a failed job leaves its traceback, which jobFailureLines finds by the job id', async () => {
    const failing = (await tp.cp.listEndpoints()).find((e) => e.name === 'failing')!;
    const job = await tp.jobs.runsync(failing.id, { message: 'bad thing' });
    assert.equal(job.status, 'FAILED');
    const lines = await waitUntil('the traceback', async () => {
      const l = jobFailureLines(page(await call('GET', logsUrl(failing.id))).lines, job.id);
      // The traceback is written line by line: wait for its last frame, not just its first line.
      return l.some((x) => x.text.includes('ValueError: bad thing')) && l.some((x) => /in helper/.test(x.text)) ? l : null;
    });
    assert.match(lines[0].text, new RegExp(`job ${job.id} failed: ValueError: bad thing`));
    assert.ok(
      lines.every((l) => l.level === 'error'),
      JSON.stringify(lines),
    );
    const text = lines.map((l) => l.text).join('\n');
    assert.match(text, /File ".*worker\.py", line 16, in fail/);
    assert.match(text, /File ".*worker\.py", line 20, in helper/);
  });

  test('a line of megabytes with no newline keeps its start and says what was left out; the job is not held up', async () => {
    const before = page(await call('GET', logsUrl(shout.id)));
    const job = await tp.jobs.runsync(shout.id, { text: 'long', unbroken: 3_000_000 });
    assert.equal(job.status, 'COMPLETED');
    const long = await waitUntil('the long line in the log', async () => {
      const p = page(await call('GET', logsUrl(shout.id, `?since=${before.cursor}`)));
      return p.lines.find((l) => l.text.startsWith('xxx'))?.text;
    });
    assert.equal(long, `${'x'.repeat(LOG_LIMITS.lineChars)} [... ${3_000_000 - LOG_LIMITS.lineChars} more characters of this line left out]`);
  });

  test('load-balanced endpoints have logs too', async () => {
    const r = await call('GET', `${tp.url}/lb/${lb.id}/p`);
    assert.equal(r.status, 200, r.text);
    await waitUntil('the print of the route', async () => page(await call('GET', logsUrl(lb.id))).lines.some((l) => l.text === 'pinged'));
  });
});

describe('lines of output', () => {
  const split = (chunks: string[], max = 10) => {
    const out: string[] = [];
    const s = new LineSplitter((l) => out.push(l), max);
    for (const c of chunks) s.push(c);
    s.flush();
    return out;
  };

  test('lines cut anywhere by the reads come out whole, empty ones too; a last line without a newline at the end', () => {
    assert.deepEqual(split(['ab', 'c\nd', '\n\n', 'ef\ng', 'h']), ['abc', 'd', '', 'ef', 'gh']);
    assert.deepEqual(split(['one\n']), ['one']);
    assert.deepEqual(split([]), []);
  });

  test('a line longer than the bound keeps its start and counts the rest, read in many pieces or one', () => {
    assert.deepEqual(split(['0123456', '789abc', 'def\nok\n']), ['0123456789 [... 6 more characters of this line left out]', 'ok']);
    assert.deepEqual(split(['x'.repeat(25)]), [`${'x'.repeat(10)} [... 15 more characters of this line left out]`]);
  });
});

describe('refusals', () => {
  test('no key: 401; a key of another app: 403 without saying what the app holds', async () => {
    assert.equal((await call('GET', logsUrl(shout.id), { key: null })).status, 401);
    const r = await call('GET', logsUrl(shout.id), { key: keys.other });
    assert.equal(r.status, 403);
    assert.match((r.json as { error: string }).error, /the key "olga" \(deploy: blog\) may not read app "shop"/);
  });

  test('an invoke key of the app may call the endpoint but not read its logs (they may hold inputs and secrets)', async () => {
    assert.equal((await call('GET', `${shout.url}/health`, { key: keys.invoke })).status, 200);
    const r = await call('GET', logsUrl(shout.id), { key: keys.invoke });
    assert.equal(r.status, 403);
    assert.equal(
      (r.json as { error: string }).error,
      `the key "ivan" (invoke: shop) may only call endpoints; reading the logs of endpoint ${shout.id} needs a deploy or admin key`,
    );
  });

  test('a deploy key of the app reads them', async () => {
    const r = await call('GET', logsUrl(shout.id), { key: keys.deploy });
    assert.equal(r.status, 200, r.text);
  });

  test('bad parameters are 400 with the rule; an unknown endpoint is 404', async () => {
    for (const [q, rule] of [
      ['?tail=-1', /tail must be a number of lines from 0 to 10000, got "-1"/],
      ['?tail=10001', /tail must be a number of lines from 0 to 10000/],
      ['?since=x', /since must be the cursor of a previous answer/],
      ['?since=0&wait=60001', /wait must be an integer number of ms from 0 to 60000/],
      ['?wait=100', /wait needs since/],
    ] as const) {
      const r = await call('GET', logsUrl(shout.id, q));
      assert.equal(r.status, 400, q);
      assert.match((r.json as { error: string }).error, rule);
    }
    const posted = await call('POST', logsUrl(shout.id));
    assert.deepEqual([posted.status, posted.headers.get('allow')], [405, 'GET'], 'a known route asked with another method');
    assert.equal((await call('GET', logsUrl('nope'))).status, 404);
  });
});
