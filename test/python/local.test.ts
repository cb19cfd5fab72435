// The local handler test server and one-shot runs of a built handler (python handler_x.py ...): --test_input,
// test_input.json, --rp_serve_api with /runsync, /run, /status, /stream, concurrency (main.py) and input errors.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { killAll, makeArtifact, removeTempDirs, runPython, startPython, waitFor, type Proc } from './helpers';
import { freePort } from '../helpers/ports';

const WORKER = `
import asyncio, dataclasses, time
from strato import Endpoint

@Endpoint(name="hello")
def hello(name: str, sleep_ms: int = 0):
    start = time.time()
    time.sleep(sleep_ms / 1000)
    if name == "boom":
        raise ValueError("boom!")
    if name == "badstr":
        class Unprintable(Exception):
            def __str__(self):
                raise RuntimeError("no text")
        raise Unprintable()
    if name == "baderr":
        return {"error": {(1, 2): "a key JSON cannot hold"}}
    if name == "nan":
        return {"loss": float("nan")}
    if name == "gone":
        @dataclasses.dataclass
        class Lazy:  # a field that raises when read
            weights: int

            def __getattribute__(self, field):
                if field == "weights":
                    raise RuntimeError("the weights are gone")
                return object.__getattribute__(self, field)
        return Lazy(1)
    return {"greeting": f"hello {name}", "start": start, "end": time.time()}

@Endpoint(name="count")
async def count(n: int, delay_ms: int = 0):
    for i in range(n):
        await asyncio.sleep(delay_ms / 1000)
        yield {"i": i}

@Endpoint(name="leaky")
async def leaky(mark: str):
    yield b"bytes are not JSON"
    for i in range(100):
        await asyncio.sleep(0.05)
        with open(mark, "a") as f:
            f.write(f"{i}\\n")
        yield i
`;

/** What a build writes as hello's sample input (project/sampleInput.ts): the examples the server shows. */
const HELLO_SAMPLE = { name: 'value', sleep_ms: 0 };
let dir: string;
const servers: Proc[] = [];

before(() => {
  dir = makeArtifact(
    { 'worker.py': WORKER },
    {
      hello: { module: 'worker', functions: ['hello'], sampleInput: HELLO_SAMPLE },
      count: { module: 'worker', functions: ['count'] },
      leaky: { module: 'worker', functions: ['leaky'] },
    },
  );
});
after(() => {
  killAll();
  removeTempDirs();
});

async function serveApi(file: string, extra: string[] = []): Promise<string> {
  const port = await freePort();
  const p = startPython([file, '--rp_serve_api', '--rp_api_host', '127.0.0.1', '--rp_api_port', String(port), ...extra], { cwd: dir });
  servers.push(p);
  await waitFor(() => /local test server on/.test(p.stderr()) || p.child.exitCode !== null, 'the local test server');
  assert.equal(p.child.exitCode, null, p.stderr());
  return `http://127.0.0.1:${port}`;
}

