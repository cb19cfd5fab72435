// The queue worker of the Python runtime against a fake platform (docs/worker-protocol.md), over the job channel and
// over HTTP long-polls (what a platform without the channel gets): outputs, errors, streaming, concurrency,
// cancellation, exit on 401, graceful SIGTERM, classes, its speed, and a channel that breaks or closes.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { FakePlatform, killAll, makeArtifact, removeTempDirs, startPython, waitFor, withTimeout, writeFiles, type Proc } from './helpers';

/** The handlers the tests run (packaged as work.py): one file, read as it is. */
const WORKER = readFileSync(path.join(__dirname, '..', 'fixtures', 'python', 'queue_worker.py'), 'utf8');

const names = ['echo', 'aecho', 'afail', 'fail', 'gen', 'agen', 'slow', 'waits', 'model', 'single', 'noop', 'slowout', 'huge', 'dcout'];
const classes: Record<string, string> = { model: 'Model', single: 'Single' };
let dir: string;
let platform: FakePlatform;
let proc: Proc | undefined;

before(() => {
  dir = makeArtifact({ 'work.py': WORKER }, Object.fromEntries(names.map((n) => [n, { module: 'work', functions: [classes[n] ?? n] }])));
});
after(() => {
  killAll();
  removeTempDirs();
});
afterEach(async () => {
  proc?.child.kill('SIGKILL');
  proc = undefined;
  await platform?.stop();
});

let transport: 'channel' | 'http' = 'channel';

function fake(env: Record<string, string> = {}): FakePlatform {
  return new FakePlatform({ channel: transport === 'channel', slots: Number(env.STRATO_MAX_CONCURRENCY ?? 1) });
}

async function startWorker(endpoint: string, env: Record<string, string> = {}): Promise<Proc> {
  platform = fake(env);
  await platform.start();
  proc = startPython([`handler_${endpoint}.py`], { cwd: dir, env: platform.workerEnv(env) });
  await waitFor(() => platform.ready.length > 0 || proc!.child.exitCode !== null, 'ready');
  assert.equal(platform.ready.length, 1, `worker did not post ready:\n${proc.stderr()}`);
  return proc;
}

async function doneOf(id: string, timeoutMs = 10000) {
  return waitFor(() => platform.doneOf(id), `done of ${id}\n${proc?.stderr()}`, timeoutMs);
}

