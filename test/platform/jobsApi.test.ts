// Conformance of the jobs API over real HTTP against a real platform with real Python workers: every route,
// the state transitions of the spec, error codes and bodies of decisions.md, auth forms, payload limits,
// `wait` and `ttl`, retention expiry (with an injected clock), cancel, retry, purge and health.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../engine/src/platform/clock';
import { jsonDepth } from '../../engine/src/util/jsonText';
import { limits } from '../../engine/src/platform/options';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, TEST_KEY, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';

const clock = new ManualClock();
let tp: TestPlatform;
let url: Record<string, string>;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-jobs-'));

before(async () => {
  tp = await startTestPlatform({ clock });
  const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
    queueSpec('echo', 'echo', { workers: [0, 2] }),
    queueSpec('fail', 'fail', { workers: [0, 1] }),
    queueSpec('afail', 'afail', { isAsync: true, workers: [0, 1] }),
    queueSpec('faildict', 'fail_dict'),
    queueSpec('sleeper', 'sleep', { workers: [0, 1] }),
    queueSpec('asleeper', 'asleep', { isAsync: true, workers: [0, 1] }),
    queueSpec('limited', 'sleep', { executionTimeoutMs: 1000 }),
    queueSpec('noop', 'noop', { workers: [1, 1] }),
  ]);
  const eps = await deploy(tp.cp, art);
  url = Object.fromEntries(Object.entries(eps).map(([k, v]) => [k, v.url]));
});

