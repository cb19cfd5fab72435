// Issue #16, defect 6: ended jobs kept their whole input and output in memory for their retention window, with no
// cap (40 jobs of 10 MB held 544 MB for 30 minutes). Now an ended job leaves memory once its row is durable, and
// /status and /stream read it from the store, through a cache bounded in bytes: the output is still read exactly.
// The last test is issue #11's memory figure: 30,000 jobs at full speed leave the heap where it was.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { buildTestArtifact } from '../helpers/artifact';
import { request } from 'undici';
import { call, deploy, startTestPlatform, TEST_KEY, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec } from '../helpers/testWorkers';

const BIG_PY = `
def big(i, size):
    return {"i": i, "big": 12345678901234567890, "two": 2.0, "text": "x" * size}


def noop(i):
    return i


def chunks(n, size):
    for k in range(n):
        yield {"k": k, "text": "y" * size}
`;

const MB = 1024 * 1024;
const CACHE_BYTES = 8 * MB;
const JOBS = 40;
const SIZE = 3 * MB;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heapMb = () => {
  gc();
  return process.memoryUsage().heapUsed / MB;
};

let tp: TestPlatform;
let url: Record<string, string>;
before(async () => {
  tp = await startTestPlatform({ endedJobCacheBytes: CACHE_BYTES });
  const art = await buildTestArtifact({ 'worker.py': BIG_PY }, [
    queueSpec('big', 'big', { workers: [0, 2] }),
    queueSpec('chunks', 'chunks', { isGenerator: true, workers: [0, 1] }),
    queueSpec('noop', 'noop', { workers: [0, 2] }),
  ]);
  url = Object.fromEntries(Object.entries(await deploy(tp.cp, art)).map(([k, v]) => [k, v.url]));
});
after(() => tp?.close());

const expectedOutput = (i: number) => `{"i":${i},"big":12345678901234567890,"two":2.0,"text":"${'x'.repeat(SIZE)}"}`;
const ids: string[] = [];
const completed = async (u: string) => ((await call('GET', `${u}/health`)).json as { jobs: { completed: number } }).jobs.completed;

test(`${JOBS} jobs of 3 MB: ended jobs leave memory (a bounded cache stays), and /status and /stream read them exactly`, async () => {
  const heapBefore = heapMb();
  // A streaming job whose chunks nobody reads while it runs: they must still be readable after it left memory.
  const streamed = ((await call('POST', `${url.chunks}/run`, { body: { input: { n: 3, size: 600_000 } } })).json as { id: string }).id;
  await waitUntil('the streaming job to end', async () => (await completed(url.chunks)) === 1, 60_000);

  for (let i = 0; i < JOBS; i++) {
    const r = await call('POST', `${url.big}/run`, { body: { input: { i, size: SIZE } } });
    assert.equal(r.status, 200, r.text);
    ids.push((r.json as { id: string }).id);
  }
  await waitUntil(`${JOBS} jobs to complete`, async () => (await completed(url.big)) === JOBS, 120_000, 200);
  const held = await waitUntil('ended jobs to leave memory', () => {
    const s = tp.platform.stats();
    return s.jobsInMemory === 0 && s.jobMemoryBytes <= CACHE_BYTES ? s : null;
  });
  const heapAfter = heapMb();
  console.log(
    `${JOBS} jobs of ${SIZE / MB} MB ended: ${(held.jobMemoryBytes / MB).toFixed(1)} MB held by jobs in memory (${held.endedJobsCached} cached, ` +
      `bound ${CACHE_BYTES / MB} MB); heap ${heapBefore.toFixed(0)} -> ${heapAfter.toFixed(0)} MB`,
  );
  // Before the fix every output stayed (twice: as the output and as its stream chunk), some 240 MB of heap here.
  assert.ok(heapAfter - heapBefore < CACHE_BYTES / MB + 48, `the heap grew by ${(heapAfter - heapBefore).toFixed(0)} MB`);

  for (const [i, id] of ids.entries()) {
    const r = await call('GET', `${url.big}/status/${id}`);
    assert.equal(r.status, 200);
    assert.equal((r.json as { status: string }).status, 'COMPLETED');
    assert.ok(r.text.includes(`"output":${expectedOutput(i)},`), `job ${i}: the output read back is not the handler's JSON text`);
    assert.ok(tp.platform.stats().jobMemoryBytes <= CACHE_BYTES, 'reading ended jobs back stays within the cache bound');
  }

  // /stream of an ended job read from the store: its one chunk (split over 1 MB) is the handler's JSON text, once.
  const stream = await call('GET', `${url.big}/stream/${ids[0]}`);
  const pieces = stream.json as Array<{ output: string; metrics: { part: number; parts: number; json?: boolean } }>;
  assert.equal(pieces.length, pieces[0].metrics.parts);
  assert.equal(pieces[0].metrics.json, true);
  assert.ok(pieces.map((p) => p.output).join('') === expectedOutput(0), 'the stream pieces join to the output text');
  assert.deepEqual((await call('GET', `${url.big}/stream/${ids[0]}`)).json, []);

  // The streaming job was pushed out of the cache by the big ones: its unread chunks come from the store.
  const rest = (await call('GET', `${url.chunks}/stream/${streamed}`)).json as Array<{ output: { k: number; text: string } }>;
  assert.deepEqual(
    rest.map((c) => [c.output.k, c.output.text.length]),
    [0, 1, 2].map((k) => [k, 600_000]),
  );
  assert.deepEqual((await call('GET', `${url.chunks}/stream/${streamed}`)).json, [], 'chunks are handed out once');
  const done = (await call('GET', `${url.chunks}/status/${streamed}`)).json as { status: string; output: unknown[] };
  assert.equal(done.status, 'COMPLETED');
  assert.equal(done.output.length, 3);
});

