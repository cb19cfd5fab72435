// `/stream/<id>` over real HTTP: chunks of a generator handler as they are produced (a cursor per job), a
// single chunk for a handler that does not stream, chunks over 1 MB split, and [] once everything was read.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';

let tp: TestPlatform;
let url: Record<string, string>;

/** Values JSON text holds exactly and a parse and re-encode would not: an integer past 2^53, 2.0, -0.0. */
const EXACT_PY = `
def exact():
    yield 12345678901234567891
    yield 2.0
    yield -0.0
    yield {"big": 2**70, "f": 1.5}
`;

before(async () => {
  tp = await startTestPlatform({ streamWaitMs: 1500 });
  const art = await buildTestArtifact({ 'worker.py': WORKER_PY, 'exact.py': EXACT_PY }, [
    { name: 'exact', file: 'exact.py', fn: 'exact', isGenerator: true },
    queueSpec('gen', 'gen', { isGenerator: true }),
    queueSpec('agen', 'agen', { isGenerator: true, isAsync: true }),
    queueSpec('echo', 'echo'),
    queueSpec('big', 'big'),
  ]);
  const eps = await deploy(tp.cp, art);
  url = Object.fromEntries(Object.entries(eps).map(([k, v]) => [k, v.url]));
  // A warm worker: the first /stream call below waits for a chunk of a running job, not for a cold start (slow when
  // the machine is busy with other test files).
  await call('POST', `${url.gen}/runsync`, { body: { input: { n: 1 } }, timeoutMs: 60_000 });
});
after(() => tp?.close());

type Chunk = { output: unknown; metrics: Record<string, unknown> };

async function readAll(u: string, id: string): Promise<{ chunks: Chunk[]; calls: number }> {
  const chunks: Chunk[] = [];
  let calls = 0;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const r = await call('GET', `${u}/stream/${id}`);
    assert.equal(r.status, 200);
    calls++;
    const got = r.json as Chunk[];
    assert.ok(Array.isArray(got));
    chunks.push(...got);
    const s = (await call('GET', `${u}/status/${id}`)).json as { status: string };
    if (got.length === 0 && !['IN_QUEUE', 'IN_PROGRESS'].includes(s.status)) return { chunks, calls };
  }
  throw new Error('the stream did not end');
}

test('a generator handler streams its chunks in order; the output is every yielded value', async () => {
  const { id } = (await call('POST', `${url.gen}/run`, { body: { input: { n: 5, delay: 0.15 } } })).json as { id: string };
  // Once a worker has it (a cold start on a loaded machine can outlast one long-poll), /stream waits for its chunks.
  await waitUntil('the job to start', async () => ((await call('GET', `${url.gen}/status/${id}`)).json as { status: string }).status !== 'IN_QUEUE', 60_000);
  const first = await call('GET', `${url.gen}/stream/${id}`);
  const firstChunks = first.json as Chunk[];
  assert.ok(firstChunks.length >= 1, 'the first /stream call waits for a chunk while the job runs');
  const rest = await readAll(url.gen, id);
  const all = [...firstChunks, ...rest.chunks];
  assert.deepEqual(
    all.map((c) => c.output),
    [0, 1, 2, 3, 4].map((i) => ({ i })),
  );
  assert.deepEqual(
    all.map((c) => c.metrics.stream_index),
    [0, 1, 2, 3, 4],
  );
  assert.ok(rest.calls >= 2, 'chunks arrive over several calls while the job runs');
  const done = (await call('GET', `${url.gen}/status/${id}`)).json as { status: string; output: unknown };
  assert.equal(done.status, 'COMPLETED');
  assert.deepEqual(
    done.output,
    [0, 1, 2, 3, 4].map((i) => ({ i })),
  );
  assert.deepEqual((await call('GET', `${url.gen}/stream/${id}`)).json, []);
});

test('an async generator streams too', async () => {
  const { id } = (await call('POST', `${url.agen}/run`, { body: { input: { n: 4 } } })).json as { id: string };
  const { chunks } = await readAll(url.agen, id);
  assert.deepEqual(
    chunks.map((c) => c.output),
    [0, 1, 2, 3].map((a) => ({ a })),
  );
  assert.deepEqual(
    ((await call('GET', `${url.agen}/status/${id}`)).json as { output: unknown }).output,
    [0, 1, 2, 3].map((a) => ({ a })),
  );
});

test("a streamed value reaches /stream as the handler's JSON text, exactly as /status has it", async () => {
  const { id } = (await call('POST', `${url.exact}/runsync`, { body: { input: {} }, timeoutMs: 60_000 })).json as { id: string };
  const streamed = (await call('GET', `${url.exact}/stream/${id}`)).text;
  const outputs = [...streamed.matchAll(/"output":(.*?),"metrics"/g)].map((m) => m[1]);
  assert.deepEqual(outputs, ['12345678901234567891', '2.0', '-0.0', '{"big":1180591620717411303424,"f":1.5}'], streamed);
  assert.match((await call('GET', `${url.exact}/status/${id}`)).text, /"output":\[12345678901234567891,2\.0,-0\.0,\{"big":1180591620717411303424,"f":1\.5\}\]/);
});

test('a handler that does not stream yields one chunk with its whole output', async () => {
  const { id } = (await call('POST', `${url.echo}/run`, { body: { input: { a: 1 } } })).json as { id: string };
  const { chunks } = await readAll(url.echo, id);
  assert.deepEqual(chunks, [{ output: { echo: { a: 1 } }, metrics: { stream_index: 0 } }]);
});

test('a chunk over 1 MB is split into pieces of at most 1 MB', async () => {
  const size = 2.5 * 1024 * 1024;
  const { id } = (await call('POST', `${url.big}/run`, { body: { input: { size } } })).json as { id: string };
  await waitUntil('the job to end', async () => ((await call('GET', `${url.big}/status/${id}`)).json as { status: string }).status === 'COMPLETED');
  const r = await call('GET', `${url.big}/stream/${id}`);
  const chunks = r.json as Chunk[];
  assert.equal(chunks.length, 3);
  for (const [i, c] of chunks.entries()) {
    assert.ok(Buffer.byteLength(JSON.stringify(c)) <= 1024 * 1024, `chunk ${i} is over 1 MB`);
    assert.equal(c.metrics.part, i);
    assert.equal(c.metrics.parts, 3);
    assert.equal(c.metrics.stream_index, i);
  }
  assert.equal(chunks.map((c) => c.output as string).join(''), 'x'.repeat(size));
});

test('/stream of an unknown job is 404', async () => {
  assert.equal((await call('GET', `${url.gen}/stream/nope-u1`)).status, 404);
});
