// Calling deployed endpoints: a plain Python script that imports an @Endpoint function (queue-based and a
// load-balanced route) and calls it; a chain of two endpoints calling each other; failures and the
// no-context error. Real CLI deploy, real platform, real Python on both sides.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';
import { startTestPlatform, type TestPlatform } from '../helpers/platform';
import { runPython } from '../python/helpers';
import { runPythonScript } from '../helpers/python';

let tmp: string;
let dir: string;
let p: TestPlatform;
let env: NodeJS.ProcessEnv;

/** Runs a script asynchronously: the platform runs in this process and must keep answering meanwhile. */
const python = (code: string, cwd: string, extra: NodeJS.ProcessEnv = {}) => runPythonScript(code, { cwd, env: extra });

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-remote-'));
  p = await startTestPlatform();
  env = { STRATO_API_URL: p.url, STRATO_API_KEY: p.key };
  assert.equal((await runCli(['init', 'calls'], { cwd: tmp })).code, 0);
  dir = path.join(tmp, 'calls');
  writeFileSync(
    path.join(dir, 'chain_worker.py'),
    `from strato import Endpoint

from cpu_worker import cpu_stats as stats_of


@Endpoint(name="summarize", cpu="cpu3c-1-2")
def summarize(numbers: list, label: str = "stats") -> dict:
    """Calls the cpu-stats endpoint and labels its answer."""
    from cpu_worker import cpu_stats

    return {"label": label, "stats": cpu_stats(numbers)}


@Endpoint(name="twice", cpu="cpu3c-1-2")
def twice(numbers: list) -> float:
    """Calls summarize, defined above, and cpu-stats, imported at the top: deploy sees both calls."""
    return summarize(numbers)["stats"]["mean"] + stats_of(numbers)["mean"]


@Endpoint(name="pipeline", cpu="cpu3c-1-2")
async def pipeline(numbers: list) -> dict:
    """Awaits a plain def endpoint, as the reference product's code does."""
    return {"stats": await stats_of(numbers)}


@Endpoint(name="dynamic", cpu="cpu3c-1-2")
def dynamic(numbers: list) -> dict:
    """Calls cpu-stats by a name built at run time: no deploy can see that."""
    import cpu_worker

    return getattr(cpu_worker, "cpu" + "_stats")(numbers)


@Endpoint(name="countdown", cpu="cpu3c-1-2")
async def countdown(n: int):
    """An async generator: a caller iterates it with async for, deployed or not."""
    for i in range(n, 0, -1):
        yield i


@Endpoint(name="ticks", cpu="cpu3c-1-2")
def ticks(n: int, fail_at: int = -1, big: int = 0, delay: float = 0):
    """A generator: its values reach a caller as they are yielded."""
    import time

    for i in range(n):
        if i == fail_at:
            raise ValueError(f"stopped at {i}")
        time.sleep(delay)
        yield "x" * big if big else i


@Endpoint(name="sleepy", cpu="cpu3c-1-2", execution_timeout_ms=1500, workers=(0, 1))
def sleepy(seconds: float) -> dict:
    """Outlasts its call's time-out when asked to."""
    import time

    time.sleep(seconds)
    return {"slept": seconds}


@Endpoint(name="fails", cpu="cpu3c-1-2")
def fails(reason: str) -> dict:
    """Always fails."""
    raise ValueError(reason)


@Endpoint(name="model", cpu="cpu3c-1-2")
class Model:
    """A class endpoint: built once per worker."""

    def __init__(self, times: int = 1, suffix: str = ""):
        import os

        self.pid = os.getpid()
        self.times, self.suffix = times, suffix

    def predict(self, text: str) -> dict:
        import os

        return {"text": text.upper() * self.times + self.suffix, "worker": os.environ.get("STRATO_WORKER_ID"), "pid": self.pid}

    def count(self, n: int):
        yield from range(n)


search = Endpoint(name="search", cpu="cpu3c-1-2", workers=(0, 1))


@search.get("/find")
def find(ids: list[int], tag: str | None = None) -> dict:
    """A GET route: its arguments travel in the query."""
    return {"ids": ids, "tag": tag}
`,
  );
  const r = await runCli(['deploy'], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
});
after(async () => {
  await p?.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('a script calls a queue-based function and a load-balanced route of the deployed app', async () => {
  const r = await python(
    `from cpu_worker import cpu_stats
from lb_worker import process, health
print(cpu_stats([1, 2, 3])["mean"])
print(process("abc", uppercase=True)["text"])
print(health()["status"])
`,
    dir,
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  // The mean is the float the function returned (2.0), not a re-encoded 2.
  assert.deepEqual(r.stdout.trim().split('\n'), ['2.0', 'ABC', 'ok']);
});

test('a GET route called from a script sends a list as its repeated key and leaves a None out, as the clients do', async () => {
  const r = await python(`from chain_worker import find\nprint(find([3, 4]))\nprint(find(ids=[5], tag="t"))\n`, dir, env);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), ["{'ids': [3, 4], 'tag': None}", "{'ids': [5], 'tag': 't'}"]);
});

test('await of a plain def endpoint (the reference product makes every one awaitable) gets its result; a call without await too', async () => {
  const r = await python(
    `import asyncio
from cpu_worker import cpu_stats
from chain_worker import pipeline


async def main():
    return (await cpu_stats([1, 2, 3]))["mean"], cpu_stats([2, 4])["mean"], (await pipeline([4, 6]))["stats"]["mean"]


print(asyncio.run(main()))
`,
    dir,
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), '(2.0, 3.0, 5.0)');
});