async function post(url: string, body: string | object, method = 'POST') {
  const res = await fetch(url, {
    method,
    body: method === 'GET' ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000), // a server that stopped answering fails the test, not the run
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('one-shot runs', () => {
  test('--test_input runs the function once and prints the job as JSON on stdout', async () => {
    const r = await runPython(['handler_hello.py', '--test_input', '{"input": {"name": "ada"}}'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const job = JSON.parse(r.stdout);
    assert.equal(job.status, 'COMPLETED');
    assert.equal(job.output.greeting, 'hello ada');
    assert.match(job.id, /^test-/);
    assert.equal(typeof job.executionTime, 'number');
    assert.match(r.stderr, /^strato INFO {2}/m);
  });

  test('test_input.json beside the handler is used without flags; --test_input takes precedence', async () => {
    writeFileSync(path.join(dir, 'test_input.json'), JSON.stringify({ input: { name: 'file' } }));
    try {
      const fromFile = await runPython(['handler_hello.py'], { cwd: dir });
      assert.equal(JSON.parse(fromFile.stdout).output.greeting, 'hello file');
      const fromFlag = await runPython([path.join(dir, 'handler_hello.py'), '--test_input', '{"input": {"name": "flag"}}']);
      assert.equal(JSON.parse(fromFlag.stdout).output.greeting, 'hello flag');
    } finally {
      rmSync(path.join(dir, 'test_input.json'));
    }
  });

  test('with no test input at all, a message says how to test', async () => {
    const r = await runPython(['handler_hello.py'], { cwd: dir });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /nothing to run: pass --test_input .*test_input\.json.*--rp_serve_api/);
  });

  test('bad JSON or a missing "input" key is a clear error, never a traceback', async () => {
    const bad = await runPython(['handler_hello.py', '--test_input', '{"input": {'], { cwd: dir });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--test_input: the test input is not valid JSON/);
    assert.doesNotMatch(bad.stderr, /Traceback/);
    const shape = await runPython(['handler_hello.py', '--test_input', '{"name": "x"}'], { cwd: dir });
    assert.equal(shape.code, 2);
    assert.match(shape.stderr, /must be a JSON object with an "input" key/);
  });

  test('a failing function prints a FAILED job and exits 1; --rp_debugger adds the traceback', async () => {
    const r = await runPython(['handler_hello.py', '--test_input', '{"input": {"name": "boom"}}'], { cwd: dir });
    assert.equal(r.code, 1);
    const job = JSON.parse(r.stdout);
    assert.deepEqual([job.status, job.error, job.traceback], ['FAILED', 'ValueError: boom!', undefined]);
    const debug = await runPython(['handler_hello.py', '--rp_debugger', '--test_input', '{"input": {"name": "boom"}}'], { cwd: dir });
    assert.match(JSON.parse(debug.stdout).traceback, /worker\.py", line \d+, in hello/);
  });

  test('an exception that cannot be told as text, or an error value JSON cannot hold, still fails the job (not the runner)', async () => {
    const unprintable = await runPython(['handler_hello.py', '--test_input', '{"input": {"name": "badstr"}}'], { cwd: dir });
    assert.equal(unprintable.code, 1, unprintable.stderr);
    assert.deepEqual(JSON.parse(unprintable.stdout).error, 'Unprintable: <exception str() failed>');
    const badError = await runPython(['handler_hello.py', '--test_input', '{"input": {"name": "baderr"}}'], { cwd: dir });
    assert.equal(badError.code, 1, badError.stderr);
    assert.match(JSON.parse(badError.stdout).error, /^the result's "error" value could not be read as text \(TypeError: keys must be/);
  });

  test('an output JSON cannot hold fails the job with the rule a platform worker applies', async () => {
    const r = await runPython(['handler_hello.py', '--test_input', '{"input": {"name": "nan"}}'], { cwd: dir });
    assert.equal(r.code, 1);
    const job = JSON.parse(r.stdout);
    assert.equal(job.status, 'FAILED');
    assert.match(job.error, /^TypeError: the output is not JSON serializable: Out of range float values/);
    // A serializer that raises fails the job the same way (the local runner's thread died, the job never ended).
    const gone = await runPython(['handler_hello.py', '--test_input', '{"input": {"name": "gone"}}'], { cwd: dir });
    assert.equal(gone.code, 1, gone.stderr);
    assert.equal(JSON.parse(gone.stdout).error, 'RuntimeError while turning the output into JSON: the weights are gone');
  });

  test('--rp_log_level ERROR keeps info lines out of the log', async () => {
    const r = await runPython(['handler_hello.py', '--rp_log_level', 'ERROR', '--test_input', '{"input": {"name": "q"}}'], { cwd: dir });
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
  });

  test('--rp_api_concurrency above 1 needs the file to be named main.py', async () => {
    const r = await runPython(['handler_hello.py', '--rp_serve_api', '--rp_api_concurrency', '2'], { cwd: dir });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--rp_api_concurrency 2 needs the handler file to be named main\.py \(it is handler_hello\.py\)/);
  });
});

describe('local test server (--rp_serve_api)', () => {
  let url: string;
  before(async () => {
    url = await serveApi('handler_hello.py');
  });
  after(() => {
    for (const p of servers) p.child.kill('SIGKILL');
  });

  test('POST /runsync runs the function and answers the job', async () => {
    const r = await post(`${url}/runsync`, { input: { name: 'sync' } });
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'COMPLETED');
    assert.equal(r.body.output.greeting, 'hello sync');
    assert.ok(Number.isInteger(r.body.delayTime) && Number.isInteger(r.body.executionTime));
    const failed = await post(`${url}/runsync`, { input: { name: 'boom' } });
    assert.deepEqual([failed.body.status, failed.body.error], ['FAILED', 'ValueError: boom!']);
    const missing = await post(`${url}/runsync`, { input: {} });
    assert.equal(missing.body.error, "TypeError: hello() missing 1 required positional argument: 'name'");
  });

  test('a body over the limit is answered 413, whole or chunked, not with a broken connection', async () => {
    const send = (chunked: boolean) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const body = Buffer.from(JSON.stringify({ input: { name: 'x'.repeat(21 * 1024 * 1024) } }));
        const headers: Record<string, string | number> = { 'content-type': 'application/json' };
        if (!chunked) headers['content-length'] = body.length;
        const req = http.request(`${url}/runsync`, { method: 'POST', headers }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject);
        if (chunked) for (let i = 0; i < body.length; i += 1 << 20) req.write(body.subarray(i, i + (1 << 20)));
        req.end(chunked ? undefined : body);
      });
    for (const chunked of [false, true]) {
      const r = await send(chunked);
      assert.equal(r.status, 413, `chunked ${chunked}: ${r.text}`);
      assert.match(JSON.parse(r.text).error, /the body is over the 20 MB limit of \/runsync/);
    }
    assert.equal((await post(`${url}/runsync`, { input: { name: 'after' } })).body.output.greeting, 'hello after', 'the server serves on');
  });

  test('/docs describes the routes with a form that runs a job; /openapi.json is the same as a document', async () => {
    const docs = await fetch(`${url}/docs`);
    assert.equal(docs.status, 200);
    assert.equal(docs.headers.get('content-type'), 'text/html; charset=utf-8');
    const page = await docs.text();
    assert.match(page, /<title>handler_hello\.py: local test server<\/title>/);
    for (const route of ['/runsync', '/run', '/status/{id}', '/stream/{id}', '/cancel/{id}']) assert.ok(page.includes(`<code>${route}</code>`), route);
    assert.ok(page.includes(`<textarea id='body'>${JSON.stringify({ input: HELLO_SAMPLE }, null, 2).replace(/"/g, '&quot;')}</textarea>`), page);
    assert.match(page, /fetch\('\/runsync'/);
    const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    assert.equal(doc.openapi, '3.0.3');
    assert.deepEqual(
      Object.entries(doc.paths).map(([p, ops]) => `${Object.keys(ops).join(',')} ${p}`),
      ['post /runsync', 'post /run', 'get,post /status/{id}', 'get,post /stream/{id}', 'post /cancel/{id}'],
    );
    assert.equal((await post(`${url}/`, '', 'GET')).body.docs, '/docs');
  });

  test('bad bodies are 400 with a sentence saying what to send', async () => {
    const bad = await post(`${url}/runsync`, '{"input": ');
    assert.equal(bad.status, 400);
    assert.deepEqual(JSON.parse(/: send (\{.*\})$/.exec(bad.body.error)?.[1] ?? 'null'), { input: HELLO_SAMPLE }, bad.body.error);
    const noInput = await post(`${url}/run`, { name: 'x' });
    assert.equal(noInput.status, 400);
    assert.match(noInput.body.error, /"input" key/);
    assert.equal((await post(`${url}/nowhere`, {})).status, 404);
  });

  test('POST /run answers IN_PROGRESS with a test- id, and the job can be followed with /status', async () => {
    const r = await post(`${url}/run`, { input: { name: 'later', sleep_ms: 50 } });
    assert.equal(r.body.status, 'IN_PROGRESS');
    assert.match(r.body.id, /^test-[0-9a-f-]{36}$/);
    // GET and POST both work (the reference's /status is POST-only).
    let job: { status: string; output?: { greeting: string } } = { status: '' };
    for (let i = 0; i < 200 && job.status !== 'COMPLETED'; i++) {
      job = (await post(`${url}/status/${r.body.id}`, '', i % 2 ? 'POST' : 'GET')).body;
      if (job.status !== 'COMPLETED') await new Promise((res) => setTimeout(res, 20));
    }
    assert.equal(job.output?.greeting, 'hello later');
    assert.equal((await post(`${url}/status/test-unknown`, '', 'GET')).status, 404);
  });

  test('/stream of a function that does not stream gives one chunk with its output, then []', async () => {
    const r = await post(`${url}/run`, { input: { name: 'chunk' } });
    // /stream waits for the job's first chunk, which a non-streaming job produces when it completes.
    const chunks = (await post(`${url}/stream/${r.body.id}`, '', 'GET')).body;
    assert.equal(chunks.length, 1);
    assert.equal(chunks[0].output.greeting, 'hello chunk');
    assert.equal(chunks[0].metrics.stream_index, 0);
    assert.deepEqual((await post(`${url}/stream/${r.body.id}`, '', 'POST')).body, []);
  });
});

describe('local test server: streaming and concurrency', () => {
  after(() => {
    for (const p of servers) p.child.kill('SIGKILL');
  });

  test('/stream returns the chunks produced since the previous call, then [] once done', async () => {
    const url = await serveApi('handler_count.py');
    const r = await post(`${url}/run`, { input: { n: 5, delay_ms: 30 } });
    const seen: unknown[] = [];
    for (let i = 0; i < 50; i++) {
      const chunks = (await post(`${url}/stream/${r.body.id}`, '', 'GET')).body as { output: unknown }[];
      if (chunks.length === 0) break;
      seen.push(...chunks.map((c) => c.output));
    }
    assert.deepEqual(
      seen,
      [0, 1, 2, 3, 4].map((i) => ({ i })),
    );
    const job = (await post(`${url}/status/${r.body.id}`, '', 'GET')).body;
    assert.deepEqual(job.output, seen);
  });

  test('POST /cancel stops a running job; its status is CANCELLED', async () => {
    const url = await serveApi('handler_count.py');
    const r = await post(`${url}/run`, { input: { n: 100, delay_ms: 50 } });
    await post(`${url}/stream/${r.body.id}`, '', 'GET');
    const cancelled = await post(`${url}/cancel/${r.body.id}`, '');
    assert.equal(cancelled.body.status, 'CANCELLED');
    assert.equal((await post(`${url}/status/${r.body.id}`, '', 'GET')).body.status, 'CANCELLED');
    assert.equal((await post(`${url}/cancel/${r.body.id}`, '', 'GET')).status, 405);
  });

  test('after a job whose exception cannot be told as text, the server runs the next job', async () => {
    const url = await serveApi('handler_hello.py');
    const failed = await post(`${url}/runsync`, { input: { name: 'badstr' } });
    assert.deepEqual([failed.body.status, failed.body.error], ['FAILED', 'Unprintable: <exception str() failed>']);
    assert.equal((await post(`${url}/runsync`, { input: { name: 'next' } })).body.output.greeting, 'hello next');
  });

  test('an async generator whose value cannot be streamed fails its job and stops there (not running on, uncounted)', async () => {
    const url = await serveApi('handler_leaky.py');
    const mark = path.join(dir, 'leaky.mark');
    const r = await post(`${url}/runsync`, { input: { mark } });
    assert.equal(r.body.status, 'FAILED');
    assert.match(r.body.error, /not JSON serializable/);
    await new Promise((res) => setTimeout(res, 600));
    const written = existsSync(mark) ? readFileSync(mark, 'utf8') : '';
    await new Promise((res) => setTimeout(res, 600));
    assert.equal(existsSync(mark) ? readFileSync(mark, 'utf8') : '', written, 'the generator still runs');
    assert.ok(written.split('\n').length <= 2, written);
  });

  test('with main.py and --rp_api_concurrency 2, two jobs really run at once', async () => {
    copyFileSync(path.join(dir, 'handler_hello.py'), path.join(dir, 'main.py'));
    const url = await serveApi('main.py', ['--rp_api_concurrency', '2']);
    const [a, b] = await Promise.all([
      post(`${url}/runsync`, { input: { name: 'a', sleep_ms: 300 } }),
      post(`${url}/runsync`, { input: { name: 'b', sleep_ms: 300 } }),
    ]);
    const [x, y] = [a.body.output, b.body.output].sort((p, q) => p.start - q.start);
    assert.ok(y.start < x.end, `the second job started (${y.start}) after the first ended (${x.end})`);
  });

  test('with one worker (the default), jobs run one after the other', async () => {
    const url = await serveApi('handler_hello.py');
    const [a, b] = await Promise.all([
      post(`${url}/runsync`, { input: { name: 'a', sleep_ms: 100 } }),
      post(`${url}/runsync`, { input: { name: 'b', sleep_ms: 100 } }),
    ]);
    const [x, y] = [a.body.output, b.body.output].sort((p, q) => p.start - q.start);
    assert.ok(y.start >= x.end);
  });
});