after(async () => {
  await tp?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

// The suffix names the node that accepted the job: `u1` on the embedded database, a node id on PostgreSQL (conformance run).
const JOB_ID = process.env.STRATO_TEST_DATABASE
  ? /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-n[0-9a-z]{10}$/
  : /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-u1$/;

async function finished(u: string, id: string, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  // A job that exists answers /status with itself at every look: an error on the way (through any node) fails the test.
  const odd: string[] = [];
  const end = await explained(
    u,
    waitUntil(
      `job ${id} to end`,
      async () => {
        const r = await call('GET', `${u}/status/${id}`);
        if (r.status !== 200) odd.push(`${r.status} ${r.text.slice(0, 300)}`);
        const j = r.json as Record<string, unknown>;
        return r.status === 200 && !['IN_QUEUE', 'IN_PROGRESS'].includes(String(j.status)) ? j : null;
      },
      timeoutMs,
    ),
  );
  assert.deepEqual(odd, [], `GET /status/${id} answered an error on the way`);
  return end;
}

/** Waits until the job runs (IN_PROGRESS). */
function started(u: string, id: string, what = 'the job to start'): Promise<boolean> {
  return explained(
    u,
    waitUntil(what, async () => ((await call('GET', `${u}/status/${id}`)).json as { status: string }).status === 'IN_PROGRESS'),
  );
}

/** A wait that times out says more: the endpoint's health and the platform's last log lines (a rare CI failure said only "timed out"). */
async function explained<T>(u: string, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (e) {
    const health = await call('GET', `${u}/health`).then(
      (r) => r.text,
      (x: Error) => x.message,
    );
    throw new Error(`${(e as Error).message}\nhealth: ${health}\nplatform log, last lines:\n${tp.logs.slice(-20).join('\n')}`, { cause: e });
  }
}

describe('authentication', () => {
  test('a missing key is refused with 401 and an error body', async () => {
    const r = await call('POST', `${url.echo}/run`, { key: null, body: { input: {} } });
    assert.equal(r.status, 401);
    assert.match((r.json as { error: string }).error, /API key/);
  });
  test('a wrong key is refused with 401', async () => {
    assert.equal((await call('GET', `${url.echo}/health`, { key: 'nope' })).status, 401);
    assert.equal((await call('GET', `${url.echo}/health`, { auth: 'Basic dXNlcjpwdw==' })).status, 401);
  });
  test('Bearer and bare keys are both accepted', async () => {
    assert.equal((await call('GET', `${url.echo}/health`, { auth: `Bearer ${TEST_KEY}` })).status, 200);
    assert.equal((await call('GET', `${url.echo}/health`, { auth: TEST_KEY })).status, 200);
  });
});

describe('run and status', () => {
  test('/run answers {id, status: IN_QUEUE}; status ends COMPLETED with the output and timings', async () => {
    const r = await call('POST', `${url.echo}/run`, { body: { input: { a: 1, b: 'x' } } });
    assert.equal(r.status, 200);
    const { id, status } = r.json as { id: string; status: string };
    assert.match(id, JOB_ID);
    assert.equal(status, 'IN_QUEUE');
    assert.deepEqual(Object.keys(r.json as object), ['id', 'status']);
    const job = await finished(url.echo, id);
    assert.equal(job.status, 'COMPLETED');
    assert.deepEqual(job.output, { echo: { a: 1, b: 'x' } });
    assert.equal(job.id, id);
    assert.ok(Number.isInteger(job.delayTime) && Number.isInteger(job.executionTime));
  });

  test('/runsync answers the finished job object with a sync- id', async () => {
    const r = await call('POST', `${url.echo}/runsync`, { body: { input: { n: 2 } } });
    assert.equal(r.status, 200);
    const job = r.json as Record<string, unknown>;
    assert.deepEqual(Object.keys(job), ['delayTime', 'executionTime', 'id', 'output', 'status']);
    assert.equal(job.status, 'COMPLETED');
    assert.match(String(job.id), /^sync-/);
    assert.deepEqual(job.output, { echo: { n: 2 } });
  });

  test('a handler exception fails the job with "Type: message"; an {"error"} result too', async () => {
    const r = await call('POST', `${url.fail}/runsync`, { body: { input: { message: 'no good' } } });
    const job = r.json as Record<string, unknown>;
    assert.equal(job.status, 'FAILED');
    assert.equal(job.error, 'ValueError: no good');
    assert.equal(job.output, undefined);
    const d = (await call('POST', `${url.faildict}/runsync`, { body: { input: {} } })).json as Record<string, unknown>;
    assert.equal(d.status, 'FAILED');
    assert.equal(d.error, 'bad input');
  });

  test('KeyboardInterrupt or another BaseException from a handler fails its job at once; the one worker goes on (sync and async)', async () => {
    for (const ep of [url.fail, url.afail]) {
      // One worker of one slot: a slot lost to the exception would keep every later job queued until the timeout.
      for (const [kind, error] of [
        ['interrupt', 'KeyboardInterrupt: stop'],
        ['base', 'Interrupted: stop'],
        ['value', 'ValueError: stop'],
      ]) {
        const r = await call('POST', `${ep}/runsync`, { body: { input: { message: 'stop', kind } }, timeoutMs: 30_000 });
        const job = r.json as Record<string, unknown>;
        assert.deepEqual([job.status, job.error], ['FAILED', error], `${ep} ${kind}: ${r.text}`);
      }
    }
  });

  test('an output with a lone surrogate comes back as its JSON escape, not as U+FFFD; other text as UTF-8', async () => {
    const r = await call('POST', `${url.echo}/runsync`, { raw: '{"input": {"s": "a\\ud800b", "t": "日本"}}' });
    assert.equal(r.status, 200, r.text);
    assert.match(r.text, /"output":\{"echo":\{"s":"a\\ud800b","t":"日本"\}\}/);
  });

  test('a body nested deeper than a worker can decode is 400; one just under the bound runs', async () => {
    const nested = (depth: number) => `{"input": {"d": ${'['.repeat(depth - 2)}${']'.repeat(depth - 2)}}}`;
    const deep = await call('POST', `${url.echo}/runsync`, { raw: nested(limits.inputDepthMax + 1) });
    assert.equal(deep.status, 400, deep.text);
    assert.match(deep.text, new RegExp(`nests arrays and objects more than ${limits.inputDepthMax} levels deep`));
    const under = await call('POST', `${url.echo}/runsync`, { raw: nested(limits.inputDepthMax), timeoutMs: 30_000 });
    assert.equal((under.json as { status: string }).status, 'COMPLETED', under.text.slice(0, 300));
    assert.equal(jsonDepth(JSON.stringify({ a: '[[[{{{', b: [['\\"]]']] })), 3, 'brackets in strings, escaped quotes too, do not count');
  });

  test('malformed bodies are 400 with an error that says what to send', async () => {
    for (const raw of ['{nope', '[]', '{"inpt": {}}', '{"input": 3}', '{"input": [1]}', '']) {
      const r = await call('POST', `${url.echo}/run`, { raw });
      assert.equal(r.status, 400, raw);
      assert.equal(typeof (r.json as { error: string }).error, 'string');
    }
  });

  test('unknown endpoint, route and job are 404; a known route asked with another method is 405 naming the one it takes', async () => {
    assert.equal((await call('POST', `${tp.url}/v2/nosuchendpoint/run`, { body: { input: {} } })).status, 404);
    assert.equal((await call('POST', `${url.echo}/walk`, { body: { input: {} } })).status, 404);
    const wrong = await call('GET', `${url.echo}/run`);
    assert.deepEqual([wrong.status, wrong.headers.get('allow'), wrong.json], [405, 'POST', { error: 'run takes POST, not GET' }]);
    const logs = await call('POST', `${url.echo}/logs`, { body: {} });
    assert.deepEqual([logs.status, logs.headers.get('allow')], [405, 'GET']);
    // Names every object inherits are no routes (they were answered 405 "takes function Object() { [native code] }").
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) assert.equal((await call('GET', `${url.echo}/${name}`)).status, 404, name);
    const r = await call('GET', `${url.echo}/status/00000000-0000-4000-8000-000000000000-u1`);
    assert.equal(r.status, 404);
    assert.match((r.json as { error: string }).error, /does not exist|expired/);
  });
});

describe('runsync wait', () => {
  test('wait outside 1000..300000 or not an integer is 400', async () => {
    for (const w of ['999', '300001', 'abc', '1.5', '']) {
      const r = await call('POST', `${url.echo}/runsync?wait=${w}`, { body: { input: {} } });
      assert.equal(r.status, 400, `wait=${w}`);
    }
  });
  test('when wait elapses first, the job comes back as it is and /status follows it to the end', async () => {
    const started = Date.now();
    const r = await call('POST', `${url.sleeper}/runsync?wait=1000`, { body: { input: { seconds: 2.5 } } });
    const waited = Date.now() - started;
    assert.equal(r.status, 200);
    const job = r.json as { id: string; status: string };
    assert.ok(['IN_QUEUE', 'IN_PROGRESS'].includes(job.status), job.status);
    assert.ok(waited >= 900 && waited < 2400, `waited ${waited} ms`);
    const end = await finished(url.sleeper, job.id);
    assert.equal(end.status, 'COMPLETED');
  });
});

describe('payload limits', () => {
  const body = (bytes: number) => {
    const head = '{"input":{"s":"';
    const tail = '"}}';
    return head + 'a'.repeat(bytes - head.length - tail.length) + tail;
  };
  test('/run takes 10 MB and refuses more with 413', async () => {
    const ok = await call('POST', `${url.noop}/run`, { raw: body(10 * 1024 * 1024) });
    assert.equal(ok.status, 200);
    const big = await call('POST', `${url.noop}/run`, { raw: body(10 * 1024 * 1024 + 1) });
    assert.equal(big.status, 413);
    assert.match((big.json as { error: string }).error, /10 MB/);
    assert.equal((await finished(url.noop, (ok.json as { id: string }).id)).status, 'COMPLETED');
  });
  test('/runsync takes 20 MB and refuses more with 413', async () => {
    const ok = await call('POST', `${url.noop}/runsync`, { raw: body(20 * 1024 * 1024), timeoutMs: 60_000 });
    assert.equal(ok.status, 200);
    assert.equal((ok.json as { status: string }).status, 'COMPLETED');
    const big = await call('POST', `${url.noop}/runsync`, { raw: body(20 * 1024 * 1024 + 1) });
    assert.equal(big.status, 413);
  });
});

describe('cancel, retry, purge', () => {
  test('a queued job is cancelled at once and never runs', async () => {
    const marker = path.join(tmp, 'queued-cancel');
    const gate = path.join(tmp, 'queued-cancel-gate');
    // The one worker busy first, until the test lets it go (a job of a fixed length could end before a loaded machine
    // saw it running): through several nodes, an idle worker elsewhere may take either job first.
    const first = (await call('POST', `${url.sleeper}/run`, { body: { input: { seconds: 60, until: gate } } })).json as { id: string };
    await started(url.sleeper, first.id, 'the first job to start');
    const second = (await call('POST', `${url.sleeper}/run`, { body: { input: { seconds: 0.1, marker } } })).json as { id: string };
    const s = (await call('GET', `${url.sleeper}/status/${second.id}`)).json as { status: string };
    assert.equal(s.status, 'IN_QUEUE');
    const c = await call('POST', `${url.sleeper}/cancel/${second.id}`);
    assert.equal(c.status, 200);
    assert.deepEqual(c.json, { id: second.id, status: 'CANCELLED' });
    assert.equal(((await call('GET', `${url.sleeper}/status/${second.id}`)).json as { status: string }).status, 'CANCELLED');
    fs.writeFileSync(gate, '');
    await finished(url.sleeper, first.id);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(fs.existsSync(marker), false, 'the cancelled job ran');
    const again = await call('POST', `${url.sleeper}/cancel/${second.id}`);
    assert.equal(again.status, 409);
  });

  test('cancelling a running synchronous job stops its handler', async () => {
    const marker = path.join(tmp, 'running-sync-cancel');
    const gate = path.join(tmp, 'running-sync-cancel-gate');
    // Held until the gate opens: seen running however loaded the machine; opened after the cancel, a handler that went
    // on would write its marker.
    const { id } = (await call('POST', `${url.sleeper}/run`, { body: { input: { seconds: 60, until: gate, marker } } })).json as { id: string };
    await started(url.sleeper, id);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual((await call('POST', `${url.sleeper}/cancel/${id}`)).json, { id, status: 'CANCELLED' });
    await new Promise((r) => setTimeout(r, 2000));
    fs.writeFileSync(gate, '');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(fs.existsSync(marker), false, 'the handler went on after the cancel');
    assert.equal(((await call('GET', `${url.sleeper}/status/${id}`)).json as { status: string }).status, 'CANCELLED');
    // The endpoint keeps working.
    const next = (await call('POST', `${url.sleeper}/runsync`, { body: { input: { seconds: 0 } } })).json as { status: string };
    assert.equal(next.status, 'COMPLETED');
  });

  test('cancelling a running async job cancels its task', async () => {
    const marker = path.join(tmp, 'running-async-cancel');
    const gate = path.join(tmp, 'running-async-cancel-gate');
    const { id } = (await call('POST', `${url.asleeper}/run`, { body: { input: { seconds: 60, until: gate, marker } } })).json as { id: string };
    await started(url.asleeper, id);
    assert.equal((await call('POST', `${url.asleeper}/cancel/${id}`)).status, 200);
    await new Promise((r) => setTimeout(r, 1000));
    fs.writeFileSync(gate, ''); // a task that was not cancelled would go on now and write its marker
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(fs.existsSync(marker), false, 'the task went on after the cancel');
  });

  test('an execution over execution_timeout_ms ends TIMED_OUT, and retry runs it again', async () => {
    const { id } = (await call('POST', `${url.limited}/run`, { body: { input: { seconds: 5 } } })).json as { id: string };
    const job = await finished(url.limited, id, 10_000);
    assert.equal(job.status, 'TIMED_OUT');
    assert.match(String(job.error), /execution timeout of 1000 ms/);
    const r = await call('POST', `${url.limited}/retry/${id}`);
    assert.deepEqual(r.json, { id, status: 'IN_QUEUE' });
    assert.equal((await finished(url.limited, id, 10_000)).status, 'TIMED_OUT');
  });

  test('retry works on FAILED jobs only: same id, original input, previous result removed', async () => {
    const { id } = (await call('POST', `${url.fail}/run`, { body: { input: { message: 'first' } } })).json as { id: string };
    assert.equal((await finished(url.fail, id)).status, 'FAILED');
    const before = ((await call('GET', `${url.fail}/health`)).json as { jobs: { retried: number } }).jobs.retried;
    const r = await call('POST', `${url.fail}/retry/${id}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { id, status: 'IN_QUEUE' });
    const s = (await call('GET', `${url.fail}/status/${id}`)).json as Record<string, unknown>;
    assert.ok(['IN_QUEUE', 'IN_PROGRESS', 'FAILED'].includes(String(s.status)));
    const again = await finished(url.fail, id);
    assert.equal(again.error, 'ValueError: first');
    const h = (await call('GET', `${url.fail}/health`)).json as { jobs: { retried: number } };
    assert.equal(h.jobs.retried, before + 1);
    const done = (await call('POST', `${url.echo}/runsync`, { body: { input: {} } })).json as { id: string };
    const refused = await call('POST', `${url.echo}/retry/${done.id}`);
    assert.equal(refused.status, 409);
    assert.match((refused.json as { error: string }).error, /COMPLETED/);
    assert.equal((await call('POST', `${url.echo}/retry/nope-u1`)).status, 404);
  });

  test('purge-queue removes queued jobs; the running one continues', async () => {
    const running = (await call('POST', `${url.sleeper}/run`, { body: { input: { seconds: 1 } } })).json as { id: string };
    await started(url.sleeper, running.id, 'the first job to start');
    const queued: string[] = [];
    for (let i = 0; i < 3; i++) queued.push(((await call('POST', `${url.sleeper}/run`, { body: { input: { seconds: 0 } } })).json as { id: string }).id);
    const r = await call('POST', `${url.sleeper}/purge-queue`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { removed: 3, status: 'completed' });
    for (const id of queued) assert.equal((await call('GET', `${url.sleeper}/status/${id}`)).status, 404);
    assert.equal((await finished(url.sleeper, running.id)).status, 'COMPLETED');
  });
});

describe('load shedding', () => {
  test('/run answers 429 when the endpoint queue is full', async () => {
    const small = await startTestPlatform({ maxQueuedPerEndpoint: 2 });
    try {
      // One worker at most, busy for a minute with whichever job it takes first: at most 1 job runs and 2 wait,
      // so of 4 quick submissions the last one always finds the queue full, whenever the worker comes up.
      const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('parked', 'sleep', { workers: [0, 1] })]);
      const u = (await deploy(small.cp, art)).parked.url;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await call('POST', `${u}/run`, { body: { input: { seconds: 60 } } })).status);
      assert.deepEqual(statuses.slice(0, 2), [200, 200]);
      const r = await call('POST', `${u}/run`, { body: { input: { seconds: 60 } } });
      assert.equal(r.status, 429, `statuses ${statuses.join(', ')}`);
      assert.match((r.json as { error: string }).error, /too many queued jobs/);
    } finally {
      await small.close();
    }
  });
});

describe('health', () => {
  test('reports job counts and idle, running and initializing workers', async () => {
    const r = await call('GET', `${url.noop}/health`);
    assert.equal(r.status, 200);
    const h = r.json as { jobs: Record<string, number>; workers: Record<string, number> };
    assert.deepEqual(Object.keys(h.jobs).sort(), ['completed', 'failed', 'inProgress', 'inQueue', 'retried']);
    assert.deepEqual(Object.keys(h.workers).sort(), ['idle', 'initializing', 'running']);
    assert.ok(h.jobs.completed >= 2);
    // workers.min = 1: one worker always up in the whole service (on whichever node holds its slot), idle between jobs.
    await waitUntil('the noop worker to be idle', async () => ((await call('GET', `${url.noop}/health`)).json as typeof h).workers.idle === 1);
    const { id } = (await call('POST', `${url.sleeper}/run`, { body: { input: { seconds: 1 } } })).json as { id: string };
    const busy = await waitUntil('a running sleeper', async () => {
      const x = (await call('GET', `${url.sleeper}/health`)).json as typeof h;
      return x.workers.running === 1 && x.jobs.inProgress === 1 ? x : null;
    });
    assert.equal(busy.jobs.inQueue, 0);
    await finished(url.sleeper, id);
  });
});

describe('retention', () => {
  test('/run results are kept 30 minutes after the job ends', async () => {
    const { id } = (await call('POST', `${url.echo}/run`, { body: { input: {} } })).json as { id: string };
    await finished(url.echo, id);
    clock.advance(30 * 60_000 - 1000);
    assert.equal((await call('GET', `${url.echo}/status/${id}`)).status, 200);
    clock.advance(2000);
    const gone = await call('GET', `${url.echo}/status/${id}`);
    assert.equal(gone.status, 404);
    assert.match((gone.json as { error: string }).error, /expired/);
  });
  test('/runsync results are kept 1 minute, 5 minutes when wait was given', async () => {
    const a = (await call('POST', `${url.echo}/runsync`, { body: { input: {} } })).json as { id: string };
    const b = (await call('POST', `${url.echo}/runsync?wait=5000`, { body: { input: {} } })).json as { id: string };
    clock.advance(61_000);
    assert.equal((await call('GET', `${url.echo}/status/${a.id}`)).status, 404);
    assert.equal((await call('GET', `${url.echo}/status/${b.id}`)).status, 200);
    clock.advance(4 * 60_000);
    assert.equal((await call('GET', `${url.echo}/status/${b.id}`)).status, 404);
  });
  test('?ttl= sets the time-to-live of the job from now; a bad ttl is 400', async () => {
    const { id } = (await call('POST', `${url.echo}/runsync`, { body: { input: {} } })).json as { id: string };
    assert.equal((await call('GET', `${url.echo}/status/${id}?ttl=abc`)).status, 400);
    assert.equal((await call('GET', `${url.echo}/status/${id}?ttl=0`)).status, 400);
    const r = await call('GET', `${url.echo}/status/${id}?ttl=600000`);
    assert.equal(r.status, 200);
    clock.advance(120_000); // past the 1 minute runsync retention: the ttl wins
    assert.equal((await call('GET', `${url.echo}/status/${id}`)).status, 200);
    clock.advance(480_001);
    assert.equal((await call('GET', `${url.echo}/status/${id}`)).status, 404);
  });
  test('a failed job whose results expired cannot be retried (404)', async () => {
    const { id } = (await call('POST', `${url.fail}/run`, { body: { input: {} } })).json as { id: string };
    await finished(url.fail, id);
    clock.advance(31 * 60_000);
    const r = await call('POST', `${url.fail}/retry/${id}`);
    assert.equal(r.status, 404);
    assert.match((r.json as { error: string }).error, /expired/);
  });
});