test('a chain of two endpoints: summarize calls cpu-stats through the control plane', async () => {
  const r = await python(`from chain_worker import summarize\nprint(summarize([2, 4], label="x"))\n`, dir, env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), "{'label': 'x', 'stats': {'count': 2, 'mean': 3.0, 'min': 2, 'max': 4}}");
});

test('an endpoint calls one defined in its own file and one imported at the top of it: deploy gave it the key', async () => {
  const r = await python(`from chain_worker import twice\nprint(twice([2, 4]))\n`, dir, env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), '6.0');
});

test('a generator endpoint called from a script streams: the values before a failure arrive, then the error; split values come whole', async () => {
  const r = await python(
    `from chain_worker import ticks
got = []
try:
    for v in ticks(4, fail_at=2):
        got.append(v)
except Exception as e:
    print(type(e).__name__, got, "ValueError: stopped at 2" in str(e))
print([len(v) for v in ticks(2, big=1_500_000)])
`,
    dir,
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), ['StratoRemoteError [0, 1] True', '[1500000, 1500000]']);
});

test('a streamed call the script stops reading (a break, the generator closed) cancels its job, which would run on for nobody', async () => {
  const r = await python(
    `import time
from strato import _wire
from strato._context import lookup
from chain_worker import ticks
g = ticks(100, delay=0.1)
print(next(g))
g.close()
ep = lookup("ticks")
for _ in range(50):
    status, h = _wire.request("GET", ep["url"] + "/health", ep["key"])
    if h["jobs"]["inProgress"] == 0 and h["jobs"]["inQueue"] == 0:
        break
    time.sleep(0.1)
print(h["jobs"]["inProgress"], h["jobs"]["inQueue"])
`,
    dir,
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), ['0', '0 0'], 'the 10 s job was cancelled, not left running');
});

test('an async generator endpoint called from a script is an async generator, deployed or run locally', async () => {
  const script = `import asyncio
from chain_worker import countdown


async def main():
    gen = countdown(3)
    print(type(gen).__name__, [x async for x in gen])


asyncio.run(main())
`;
  for (const extra of [env, { ...env, STRATO_LOCAL: '1' }]) {
    const r = await python(script, dir, extra);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'async_generator [3, 2, 1]');
  }
});

test('a call deploy cannot see (a name built at run time) fails saying how to make it visible, not to set a key in .env', async () => {
  const r = await python(`from chain_worker import dynamic\ndynamic([1])\n`, dir, env);
  assert.notEqual(r.code, 0);
  assert.match(
    r.stderr,
    /endpoint 'dynamic' calls endpoint 'cpu-stats' but was deployed without a key to call others: .*import that function inside the calling function/,
  );
});

test("arguments over the platform's body limit are refused before they are sent, saying so (the platform's 413 came as a broken pipe)", async () => {
  const r = await python(
    `from cpu_worker import cpu_stats
from lb_worker import process
for call in (lambda: cpu_stats([1.5] * 6_000_000), lambda: process("a" * 25_000_000)):
    try:
        call()
    except Exception as e:
        print(type(e).__name__, e, getattr(e, "status", None))
`,
    dir,
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 2, r.stdout);
  for (const line of lines)
    assert.match(
      line,
      /^StratoRemoteError the call's arguments are 2\d\.\d MB as JSON, over the 20 MB the platform takes for a call \(HTTP 413\): pass large data by reference .* 413$/,
    );
});

