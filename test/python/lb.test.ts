// The load-balanced side of the Python runtime: the route server a platform worker runs (ready with its port,
// /ping, path/query/body arguments, status tuples, error shapes) and the same server run locally without a platform.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { callJson, FakePlatform, killAll, makeArtifact, removeTempDirs, runPython, startPython, waitFor, withTimeout, type Proc } from './helpers';
import { freePort } from '../helpers/ports';
import { WORKER_TOKEN_HEADER } from '../../engine/src/platform/lbRouter';

const API = `
import asyncio
from typing import List, Optional
from strato import Endpoint, CpuInstanceType

api = Endpoint(name="api", cpu=CpuInstanceType.CPU3C_2_4, workers=(1, 3))

@api.post("/process")
def process(text: str, upper: bool = False):
    return {"text": text.upper() if upper else text}

@api.get("/health")
def health():
    return {"ok": True}

@api.get("/items/{item_id}")
def get_item(item_id: int, q: str = "", flag: bool = False):
    return {"item_id": item_id, "q": q, "flag": flag}

@api.get("/search")
def search(limit: Optional[int] = None, ratio: "float | None" = None, exact: bool | None = None, tag: Optional[str] = None,
           ids: list[int] | None = None, names: "List[str]" = (), flags: tuple[bool, ...] = ()):
    return {"limit": limit, "ratio": ratio, "exact": exact, "tag": tag, "ids": ids, "names": names, "flags": flags}

@api.delete("/items/{item_id}")
async def delete_item(item_id: int):
    await asyncio.sleep(0.001)
    return None

@api.post("/boom")
def boom():
    raise RuntimeError("exploded")

@api.post("/exit")
def exits():
    import sys
    sys.exit(3)

@api.put("/things")
def create_thing(name: str):
    return {"name": name}, 201

class HTTPError(Exception):
    def __init__(self, status_code, detail):
        super().__init__(detail)
        self.status_code = status_code
        self.detail = detail

@api.get("/teapot")
def teapot():
    raise HTTPError(418, "short and stout")

@api.get("/surrogate")
def surrogate():
    return {"s": "a\\udc80b"}

@api.post("/repeat")
def repeat(text: str, times: int = 1, ratio: Optional[float] = None, loud: bool = False, extra: list = ()):
    return {"text": text * times, "times": times, "ratio": ratio, "loud": loud}

import dataclasses, datetime, decimal, enum, sys, uuid

class Colour(enum.Enum):
    RED = "red"
    PAIR = (1, 2)

@dataclasses.dataclass
class Point:
    x: int
    at: datetime.date

@api.get("/values")
def values():
    return {
        "when": datetime.datetime(2024, 5, 1, 12, 30, 5, 250000, tzinfo=datetime.timezone.utc),
        "day": datetime.date(2024, 5, 1), "time": datetime.time(8, 15), "id": uuid.UUID(int=1),
        "money": [decimal.Decimal("1.50"), decimal.Decimal("10")], "colours": [Colour.RED, Colour.PAIR],
        "set": {3, 1, 2}, "frozen": frozenset(["b", "a"]), "pair": (1, "x"), "point": Point(2, datetime.date(2024, 1, 2)),
        "nested": {"deeper": [{"id": uuid.UUID(int=2)}]}, "pydantic_loaded": "pydantic" in sys.modules,
    }

@api.get("/bytes")
def raw_bytes():
    return {"data": b"abc"}
`;

const ROUTES = {
  'POST /process': 'process',
  'GET /health': 'health',
  'GET /items/{item_id}': 'get_item',
  'GET /search': 'search',
  'DELETE /items/{item_id}': 'delete_item',
  'POST /boom': 'boom',
  'POST /exit': 'exits',
  'PUT /things': 'create_thing',
  'GET /teapot': 'teapot',
  'GET /surrogate': 'surrogate',
  'POST /repeat': 'repeat',
  'GET /values': 'values',
  'GET /bytes': 'raw_bytes',
};

let dir: string;
let platform: FakePlatform;
let worker: Proc;
let base: string;

/** A call to the worker as the platform's proxy makes it (with the worker's token), or to a local server (none). */
const call = (method: string, path: string, body?: string, url = base) =>
  callJson(url, method, path, body, url === base ? { [WORKER_TOKEN_HEADER]: platform.token } : {});

