// The runtime every generated client carries (engine/src/clientgen/runtime.ts), over a fake fetch that answers as
// the jobs API does: what a cancelled (AbortSignal) call sends and throws, the listeners a long poll leaves, and the
// time-out of a stream whose /stream requests the platform holds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { AbortError, callRoute, queueFunction, StratoError, TimeoutError, Transport, type Job } from '../../engine/src/clientgen/runtime';

interface Sent {
  method: string;
  path: string;
}

/**
 * A fetch that answers each request with `answer(path)` after `delayMs(path)` ms (the platform holds /stream), and
 * gives up as fetch does when its signal aborts.
 */
function fakeFetch(answer: (path: string) => unknown, delayMs: (path: string) => number = () => 0) {
  const sent: Sent[] = [];
  const fetch = (url: string | URL | Request, init?: RequestInit) => {
    const path = new URL(String(url)).pathname.replace(/^\/v2\/e/, '');
    sent.push({ method: init?.method ?? 'GET', path });
    return new Promise<Response>((resolve, reject) => {
      const signal = init?.signal;
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', stop);
        resolve(new Response(JSON.stringify(answer(path)), { status: 200 }));
      }, delayMs(path));
      const stop = () => (clearTimeout(timer), reject(signal!.reason));
      signal?.addEventListener('abort', stop, { once: true });
    });
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}

function endpoint(fetch: typeof globalThis.fetch, pollIntervalMs = 1) {
  return queueFunction<{ n?: number }, number>(new Transport({ apiKey: 'k', fetch, pollIntervalMs }), { url: 'http://h/v2/e', timeoutMs: 60000 });
}

const job = (status: Job['status'], output?: number): Job<number> => ({ id: 'j1', status, ...(output !== undefined ? { output } : {}) });

test('a signal aborted before the call sends no request: the call, run and stream end with an AbortError (a StratoError)', async () => {
  const { fetch, sent } = fakeFetch(() => job('COMPLETED', 1));
  const f = endpoint(fetch);
  const signal = AbortSignal.abort('changed my mind');
  const calls: Array<() => Promise<unknown>> = [
    () => f({ n: 1 }, { signal }),
    () => f.run({ n: 1 }, { signal }),
    async () => {
      for await (const _ of f.stream({ n: 1 }, { signal }));
    },
  ];
  for (const call of calls) {
    const e = await call().then(
      () => undefined,
      (x: unknown) => x,
    );
    assert.ok(e instanceof AbortError, String(e));
    assert.ok(e instanceof StratoError, 'every error of the client is a StratoError');
    assert.equal(e.name, 'AbortError');
    assert.equal(e.reason, 'changed my mind');
  }
  assert.deepEqual(sent, [], 'no job was queued');
});

test('an abort while a request is out or while polling is an AbortError, naming the job once there is one', async () => {
  const slow = fakeFetch(
    () => job('COMPLETED', 1),
    () => 1000,
  );
  const controller = new AbortController();
  const pending = endpoint(slow.fetch)({}, { signal: controller.signal });
  setTimeout(() => controller.abort(), 20);
  const during = await pending.catch((x: unknown) => x);
  assert.ok(during instanceof AbortError && during.jobId === undefined, String(during));

  const running = fakeFetch(() => job('IN_PROGRESS'));
  const polling = new AbortController();
  const waiting = endpoint(running.fetch, 20)({}, { signal: polling.signal });
  setTimeout(() => polling.abort(), 60);
  const e = await waiting.catch((x: unknown) => x);
  assert.ok(e instanceof AbortError, String(e));
  assert.equal(e.jobId, 'j1', 'the job keeps running: the error names it, to cancel it');
});

test('polling leaves no abort listener behind: a long wait does not pile them up (MaxListenersExceededWarning)', async () => {
  let polls = 0;
  const { fetch } = fakeFetch((path) => (path === '/runsync' || ++polls < 15 ? job('IN_PROGRESS') : job('COMPLETED', 7)));
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    const controller = new AbortController();
    assert.equal(await endpoint(fetch)({}, { signal: controller.signal }), 7);
    assert.equal(polls, 15);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
      [],
    );
  } finally {
    process.off('warning', onWarning);
  }
});

test("a stream past its time-out is a TimeoutError naming the job, its /stream requests outliving the platform's hold", async () => {
  // The platform holds /stream (3 s; 300 ms here) while the job runs and nothing new came.
  const { fetch, sent } = fakeFetch(
    (path) => (path === '/run' ? job('IN_QUEUE') : path.startsWith('/stream/') ? [] : job('IN_PROGRESS')),
    (path) => (path.startsWith('/stream/') ? 300 : 0),
  );
  const started = Date.now();
  const e = await (async () => {
    for await (const _ of endpoint(fetch).stream({}, { timeoutMs: 100 }));
  })().catch((x: unknown) => x);
  assert.ok(e instanceof TimeoutError, String(e));
  assert.equal(e.timeoutMs, 100);
  assert.equal(e.jobId, 'j1', 'the caller can cancel the job it names');
  assert.ok(Date.now() - started >= 300, 'the /stream request was not cut short (the chunks it took would be lost)');
  assert.deepEqual(
    sent.map((s) => `${s.method} ${s.path}`),
    ['POST /run', 'GET /stream/j1', 'GET /status/j1'],
  );
});

test('a GET route sends null arguments as absent (an Optional left at its default), others in the query, a list as its key once per item', async () => {
  const urls: string[] = [];
  const fetch = (async (url: string | URL | Request) => {
    urls.push(String(url));
    return new Response('{}', { status: 200 });
  }) as typeof globalThis.fetch;
  await callRoute(new Transport({ apiKey: 'k', fetch }), { url: 'http://h/lb/e', timeoutMs: 1000 }, 'GET', '/items/{id}', {
    id: 5,
    limit: null,
    q: 'a b',
    n: 3,
    tags: ['x', 'y z'],
  });
  assert.deepEqual(urls, ['http://h/lb/e/items/5?q=a%20b&n=3&tags=x&tags=y%20z']);
});

test("a path value a URL would resolve away (. or ..) or cannot carry (a lone surrogate) is the call's StratoError, sending nothing", async () => {
  const urls: string[] = [];
  const fetch = (async (url: string | URL | Request) => {
    urls.push(String(url));
    return new Response('{}', { status: 200 });
  }) as typeof globalThis.fetch;
  const t = new Transport({ apiKey: 'k', fetch });
  const target = { url: 'http://h/lb/e', timeoutMs: 1000 };
  for (const name of ['.', '..'])
    await assert.rejects(
      callRoute(t, target, 'GET', '/files/{name}/{rest}', { name: 'a.txt', rest: name }),
      (e: Error) => e instanceof StratoError && new RegExp(`rest cannot be "${name.replace(/\./g, '\\.')}", which a URL path resolves away`).test(e.message),
    );
  await assert.rejects(
    callRoute(t, target, 'GET', '/opt/{key}', { key: '\ud800' }),
    (e: Error) => e instanceof StratoError && /key holds text that no URL can carry \(a lone UTF-16 surrogate\)/.test(e.message),
  );
  await assert.rejects(callRoute(t, target, 'GET', '/q', { q: 'a\udc00' }), StratoError);
  assert.deepEqual(urls, []);
  await callRoute(t, target, 'GET', '/files/{name}/{rest}', { name: 'a.txt', rest: '...' });
  assert.deepEqual(urls, ['http://h/lb/e/files/a.txt/...'], 'three dots are a name like any other');
});