test('a call its signature refuses raises TypeError at once, before any request (no worker starts to say so)', async () => {
  // The platform's address is a closed port: an error about reaching it would mean a request was tried.
  const r = await python(
    `from cpu_worker import cpu_stats
for call in (lambda: cpu_stats(), lambda: cpu_stats([1], colour=1), lambda: cpu_stats([1], [2]), lambda: cpu_stats(nums=[1])):
    try:
        call()
    except TypeError as e:
        print("TypeError:", e)
`,
    dir,
    { STRATO_API_URL: 'http://127.0.0.1:9', STRATO_API_KEY: 'k' },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), [
    "TypeError: cpu_stats(): missing a required argument: 'numbers'",
    "TypeError: cpu_stats(): got an unexpected keyword argument 'colour'",
    'TypeError: cpu_stats(): too many positional arguments',
    // A misspelled name is named, as a local call names it, not the required argument it leaves out.
    "TypeError: cpu_stats(): got an unexpected keyword argument 'nums'",
  ]);
});

test("a call whose time-out is the endpoint's execution timeout raises the platform's TIMED_OUT, not 'may still complete'", async () => {
  // One warm worker, busy for a second with another call: the job starts late, and is still running when its call's
  // 1500 ms pass; the platform stops it 1500 ms from its start, which the call waits for and says.
  const r = await python(
    `import threading, time
from chain_worker import sleepy
for _ in range(40):  # warm: its first call may outlast 1500 ms of cold start on a busy machine
    try:
        sleepy(0.1)
        break
    except Exception:
        time.sleep(0.5)
threading.Thread(target=lambda: sleepy(1.0)).start()
time.sleep(0.2)
sleepy(3)
`,
    dir,
    env,
  );
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /StratoRemoteError: endpoint 'sleepy' job \S+ TIMED_OUT: the job ran longer than the endpoint's execution timeout of 1500 ms/);
  assert.doesNotMatch(r.stderr, /it was still running\); the job goes on and may still complete/);
});

test("a failed job raises the job's error in the script", async () => {
  const r = await python(
    `from strato._remote import StratoRemoteError
from chain_worker import fails
try:
    fails("bad input")
except StratoRemoteError as e:
    print("raised:", e.status, e)
`,
    dir,
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /raised: FAILED endpoint 'fails' job sync-\S+ FAILED: ValueError: bad input/);
});

test("a script in a project's subfolder finds the project (its name is the app) and the key in the project's .env", async () => {
  const scripts = path.join(dir, 'scripts');
  mkdirSync(scripts, { recursive: true });
  writeFileSync(path.join(dir, '.env'), `STRATO_API_KEY=${p.key}\n`);
  try {
    const r = await python(
      `import sys\nsys.path.insert(0, ${JSON.stringify(dir)})\nfrom cpu_worker import cpu_stats\nprint(cpu_stats([4, 6])["mean"])\n`,
      scripts,
      {
        STRATO_API_URL: p.url,
        STRATO_API_KEY: '',
      },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), '5.0');
  } finally {
    rmSync(path.join(dir, '.env'));
  }
});

test('a class endpoint built in a script is the deployed one: its methods run on a worker, not in the script', async () => {
  const r = await python(
    `import os
from chain_worker import Model
m = Model()
out = m.predict("hi")
print(out["text"], out["worker"] is not None, out["pid"] != os.getpid())
print(list(m.count(3)))
# The constructor's arguments go with each call, as the reference product sends them: an instance per set.
print(Model(2, suffix="!").predict("hi")["text"], Model(times=3).predict("ab")["text"], m.predict("x")["text"])
for bad in (lambda: Model(1, 2, 3), lambda: m.train()):
    try:
        bad()
    except (TypeError, AttributeError) as e:
        print(f"{type(e).__name__}: {e}")
`,
    dir,
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.deepEqual(lines.slice(0, 3), ['HI True True', '[0, 1, 2]', 'HIHI! ABABAB X']);
  assert.match(lines[3], /^TypeError: Model\(\): too many positional arguments/);
  assert.match(lines[4], /^AttributeError: the deployed 'Model' has no method 'train' to call: its public methods are count, predict/);
});

test('a script whose file is outside the project (pytest, uvicorn, a console script) run in the project finds it', async () => {
  const tool = mkdtempSync(path.join(tmp, 'tool-'));
  const script = path.join(tool, 'runner.py');
  writeFileSync(script, `import sys\nsys.path.insert(0, ${JSON.stringify(dir)})\nfrom cpu_worker import cpu_stats\nprint(cpu_stats([2, 4])["mean"])\n`);
  const r = await runPython([script], { cwd: dir, env: env as Record<string, string> });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), '3.0');
});