test('an ended job out of memory expires: 404 once its ttl ran out, then the sweep deletes its row and counts it out', async () => {
  assert.equal((await call('GET', `${url.big}/status/${ids[1]}?ttl=1500`)).status, 200);
  await waitUntil('the new ttl to be committed', () => tp.platform.stats().jobsInMemory === 0);
  await new Promise((r) => setTimeout(r, 1600));
  assert.equal((await call('GET', `${url.big}/status/${ids[1]}`)).status, 404);
  await waitUntil('the sweep to count the expired job out of health', async () => (await completed(url.big)) === JOBS - 1, 15_000, 250);
  assert.equal((await call('GET', `${url.big}/status/${ids[2]}`)).status, 200, 'the others are kept');
});

const SUSTAINED = 30_000;

test(`${SUSTAINED.toLocaleString('en')} small jobs through /run at full speed: afterwards the heap is within 50 MB of where it started`, async () => {
  const heapBefore = heapMb();
  const t = Date.now();
  let next = 0;
  const refused: string[] = [];
  // 32 clients submitting back to back: the queue fills as fast as this process can post (undici's request: a
  // fraction of fetch's cost per call, which 30,000 calls in the platform's own process feel).
  const client = async () => {
    while (next < SUSTAINED) {
      const i = next++;
      const r = await request(`${url.noop}/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input: { i } }),
      });
      const text = await r.body.text();
      if (r.statusCode !== 200) refused.push(`${r.statusCode} ${text}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, client));
  assert.deepEqual(refused.slice(0, 3), [], 'every job was accepted');
  await waitUntil(`${SUSTAINED} jobs to complete`, async () => (await completed(url.noop)) === SUSTAINED, 240_000, 250);
  const seconds = (Date.now() - t) / 1000;
  await waitUntil('ended jobs to leave memory', () => tp.platform.stats().jobsInMemory === 0, 30_000);
  const heapAfter = heapMb();
  const s = tp.platform.stats();
  console.log(
    `${SUSTAINED} jobs in ${seconds.toFixed(1)} s (${Math.round(SUSTAINED / seconds)} jobs/s with this process also the client); ` +
      `heap ${heapBefore.toFixed(0)} -> ${heapAfter.toFixed(0)} MB; ${s.endedJobsCached} ended jobs cached in ${(s.jobMemoryBytes / MB).toFixed(1)} MB`,
  );
  assert.ok(heapAfter - heapBefore < 50, `the heap grew by ${(heapAfter - heapBefore).toFixed(0)} MB`);
  assert.ok(s.jobMemoryBytes <= CACHE_BYTES);
});