for (const over of ['channel', 'http'] as const)
  describe(`queue worker over ${over === 'channel' ? 'the job channel' : 'HTTP long-polls'}`, () => {
    before(() => (transport = over));

    test('posts ready once imports are done, then runs a job and posts its output', async () => {
      await startWorker('echo');
      assert.equal(platform.ready[0].workerId, 'w-1');
      platform.enqueue({ id: 'j1', input: { text: 'ab', times: 2 } });
      const done = await doneOf('j1');
      assert.deepEqual(done.output, { text: 'abab' });
      assert.equal(done.error, undefined);
      if (over === 'channel') {
        assert.equal(platform.channels.length, 1);
        assert.equal(platform.takes.length, 0);
        assert.match(proc!.stderr(), /ready: up to 1 job\(s\) at once, over the job channel/);
      } else {
        assert.ok(platform.takes.length > 0 && platform.takes.every((t) => t.waitMs === 20000 && t.max === 1));
        assert.match(proc!.stderr(), /ready: up to 1 job\(s\) at once, over HTTP long-polls \(no job channel/);
      }
    });

    test('a job whose result takes long to encode is still reported in heartbeats until the result leaves (else the platform runs it again)', async () => {
      await startWorker('slowout', { STRATO_HEARTBEAT_MS: '100' });
      platform.enqueue({ id: 'so1', input: {} });
      assert.deepEqual((await doneOf('so1')).output, { value: 42 });
      // The handler returns at once; its output's JSON form takes 0.8 s, over which ~8 heartbeats are sent.
      assert.ok(platform.heartbeats.filter((h) => h.jobs.includes('so1')).length >= 4, JSON.stringify(platform.heartbeats));
      await waitFor(() => platform.heartbeats.at(-1)!.jobs.length === 0, 'a heartbeat without the job once its result left');
    });

    test('an output over the largest message a worker may send fails its job with its size and what to do (the platform refuses a larger message)', async () => {
      await startWorker('huge');
      platform.enqueue({ id: 'hu1', input: {} });
      assert.match(
        (await doneOf('hu1', 30000)).error ?? '',
        /^ValueError: the output is 257 MB as JSON, over the 256 MB a job's result may be: return less, or write large results to a network volume/,
      );
      platform.enqueue({ id: 'hu2', input: { small: true } });
      assert.equal((await doneOf('hu2')).output, 'ok', 'the worker goes on');
    });

    test('a dataclass output keeps its fields only (not its InitVar and ClassVar); one whose serialization raises fails its job, the worker goes on', async () => {
      await startWorker('dcout');
      platform.enqueue({ id: 'dc1', input: { kind: 'initvar' } }, { id: 'dc2', input: { kind: 'broken' } }, { id: 'dc3', input: { kind: 'initvar' } });
      assert.deepEqual((await doneOf('dc1')).output, { x: 1 });
      assert.equal((await doneOf('dc2')).error, "RuntimeError while turning the output into JSON: the model's weights are gone");
      assert.deepEqual((await doneOf('dc3')).output, { x: 1 });
    });

    test('awaits an async function', async () => {
      await startWorker('aecho');
      platform.enqueue({ id: 'a1', input: { text: 'hi' } });
      assert.deepEqual((await doneOf('a1')).output, { text: 'hi' });
    });

    // Over the channel, an async def's jobs run as tasks on the event loop, started by the thread that reads them and
    // answered from the loop (_channel.py); over HTTP, slot threads await them. The same outcomes either way.
    test('an async function: its exception, its error key, a bad input and a coroutine that cancels itself fail clearly; a large output arrives whole', async () => {
      await startWorker('afail', { STRATO_MAX_CONCURRENCY: '4' });
      platform.enqueue(
        { id: 'e1', input: { kind: 'raise' } },
        { id: 'e2', input: { kind: 'error' } },
        { id: 'e3', input: { nope: 1 } },
        { id: 'e4', input: { kind: 'self-cancel' } },
        { id: 'e5', input: [1] },
        { id: 'e6', input: { kind: 'fine' } },
        { id: 'e7', input: { kind: 'large' } },
      );
      assert.equal((await doneOf('e1')).error, 'ValueError: the async input was rejected');
      assert.equal((await doneOf('e2')).error, 'not ready');
      assert.equal((await doneOf('e3')).error, "TypeError: afail() got an unexpected keyword argument 'nope'");
      assert.equal((await doneOf('e4')).error, 'RuntimeError: the coroutine was cancelled from inside (asyncio.CancelledError)');
      assert.equal((await doneOf('e5')).error, 'TypeError: input must be a JSON object whose keys are the arguments of afail(), got an array');
      assert.equal(((await doneOf('e6')).output as { kind: string }).kind, 'fine');
      // A large result leaves from a thread of its own (the loop does not wait for it to be read): whole.
      assert.equal(((await doneOf('e7')).output as { text: string }).text, 'x'.repeat(3_000_000));
      assert.match(proc!.stderr(), /strato ERROR +File ".*work\.py", line \d+, in afail/);
    });

    test('an async function runs STRATO_MAX_CONCURRENCY jobs at once, never more', async () => {
      await startWorker('afail', { STRATO_MAX_CONCURRENCY: '4' });
      const ids = ['ac1', 'ac2', 'ac3', 'ac4', 'ac5', 'ac6', 'ac7', 'ac8', 'ac9'];
      platform.enqueue(...ids.map((id) => ({ id, input: { kind: 'ok', ms: 300 } })));
      const spans = (await Promise.all(ids.map((id) => doneOf(id, 15000)))).map((r) => r.output as { start: number; end: number });
      assert.equal(platform.maxInFlight, 4);
      const maxOverlap = Math.max(...spans.map((s) => spans.filter((o) => o.start <= s.start && s.start < o.end).length));
      assert.equal(maxOverlap, 4);
    });

    test('SIGTERM lets a running async job finish and be posted, then the worker exits 0', async () => {
      // One slot, held by at1: at2 cannot be handed out before the SIGTERM is seen.
      await startWorker('afail');
      platform.enqueue({ id: 'at1', input: { kind: 'late', ms: 500 } });
      await waitFor(() => platform.heartbeats.some((h) => h.jobs.includes('at1')), 'at1 running');
      proc!.child.kill('SIGTERM');
      platform.enqueue({ id: 'at2', input: { kind: 'never' } });
      assert.equal(await withTimeout(proc!.exited, 10000, 'worker exit'), 0);
      assert.equal((platform.doneOf('at1')?.output as { kind: string } | undefined)?.kind, 'late');
      assert.equal(platform.doneOf('at2'), undefined);
      // Its slot was given back once the result left: the worker did not wait out the grace period.
      assert.doesNotMatch(proc!.stderr(), /not finished within/);
    });

    test('an exception fails the job with "Type: message"; a dict with an error that is not empty fails it with that text (as the reference), other keys or not', async () => {
      await startWorker('fail');
      platform.enqueue(
        { id: 'f1', input: { kind: 'raise' } },
        { id: 'f2', input: { kind: 'error' } },
        { id: 'f3', input: { kind: 'other' } },
        { id: 'f4', input: { kind: 'object' } },
        { id: 'f8', input: { kind: 'set' } },
        { id: 'f9', input: { kind: 'forms' } },
        { id: 'f5', input: { kind: 'nan' } },
        { id: 'f6', input: { kind: 'cycle' } },
        { id: 'f7', input: { kind: 'falsy' } },
      );
      assert.equal((await doneOf('f1')).error, 'ValueError: the input was rejected');
      assert.equal((await doneOf('f2')).error, 'model not loaded');
      assert.equal((await doneOf('f3')).error, 'refused');
      assert.match((await doneOf('f4')).error ?? '', /^TypeError: the output is not JSON serializable: Object of type object/);
      // A set is a list, sorted (set[T] is T[] to a typed client).
      assert.deepEqual((await doneOf('f8')).output, { tags: ['a', 'b'], ids: [1, 2], mixed: [1] });
      assert.deepEqual((await doneOf('f9')).output, { when: '2024-05-01', id: '00000000-0000-0000-0000-000000000001', amount: 1.5 });
      assert.match((await doneOf('f5')).error ?? '', /^TypeError: the output is not JSON serializable: Out of range float values/);
      assert.equal(
        (await doneOf('f6')).error,
        "TypeError: the output is not JSON serializable: it contains itself, or nests deeper than Python's recursion limit",
      );
      // The encoder is made once and shared: a failed encoding leaves nothing behind for the next job.
      assert.deepEqual((await doneOf('f7')).output, { error: null, other: 1 });
      assert.match(proc!.stderr(), /strato ERROR job f1 failed: ValueError: the input was rejected/);
      assert.match(proc!.stderr(), /strato ERROR +File ".*work\.py", line \d+, in fail/);
    });

    test('input that is not an object, or misses an argument, fails with a clear message', async () => {
      await startWorker('echo');
      platform.enqueue({ id: 'b1', input: [1, 2] }, { id: 'b2', input: {} }, { id: 'b3', input: { text: 'x', nope: 1 } });
      assert.equal((await doneOf('b1')).error, 'TypeError: input must be a JSON object whose keys are the arguments of echo(), got an array');
      assert.equal((await doneOf('b2')).error, "TypeError: echo() missing 1 required positional argument: 'text'");
      assert.equal((await doneOf('b3')).error, "TypeError: echo() got an unexpected keyword argument 'nope'");
    });

    test('a generator streams each value as a chunk, then done carries the list', async () => {
      await startWorker('gen');
      platform.enqueue({ id: 'g1', input: { n: 3 } });
      const done = await doneOf('g1');
      assert.deepEqual(done.output, [{ i: 0 }, { i: 1 }, { i: 2 }]);
      const chunks = platform.streams.filter((s) => s.jobId === 'g1').flatMap((s) => s.chunks);
      assert.deepEqual(
        chunks.map((c) => c.output),
        [{ i: 0 }, { i: 1 }, { i: 2 }],
      );
      assert.deepEqual(
        chunks.map((c) => c.metrics.stream_index),
        [0, 1, 2],
      );
    });

    test('an async generator streams too', async () => {
      await startWorker('agen');
      platform.enqueue({ id: 'ag1', input: { n: 4 } });
      assert.deepEqual((await doneOf('ag1')).output, [0, 1, 2, 3]);
      assert.deepEqual(
        platform.streams.flatMap((s) => s.chunks.map((c) => c.output)),
        [0, 1, 2, 3],
      );
    });

    test('a stream answer {cancelled: true} stops the generator and posts no done', async () => {
      await startWorker('agen');
      platform.streamCancelled.add('sc1');
      platform.enqueue({ id: 'sc1', input: { n: 50 } }, { id: 'sc2', input: { n: 1 } });
      await doneOf('sc2');
      assert.equal(platform.doneOf('sc1'), undefined);
      assert.equal(platform.streams.filter((s) => s.jobId === 'sc1').length, 1);
    });

    test('runs STRATO_MAX_CONCURRENCY jobs at once, never more', async () => {
      await startWorker('slow', { STRATO_MAX_CONCURRENCY: '3' });
      const ids = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'];
      platform.enqueue(...ids.map((id) => ({ id, input: { ms: 300 } })));
      const results = await Promise.all(ids.map((id) => doneOf(id, 15000)));
      assert.equal(platform.maxInFlight, 3);
      // Really concurrent: at the moment the first three jobs all started, none of them had ended.
      const spans = results.map((r) => r.output as { start: number; end: number });
      const maxOverlap = Math.max(...spans.map((s) => spans.filter((o) => o.start <= s.start && s.start < o.end).length));
      assert.equal(maxOverlap, 3);
    });

    test('a cancel listed in the heartbeat answer cancels an async job; the worker goes on', async () => {
      await startWorker('waits');
      const marker = path.join(dir, 'cancelled.txt');
      platform.enqueue({ id: 'k1', input: { ms: 20000, marker } });
      await waitFor(() => platform.heartbeats.some((h) => h.jobs.includes('k1')), 'heartbeat listing k1');
      platform.cancelNext.push('k1');
      await waitFor(() => existsSync(marker), 'the coroutine to see CancelledError');
      platform.enqueue({ id: 'k2', input: { ms: 1 } });
      assert.equal((await doneOf('k2')).output, 'finished');
      assert.equal(platform.doneOf('k1'), undefined);
      await waitFor(() => platform.heartbeats.at(-1)!.jobs.length === 0, 'heartbeat without jobs');
    });

    test('a cancelled sync job is abandoned: its slot is free at once and its result is dropped', async () => {
      await startWorker('slow');
      platform.enqueue({ id: 's1', input: { ms: 1500 } });
      await waitFor(() => platform.heartbeats.some((h) => h.jobs.includes('s1')), 'heartbeat listing s1');
      platform.cancelNext.push('s1');
      platform.enqueue({ id: 's2', input: { ms: 1 } });
      const s2 = await doneOf('s2');
      assert.ok(s2.at - platform.handedOut.get('s1')! < 1400, 's2 ran while s1 was still sleeping');
      await waitFor(() => /job s1 cancelled after \d+ ms: result dropped/.test(proc!.stderr()), 's1 to return');
      assert.equal(platform.doneOf('s1'), undefined);
    });

    test('a class is instantiated once; one of several methods is picked by input.method', async () => {
      await startWorker('model');
      platform.enqueue(
        { id: 'm1', input: { method: 'predict', x: 21 } },
        { id: 'm2', input: { method: 'info' } },
        { id: 'm3', input: { x: 1 } },
        { id: 'm4', input: { method: 'train' } },
      );
      assert.deepEqual((await doneOf('m1')).output, { y: 42, instances: 1 });
      assert.deepEqual((await doneOf('m2')).output, { instances: 1 });
      assert.equal((await doneOf('m3')).error, `ValueError: input needs "method" to pick the method of class Model to call: one of 'info', 'predict'`);
      assert.equal((await doneOf('m4')).error, "ValueError: unknown method 'train' of class Model: use one of 'info', 'predict'");
    });

    test('a class of one method runs it with or without input.method; another name is refused as such', async () => {
      await startWorker('single');
      platform.enqueue({ id: 'o1', input: { method: 'run', x: 1 } }, { id: 'o2', input: { x: 2 } }, { id: 'o3', input: { method: 'train', x: 3 } });
      assert.deepEqual((await doneOf('o1')).output, { x: 1 });
      assert.deepEqual((await doneOf('o2')).output, { x: 2 });
      assert.equal((await doneOf('o3')).error, `ValueError: unknown method 'train' of class Single: use 'run' (or no "method")`);
    });

    test('an import error or a missing manifest ends the worker with status 1 and one clear message', async () => {
      platform = fake();
      await platform.start();
      const broken = makeArtifact({ 'bad.py': 'from strato import Endpoint\nimport not_installed_pkg\n' }, { bad: { module: 'bad', functions: ['bad'] } });
      proc = startPython(['handler_bad.py'], { cwd: broken, env: platform.workerEnv() });
      assert.equal(await withTimeout(proc.exited, 10000, 'worker exit'), 1);
      assert.match(
        proc.stderr(),
        /strato ERROR importing module 'bad' failed: ModuleNotFoundError: No module named 'not_installed_pkg'; add 'not_installed_pkg' to the endpoint's dependencies=\[\.\.\.\] or to requirements\.txt/,
      );
      assert.match(proc.stderr(), /File ".*bad\.py", line 2/);
      assert.equal(platform.ready.length, 0);
      const lonely = path.join(broken, 'sub');
      writeFiles(lonely, { 'handler_x.py': 'from strato.runtime import serve\nserve("x")\n' });
      const p2 = startPython(['handler_x.py'], { cwd: lonely, env: platform.workerEnv() });
      assert.equal(await withTimeout(p2.exited, 10000, 'worker exit'), 1);
      assert.match(p2.stderr(), /strato_manifest\.json not found beside the handler/);
      assert.doesNotMatch(p2.stderr(), /Traceback/);
    });

    test(`a 401 answer to ${over === 'channel' ? 'the job channel' : 'take'} makes the worker exit with status 0`, async () => {
      platform = fake();
      await platform.start();
      platform.takeStatus = 401;
      proc = startPython(['handler_echo.py'], { cwd: dir, env: platform.workerEnv() });
      assert.equal(await withTimeout(proc.exited, 10000, 'worker exit'), 0);
      assert.match(proc.stderr(), /no longer wanted/);
    });

    test('SIGTERM lets the running job finish and be posted, takes nothing new, exits 0', async () => {
      await startWorker('slow');
      platform.enqueue({ id: 't1', input: { ms: 500 } });
      await waitFor(() => platform.heartbeats.some((h) => h.jobs.includes('t1')), 't1 running');
      proc!.child.kill('SIGTERM');
      platform.enqueue({ id: 't2', input: { ms: 1 } });
      assert.equal(await withTimeout(proc!.exited, 10000, 'worker exit'), 0);
      assert.ok(platform.doneOf('t1')?.output);
      assert.equal(platform.doneOf('t2'), undefined);
      assert.doesNotMatch(proc!.stderr(), /not finished within/);
    });

    test('runtime overhead of a no-op job is around a millisecond', async (t) => {
      await startWorker('noop');
      platform.enqueue({ id: 'warm', input: {} });
      await doneOf('warm');
      const n = 300;
      const started = Date.now();
      platform.enqueue(...Array.from({ length: n }, (_, i) => ({ id: `n${i}`, input: {} })));
      await doneOf(`n${n - 1}`, 20000);
      const perJob = (Date.now() - started) / n;
      t.diagnostic(`no-op job round trip against the fake platform: ${perJob.toFixed(2)} ms per job`);
      assert.ok(perJob < 10, `${perJob} ms per job`);
    });
  });

describe('the job channel', () => {
  before(() => (transport = 'channel'));

  test('breaks while a job runs: the worker opens another, the result arrives on it, and jobs go on', async () => {
    await startWorker('slow');
    platform.enqueue({ id: 'b1', input: { ms: 600 } });
    await waitFor(() => platform.heartbeats.some((h) => h.jobs.includes('b1')), 'b1 running');
    platform.breakChannel();
    assert.ok((await doneOf('b1')).output);
    assert.equal(platform.channels.length, 2, proc!.stderr());
    platform.enqueue({ id: 'b2', input: { ms: 1 } });
    assert.ok((await doneOf('b2')).output);
    assert.match(proc!.stderr(), /job channel open again/);
  });

  test('breaks while an async job runs: its result, sent from the event loop, goes on the next channel', async () => {
    await startWorker('afail', { STRATO_MAX_CONCURRENCY: '2' });
    platform.enqueue({ id: 'ab1', input: { kind: 'through', ms: 600 } });
    await waitFor(() => platform.heartbeats.some((h) => h.jobs.includes('ab1')), 'ab1 running');
    platform.breakChannel();
    assert.equal(((await doneOf('ab1')).output as { kind: string }).kind, 'through');
    assert.equal(platform.channels.length, 2, proc!.stderr());
    platform.enqueue({ id: 'ab2', input: { kind: 'after' } });
    assert.equal(((await doneOf('ab2')).output as { kind: string }).kind, 'after');
  });

  test('a frame that is not an object is logged and skipped; the next job runs', async () => {
    await startWorker('echo');
    await waitFor(() => platform.channels.length > 0, 'the job channel');
    platform.sendFrame([1, 2]);
    platform.enqueue({ id: 'f1', input: { text: 'ok' } });
    assert.deepEqual((await doneOf('f1')).output, { text: 'ok' });
    assert.match(proc!.stderr(), /job channel frame that is not an object, skipped: \[1, 2\]/);
  });

  test('an exit frame from the platform ends the worker with status 0 and says why', async () => {
    await startWorker('echo');
    await waitFor(() => platform.channels.length > 0, 'the job channel');
    platform.sendFrame({ exit: 'worker w-1 was replaced: a test' });
    assert.equal(await withTimeout(proc!.exited, 10000, 'worker exit'), 0);
    assert.match(proc!.stderr(), /the platform closed the job channel \(worker w-1 was replaced: a test\): exiting/);
  });
});
