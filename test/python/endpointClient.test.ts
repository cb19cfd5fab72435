// Endpoint(id="...") with no function, as the reference product offers it: a client of an endpoint that exists.
// A real Python script calls endpoints deployed on the real embedded platform: run -> EndpointJob (status,
// output, stream, cancel), runsync, a failed job's error, a load-balanced route, and a wrong key.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTestArtifact } from '../helpers/artifact';
import { deploy, startTestPlatform, type TestPlatform } from '../helpers/platform';
import { runPythonScript } from '../helpers/python';
import { LB_PY, queueSpec, WORKER_PY } from '../helpers/testWorkers';

let tp: TestPlatform;
let ids: Record<string, string>;
let cwd: string;

before(async () => {
  tp = await startTestPlatform({ streamWaitMs: 500 }); // /stream answers [] after 0.5 s while a job runs
  const art = await buildTestArtifact({ 'worker.py': WORKER_PY, 'lb_worker.py': LB_PY }, [
    queueSpec('echo', 'echo'),
    queueSpec('streamer', 'gen', { isGenerator: true }),
    queueSpec('failing', 'fail'),
    queueSpec('slow', 'sleep', { workers: [0, 1] }),
    { name: 'api', file: 'lb_worker.py', fn: 'process', routes: { 'POST /process': 'process', 'GET /items/{item_id}': 'item' }, workers: [0, 1] },
  ]);
  const eps = await deploy(tp.cp, art);
  ids = Object.fromEntries(Object.entries(eps).map(([k, e]) => [k, e.id]));
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-client-'));
});
after(async () => {
  await tp?.close();
  fs.rmSync(cwd, { recursive: true, force: true });
});

/** Runs a script against the platform (asynchronously: the platform answers from this process). */
const python = (code: string, key = tp.key) => runPythonScript(code, { cwd, env: { STRATO_API_URL: tp.url, STRATO_API_KEY: key }, timeoutMs: 90_000 });

test('run gives an EndpointJob: status, result, stream and cancel; runsync gives the output', async () => {
  const r = await python(`
import json
from strato import Endpoint, EndpointJob

echo = Endpoint(id="${ids.echo}")
job = echo.run({"text": "hi", "n": 12345678901234567890})
assert isinstance(job, EndpointJob), job
out = job.result(timeout=60)
assert job.done and job.output == out and job.error is None, (job.done, job.output, job.error)
print(json.dumps({"status": job.status(), "output": out}))
print(json.dumps(echo.runsync({"x": [1, 2.5]})))

streamer = Endpoint(id="${ids.streamer}")
print(json.dumps(list(streamer.run({"n": 3, "delay": 0.05}).stream())))

slow = Endpoint(id="${ids.slow}")
busy = slow.run({"seconds": 20})
queued = slow.run({"seconds": 1})
print(json.dumps([queued.cancel(), queued.status()]))
busy.cancel()
`);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  // The big integer comes back digit for digit (JSON text is kept, not re-serialised).
  assert.equal(lines[0], '{"status": "COMPLETED", "output": {"echo": {"text": "hi", "n": 12345678901234567890}}}');
  assert.deepEqual(JSON.parse(lines[1]), { echo: { x: [1, 2.5] } });
  assert.deepEqual(JSON.parse(lines[2]), [{ i: 0 }, { i: 1 }, { i: 2 }]);
  assert.deepEqual(JSON.parse(lines[3]), ['CANCELLED', 'CANCELLED']);
});

test('stream() takes the last chunk of a job that ended between an empty /stream answer and the status read', async () => {
  // The race made certain: the status read below is where the job completes (its handler waits for the file), after a
  // /stream that answered [] because the job was still running. A handler that does not stream has one chunk, its output.
  const r = await python(`
import json, os, time
from strato import Endpoint, EndpointJob

flag = os.path.join(os.getcwd(), "release-stream")
job = Endpoint(id="${ids.slow}").run({"seconds": 60, "until": flag, "tag": "last"})
read_status = EndpointJob._read_status

def completes_meanwhile(self):
    open(flag, "w").close()
    other = EndpointJob(self.endpoint_id, self.id)
    while read_status(other) != "COMPLETED":
        time.sleep(0.05)
    return read_status(self)

EndpointJob._read_status = completes_meanwhile
print(json.dumps([chunk["tag"] for chunk in job.stream()]))
`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), '["last"]');
});