before(async () => {
  dir = makeArtifact({ 'lb_worker.py': API }, { api: { module: 'lb_worker', functions: Object.values(ROUTES), loadBalanced: true, routes: ROUTES } });
  platform = new FakePlatform();
  await platform.start();
  worker = startPython(['handler_api.py'], { cwd: dir, env: platform.workerEnv({ STRATO_LB_PORT: '0' }) });
  await waitFor(() => platform.ready[0]?.port, `ready with a port\n${worker.stderr()}`);
  base = `http://127.0.0.1:${platform.ready[0].port}`;
});
after(async () => {
  killAll();
  await platform.stop();
  removeTempDirs();
});

describe('load-balanced worker', () => {
  test('posts ready with the port it listens on, and heartbeats', async () => {
    assert.ok(platform.ready[0].port! > 0);
    await waitFor(() => platform.heartbeats.length > 0, 'a heartbeat');
    assert.deepEqual(platform.heartbeats[0].jobs, []);
  });

  test('GET /ping answers healthy', async () => {
    assert.deepEqual(await call('GET', '/ping').then((r) => [r.status, r.body]), [200, { status: 'healthy' }]);
  });

  test("answers only requests that carry its token, as the platform's proxy sends them: its port is open to the host's other processes", async () => {
    const refused: Record<string, string>[] = [{}, { [WORKER_TOKEN_HEADER]: 'not-the-token' }, { authorization: `Bearer ${platform.token}` }];
    for (const headers of refused) {
      const r = await callJson(base, 'POST', '/process', JSON.stringify({ text: 'no key' }), headers);
      assert.equal(r.status, 401);
      assert.match(r.body.detail, /^this worker answers its platform only: call the endpoint through the platform, \/lb\/<endpoint id>\/<route>/);
      assert.equal((await callJson(base, 'GET', '/ping', undefined, headers)).status, 401);
    }
    assert.equal((await call('POST', '/process', JSON.stringify({ text: 'ok' }))).status, 200);
  });

  test('JSON body fields are the arguments of a POST route', async () => {
    const r = await call('POST', '/process', JSON.stringify({ text: 'hi', upper: true }));
    assert.deepEqual([r.status, r.body], [200, { text: 'HI' }]);
    assert.equal(r.headers.get('content-type'), 'application/json');
  });

  test('answers are compact JSON with non-ASCII text as UTF-8, as FastAPI renders them; a lone surrogate as its escape', async () => {
    const res = await fetch(`${base}/process`, {
      method: 'POST',
      body: JSON.stringify({ text: 'こんにちは 😀' }),
      headers: { 'content-type': 'application/json', [WORKER_TOKEN_HEADER]: platform.token },
    });
    assert.equal(await res.text(), '{"text":"こんにちは 😀"}');
    const lone = await fetch(`${base}/surrogate`, { headers: { [WORKER_TOKEN_HEADER]: platform.token } });
    assert.equal(lone.status, 200);
    const text = await lone.text();
    assert.equal(text, '{"s":"a\\udc80b"}');
    assert.deepEqual(JSON.parse(text), { s: 'a\udc80b' });
  });

  test('path and query parameters are arguments, converted by annotation', async () => {
    const r = await call('GET', '/items/7?q=abc&flag=true');
    assert.deepEqual(r.body, { item_id: 7, q: 'abc', flag: true });
    assert.deepEqual((await call('GET', '/health')).body, { ok: true });
    // An Optional of int, float or bool is converted too, however it is spelled; an Optional[str] stays text.
    const s = await call('GET', '/search?limit=3&ratio=0.5&exact=false&tag=7');
    assert.deepEqual(s.body, { limit: 3, ratio: 0.5, exact: false, tag: '7', ids: null, names: [], flags: [] });
    assert.equal((await call('GET', '/search?limit=three')).status, 422);
    // A list, set or tuple parameter is its key repeated (?ids=1&ids=2), each item converted as its type says.
    const lists = await call('GET', '/search?ids=1&ids=2&names=a&flags=true&flags=0&tag=x&tag=y');
    assert.deepEqual(lists.body, { limit: null, ratio: null, exact: null, tag: 'y', ids: [1, 2], names: ['a'], flags: [true, false] });
    const bad = await call('GET', '/search?ids=1&ids=two');
    assert.deepEqual([bad.status, bad.body.errors.map((e: any) => [e.loc, e.type])], [422, [[['query', 'ids', 1], 'int_parsing']]]);
    assert.match(bad.body.detail, /ids\.1: Input should be a valid integer, unable to parse string as an integer \(got "two"\)/);
    // What the Python client sends (strato._wire.query_string) is what the route reads back.
    const sent = await runPython([
      '-c',
      'from strato._wire import query_string; print(query_string({"ids": [4, 5], "exact": True, "limit": None, "tag": "a&b"}))',
    ]);
    assert.equal(sent.code, 0, sent.stderr);
    const back = await call('GET', `/search?${sent.stdout.trim()}`);
    assert.deepEqual(back.body, { limit: null, ratio: null, exact: true, tag: 'a&b', ids: [4, 5], names: [], flags: [] });
  });

  test('an async route runs to completion; None answers null', async () => {
    const r = await call('DELETE', '/items/3');
    assert.deepEqual([r.status, r.body], [200, null]);
  });

  test('a (body, status) tuple sets the status', async () => {
    const r = await call('PUT', '/things', JSON.stringify({ name: 'x' }));
    assert.deepEqual([r.status, r.body], [201, { name: 'x' }]);
  });

  test('unknown path 404 and wrong method 405, as {error, detail}', async () => {
    const missing = await call('GET', '/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error, 'not found');
    assert.match(missing.body.detail, /no route matches GET \/nope/);
    const wrong = await call('GET', '/process');
    assert.equal(wrong.status, 405);
    assert.deepEqual(Object.keys(wrong.body).sort(), ['detail', 'error']);
    assert.equal(wrong.headers.get('allow'), 'POST');
    assert.equal((await call('POST', '/ping')).status, 405);
  });

  test("bad JSON or an unknown field are 400; a missing argument or a path value that does not convert are 422 with FastAPI's items", async () => {
    const bad = await call('POST', '/process', '{"text": ');
    assert.deepEqual([bad.status, bad.body.error], [400, 'invalid JSON body']);
    const missing = await call('POST', '/process', '{}');
    assert.deepEqual([missing.status, missing.body.error], [422, 'missing argument']);
    assert.match(missing.body.detail, /process\(\) missing required argument\(s\): 'text'/);
    assert.deepEqual(missing.body.errors, [{ type: 'missing', loc: ['body', 'text'], msg: 'Field required', input: null }]);
    const extra = await call('POST', '/process', '{"text": "a", "colour": 1}');
    assert.deepEqual([extra.status, extra.body.error], [400, 'unexpected argument']);
    const notInt = await call('GET', '/items/abc');
    assert.deepEqual(
      [notInt.status, notInt.body.error, notInt.body.detail],
      [
        422,
        'invalid argument',
        'get_item() got invalid argument(s): item_id: Input should be a valid integer, unable to parse string as an integer (got "abc")',
      ],
    );
    assert.deepEqual(
      notInt.body.errors.map((e: any) => [e.loc, e.type]),
      [[['path', 'item_id'], 'int_parsing']],
    );
    const notObject = await call('POST', '/process', '[1]');
    assert.equal(notObject.status, 400);
    // Nested deeper than Python's decoder goes: the client's input, not the route's failure.
    const deep = await call('POST', '/process', `{"text": ${'['.repeat(5000)}${']'.repeat(5000)}}`);
    assert.deepEqual([deep.status, deep.body.error], [400, 'invalid JSON body']);
    assert.match(deep.body.detail, /nests arrays and objects deeper than Python's JSON decoder goes/);
  });

  test("sys.exit in a route is that request's 500, logged; the worker goes on serving", async () => {
    const r = await call('POST', '/exit');
    assert.deepEqual([r.status, r.body], [500, { error: 'internal server error', detail: 'SystemExit: 3' }]);
    await waitFor(() => /POST \/exit failed: SystemExit: 3/.test(worker.stderr()), 'the failure in the worker log');
    assert.equal((await call('GET', '/health')).status, 200);
  });

  test('an exception is a 500 whose detail is the exception text, never a stack trace', async () => {
    const r = await call('POST', '/boom');
    assert.deepEqual([r.status, r.body], [500, { error: 'internal server error', detail: 'RuntimeError: exploded' }]);
    await waitFor(() => /RuntimeError: exploded/.test(worker.stderr()), 'the traceback in the worker log');
  });

  test('an exception with status_code answers that status', async () => {
    const r = await call('GET', '/teapot');
    assert.deepEqual([r.status, r.body.detail], [418, 'short and stout']);
  });

  test('the same routes run locally without a platform (python handler_api.py --rp_api_port N)', async () => {
    const port = await freePort();
    const local = startPython(['handler_api.py', '--rp_api_port', String(port), '--rp_api_host', '127.0.0.1'], { cwd: dir });
    await waitFor(() => /load-balanced endpoint 'api' on/.test(local.stderr()) || local.child.exitCode !== null, 'local server');
    const url = `http://127.0.0.1:${port}`;
    assert.deepEqual((await call('POST', '/process', '{"text": "x"}', url)).body, { text: 'x' });
    assert.deepEqual((await call('GET', '/ping', undefined, url)).body, { status: 'healthy' });
    local.child.kill('SIGTERM');
    assert.equal(await withTimeout(local.exited, 10000, 'local server exit'), 0);
  });

  test('body fields are checked and converted by annotation (no pydantic): a wrong value is a 422 naming the field', async () => {
    // pydantic's lax rules, as FastAPI applies them: "3" is 3 for an int, "yes" true for a bool, 3 is not a str.
    const ok = await call('POST', '/repeat', JSON.stringify({ text: 'ab', times: '3', ratio: '0.5', loud: 'yes' }));
    assert.deepEqual([ok.status, ok.body], [200, { text: 'ababab', times: 3, ratio: 0.5, loud: true }]);
    assert.deepEqual((await call('POST', '/repeat', JSON.stringify({ text: 'a', times: 2.0, ratio: null }))).body, {
      text: 'aa',
      times: 2,
      ratio: null,
      loud: false,
    });
    const bad = await call('POST', '/repeat', JSON.stringify({ text: 'ab', times: 'x' }));
    assert.equal(bad.status, 422);
    assert.deepEqual(Object.keys(bad.body).sort(), ['detail', 'error', 'errors']);
    assert.equal(bad.body.error, 'invalid argument');
    assert.equal(bad.body.detail, 'repeat() got invalid argument(s): times: Input should be a valid integer, unable to parse string as an integer (got "x")');
    assert.deepEqual(bad.body.errors, [
      { type: 'int_parsing', loc: ['body', 'times'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' },
    ]);
    const several = await call('POST', '/repeat', JSON.stringify({ text: 5, times: 2.5, loud: 2 }));
    assert.equal(several.status, 422);
    assert.deepEqual(
      several.body.errors.map((e: any) => [e.loc.join('.'), e.type]),
      [
        ['body.text', 'string_type'],
        ['body.times', 'int_from_float'],
        ['body.loud', 'bool_parsing'],
      ],
    );
    // A missing argument is a 422 too, as FastAPI answers it.
    assert.equal((await call('POST', '/repeat', JSON.stringify({ times: 2 }))).status, 422);
  });

  test('answers hold datetimes, UUIDs, Decimals, Enums, sets, tuples and dataclasses in their JSON form, as FastAPI renders them', async () => {
    const r = await call('GET', '/values');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      when: '2024-05-01T12:30:05.250000+00:00',
      day: '2024-05-01',
      time: '08:15:00',
      id: '00000000-0000-0000-0000-000000000001',
      money: [1.5, 10],
      colours: ['red', [1, 2]],
      set: [1, 2, 3],
      frozen: ['a', 'b'],
      pair: [1, 'x'],
      point: { x: 2, at: '2024-01-02' },
      nested: { deeper: [{ id: '00000000-0000-0000-0000-000000000002' }] },
      // The runtime never imports pydantic itself (python3 here has it installed): a worker that does not use it does not pay for it.
      pydantic_loaded: false,
    });
  });

  test('bytes in an answer are a 500 that says how to send them, logged', async () => {
    const r = await call('GET', '/bytes');
    assert.equal(r.status, 500);
    assert.equal(r.body.error, 'response is not JSON serializable');
    assert.match(
      r.body.detail,
      /^TypeError: Object of type bytes is not JSON serializable: bytes have no JSON form; send text \(value\.decode\(\)\) or base64/,
    );
    await waitFor(() => /GET \/bytes: the answer cannot be sent as JSON/.test(worker.stderr()), 'the failure in the worker log');
  });

  test('SIGTERM stops the worker with status 0', async () => {
    worker.child.kill('SIGTERM');
    assert.equal(await withTimeout(worker.exited, 10000, 'worker exit'), 0);
  });
});

// Routes of a project written for the reference product, whose load-balanced workers are a FastAPI app: pydantic
// models as the body, fields validated and converted by annotation, and answers FastAPI would serialise.