test('STRATO_APP and STRATO_ENV let a script that moved elsewhere find the app', async () => {
  const elsewhere = path.join(tmp, 'elsewhere');
  mkdirSync(elsewhere, { recursive: true });
  const r = await python(
    `import sys\nsys.path.insert(0, ${JSON.stringify(dir)})\nfrom cpu_worker import cpu_stats\nprint(cpu_stats([7])["max"])\n`,
    elsewhere,
    { ...env, STRATO_APP: 'calls', STRATO_ENV: 'production' },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), '7');
});

test('without any platform the call raises the runtime error naming the endpoint and what helps', async () => {
  const nowhere = mkdtempSync(path.join(tmp, 'nowhere-'));
  const r = await python(`import sys\nsys.path.insert(0, ${JSON.stringify(dir)})\nfrom cpu_worker import cpu_stats\ncpu_stats([1])\n`, nowhere, {
    STRATO_API_URL: '',
    STRATO_API_KEY: '',
    STRATO_APP: '',
    STRATO_ENV: '',
    STRATO_DATA_DIR: path.join(nowhere, 'data'),
  });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /StratoContextError: no app context for endpoint 'cpu-stats' \(no Strato platform is running here/);
  // What helps when no platform runs: one to start, the dev server, or a remote one (STRATO_APP cannot help).
  assert.match(
    r.stderr,
    /Start the local one \(strato platform start\), run it through the development server \(strato dev\), or set STRATO_API_URL and STRATO_API_KEY/,
  );
  // STRATO_ENV naming no environment of the app is said as such, with the ones there are.
  const typo = await python(`from cpu_worker import cpu_stats\ncpu_stats([1])\n`, dir, { ...env, STRATO_ENV: 'prod' });
  assert.match(typo.stderr, /app '\S+' has no environment 'prod' \(STRATO_ENV\); it has production\)\. Set STRATO_ENV to one of those or unset it\./);
  const unknownApp = await python(`import sys\nsys.path.insert(0, ${JSON.stringify(dir)})\nfrom cpu_worker import cpu_stats\ncpu_stats([1])\n`, nowhere, env);
  assert.match(unknownApp.stderr, /no app context for endpoint 'cpu-stats' \(app 'nowhere-\w+' \(from the project directory\) is not deployed\)/);
});

test("a wrong or revoked key is named as such, in the platform's words", async () => {
  const r = await python(`from cpu_worker import cpu_stats\ncpu_stats([1])\n`, dir, { ...env, STRATO_API_KEY: 'wrong' });
  assert.notEqual(r.code, 0);
  assert.match(
    r.stderr,
    /refused the API key \(401\): missing or invalid API key: send "Authorization: Bearer <key>" with the key of this platform \(STRATO_API_KEY\)/,
  );
  const bob = await p.cp.createKey('bob-remote', 'invoke');
  await p.cp.revokeKey('bob-remote');
  const revoked = await python(`from cpu_worker import cpu_stats\ncpu_stats([1])\n`, dir, { ...env, STRATO_API_KEY: bob.secret });
  assert.match(revoked.stderr, /refused the API key \(401\): the API key "bob-remote" was revoked at \S+; ask an admin of this platform for a new key/);
});

test('a STRATO_API_URL that is no http(s) URL is said as the CLI says it, not a traceback out of urllib', async () => {
  for (const [url, said] of [
    ['127.0.0.1:7450', /StratoContextError: STRATO_API_URL "127\.0\.0\.1:7450" is not a URL; give an address such as http:\/\/127\.0\.0\.1:7450/],
    ['http://127.0.0.1:notaport', /StratoContextError: STRATO_API_URL "http:\/\/127\.0\.0\.1:notaport" is not a URL/],
    ['localhost:7450', /StratoContextError: STRATO_API_URL must be an http:\/\/ or https:\/\/ URL such as http:\/\/127\.0\.0\.1:7450, got "localhost:7450"/],
  ] as const) {
    const r = await python(`from cpu_worker import cpu_stats\ncpu_stats([1])\n`, dir, { ...env, STRATO_API_URL: url });
    assert.match(r.stderr, said, r.stderr);
    assert.doesNotMatch(r.stderr, /ValueError/);
  }
});