test("the reference's client as its code writes it: awaited run, wait, status, output, error, done, cancel, and runsync's job", async () => {
  const r = await python(`
import asyncio, json
from strato import Endpoint

async def main():
    echo = Endpoint(id="${ids.echo}")
    job = await echo.run({"x": 1})
    print(json.dumps([job.done, job.output]))
    assert (await job.wait(timeout=60)) is job
    print(json.dumps([job.done, await job.status(), job.output, job.error]))
    done = await echo.runsync({"y": 2})
    print(json.dumps([done.done, done.output]))
    failed = await Endpoint(id="${ids.failing}").runsync({"message": "no GPU today"})
    print(json.dumps([failed.done, failed.output, "no GPU today" in failed.error]))
    slow = Endpoint(id="${ids.slow}")
    busy = await slow.run({"seconds": 20})
    queued = await slow.run({"seconds": 1})
    assert (await queued.cancel()) is queued
    print(json.dumps([queued.done, await queued.status()]))
    again = await slow.cancel(busy.id)
    print(json.dumps([again.id == busy.id, again.done]))
    try:
        await (await slow.run({"seconds": 20})).wait(timeout=0.5)
    except TimeoutError as e:
        print("timeout:", "did not end within 0.5 s" in str(e))

asyncio.run(main())
`);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    r.stdout
      .trim()
      .split('\n')
      .map((l) => (l.startsWith('timeout:') ? l : JSON.parse(l))),
    [
      [false, null],
      [true, 'COMPLETED', { echo: { x: 1 } }, null],
      [true, { echo: { y: 2 } }],
      [true, null, true],
      [true, 'CANCELLED'],
      [true, true],
      'timeout: True',
    ],
  );
});

test("a failed job raises StratoRemoteError with the handler's error; a route answers; a wrong key is refused", async () => {
  const r = await python(`
from strato import Endpoint, StratoRemoteError

try:
    Endpoint(id="${ids.failing}").runsync({"message": "no GPU today"})
except StratoRemoteError as e:
    print("failed:", e.status, "no GPU today" in str(e))
try:  # what it streamed, then its failure: not a quiet end
    list(Endpoint(id="${ids.failing}").run({"message": "streamed failure"}).stream())
except StratoRemoteError as e:
    print("stream failed:", e.status, "streamed failure" in str(e))

api = Endpoint(id="${ids.api}")
print(api.post("/process", {"text": "ab", "times": 2})["result"])
print(api.get("/items/7", {"q": "x"}))
print(api.get("/items/8", {"q": None}))
try:
    @Endpoint(id="${ids.echo}")
    def f():
        pass
except ValueError as e:
    print("decorate:", e)
`);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines[0], 'failed: FAILED True');
  assert.equal(lines.splice(1, 1)[0], 'stream failed: FAILED True');
  assert.equal(lines[1], 'abab');
  assert.equal(lines[2], "{'item_id': '7', 'q': 'x'}");
  assert.equal(lines[3], "{'item_id': '8', 'q': None}", 'None is an argument left at its default, not the text "None"');
  assert.match(lines[4], /^decorate: Endpoint\(id=\.\.\.\) connects to an endpoint that already exists/);
  const wrong = await python(
    `
from strato import Endpoint, StratoRemoteError
try:
    Endpoint(id="${ids.echo}").run({})
except StratoRemoteError as e:
    print("refused:", e.status)
`,
    'not-the-key',
  );
  assert.equal(wrong.stdout.trim(), 'refused: 401');
});

test('runsync(timeout=T) gives up after T, not 2T; wait(T) ends on time when the platform stops answering', async () => {
  const r = await python(`
import http.server, os, threading, time
from strato import Endpoint

slow = Endpoint(id="${ids.slow}")
t = time.monotonic()
try:
    slow.runsync({"seconds": 6}, timeout=2)
    print("runsync ended")
except TimeoutError as e:
    print("runsync", time.monotonic() - t < 3.5, "did not end within 2 s" in str(e))

class Hangs(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = b'{"id": "j1", "status": "IN_QUEUE"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        time.sleep(20)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hangs)
threading.Thread(target=server.serve_forever, daemon=True).start()
os.environ["STRATO_API_URL"] = f"http://127.0.0.1:{server.server_address[1]}"
job = Endpoint(id="hangs").run({})
t = time.monotonic()
try:
    job.wait(2)
    print("wait ended")
except TimeoutError as e:
    print("wait", time.monotonic() - t < 4, "did not end within 2 s" in str(e))
`);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), ['runsync True True', 'wait True True']);
});

test('a wait rides out a platform that is out of reach a moment (503s, a refused connection); a 404 still ends it', async () => {
  const r = await python(`
import http.server, json, os, threading, time
from strato import Endpoint, StratoRemoteError

reads = []

class Flaky(http.server.BaseHTTPRequestHandler):
    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        self.answer(200, {"id": "j1", "status": "IN_QUEUE"})

    def do_GET(self):
        reads.append(self.path)
        if "gone" in self.path:
            return self.answer(404, {"error": "no job gone"})
        if len(reads) <= 2:
            return self.answer(503, {"error": "this node is still joining its cluster; try again in a moment"})
        self.answer(200, {"id": "j1", "status": "COMPLETED", "output": {"ok": True}})

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
threading.Thread(target=server.serve_forever, daemon=True).start()
os.environ["STRATO_API_URL"] = f"http://127.0.0.1:{server.server_address[1]}"
job = Endpoint(id="flaky").run({})
print(json.dumps(job.result(timeout=20)), len(reads))
gone = Endpoint(id="gone").run({})
try:
    gone.wait(5)
except StratoRemoteError as e:
    print("404", e.status)
`);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), ['{"ok": true} 3', '404 404']);
});
