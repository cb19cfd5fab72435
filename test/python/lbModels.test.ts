// Load-balanced routes whose parameters and answers are pydantic models, bound as FastAPI binds them: a lone model
// takes the whole body, validation errors are 422s listing each field, returned models are their JSON form, and a
// script's client sends models, datetimes, UUIDs and Enums in their JSON form.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { callJson, killAll, makeArtifact, removeTempDirs, runPython, startPython, waitFor, type Proc } from './helpers';
import { freePort } from '../helpers/ports';

const call = (method: string, path: string, body: string | undefined, url: string) => callJson(url, method, path, body);

after(() => {
  killAll();
  removeTempDirs();
});

const MODELS = `
from __future__ import annotations

import datetime, decimal, enum, uuid
from typing import Optional
from pydantic import BaseModel, Field
from strato import Endpoint

api = Endpoint(name="models", cpu="cpu3c-1-2")

class Item(BaseModel):
    name: str
    price: float
    tags: list[str] = []

class Colour(enum.Enum):
    RED = "red"

class Stored(BaseModel):
    id: uuid.UUID
    item: Item
    created: datetime.datetime
    colour: Colour
    total: decimal.Decimal
    label: str = Field(alias="displayLabel")

@api.post("/items")
def create_item(item: Item):
    return {"type": type(item).__name__, "name": item.name, "price": item.price, "tags": item.tags}

@api.put("/items/{item_id}")
def update_item(item_id: int, item: Item, dry_run: bool = False):
    return {"item_id": item_id, "item": item, "dry_run": dry_run}

@api.post("/process")
def process(text: str, repeat: int = 1, scores: list[float] = [], limit: Optional[int] = None):
    return {"text": text * repeat, "repeat": repeat, "scores": scores, "limit": limit}

@api.get("/stored")
def stored():
    item = Item(name="a", price=1.5, tags=["x"])
    return Stored(id=uuid.UUID(int=7), item=item, created=datetime.datetime(2024, 5, 1, 9, 0), colour=Colour.RED,
                  total=decimal.Decimal("12.50"), displayLabel="L")

@api.get("/echo")
def echo(when: str, id: str, colour: str, price: str = ""):
    return {"when": when, "id": id, "colour": colour, "price": price}

class Wrapper(BaseModel):
    config: str
    level: int = 0

@api.post("/config")
def set_config(config: Wrapper):
    return config
`;

describe('load-balanced routes with pydantic models (as FastAPI binds them)', () => {
  let models = '';
  let noPydantic = '';
  let server: Proc | undefined;

  before(async () => {
    const probe = await runPython(['-c', 'import pydantic, sys; sys.exit(0 if pydantic.VERSION.startswith("2") else 3)']);
    if (probe.code !== 0) {
      noPydantic = `these tests need pydantic 2 importable by ${process.env.STRATO_PYTHON || 'python3'} (pip install "pydantic>=2"): ${probe.code === 3 ? 'it has pydantic 1' : probe.stderr.trim().split('\n').pop()}`;
      return;
    }
    const dir2 = makeArtifact(
      { 'models_worker.py': MODELS },
      {
        models: {
          module: 'models_worker',
          functions: ['create_item', 'update_item', 'process', 'stored', 'echo', 'set_config'],
          loadBalanced: true,
          routes: {
            'POST /items': 'create_item',
            'PUT /items/{item_id}': 'update_item',
            'POST /process': 'process',
            'GET /stored': 'stored',
            'GET /echo': 'echo',
            'POST /config': 'set_config',
          },
        },
      },
    );
    const port = await freePort();
    server = startPython(['handler_models.py', '--rp_api_port', String(port), '--rp_api_host', '127.0.0.1'], { cwd: dir2 });
    await waitFor(() => /load-balanced endpoint 'models' on/.test(server!.stderr()) || server!.child.exitCode !== null, 'models server');
    assert.equal(server.child.exitCode, null, server.stderr());
    models = `http://127.0.0.1:${port}`;
  });
  after(() => server?.child.kill('SIGTERM'));

  test('a lone model parameter takes the whole JSON body as the model; {"item": {...}} is accepted too', async (t) => {
    if (noPydantic) return t.skip(noPydantic);
    const whole = await call('POST', '/items', JSON.stringify({ name: 'a', price: 1.5 }), models);
    assert.deepEqual([whole.status, whole.body], [200, { type: 'Item', name: 'a', price: 1.5, tags: [] }]);
    // By name, as the typed clients and the Python client send it; the model's fields converted ("2" is 2.0).
    const named = await call('POST', '/items', JSON.stringify({ item: { name: 'b', price: '2', tags: ['t'] } }), models);
    assert.deepEqual([named.status, named.body], [200, { type: 'Item', name: 'b', price: 2, tags: ['t'] }]);
    // Other parameters come from the path and the query; a model returned inside a dict is its JSON form.
    const put = await call('PUT', '/items/4?dry_run=true', JSON.stringify({ name: 'c', price: 3 }), models);
    assert.deepEqual([put.status, put.body], [200, { item_id: 4, item: { name: 'c', price: 3, tags: [] }, dry_run: true }]);
    // A body whose fields are all parameters, not all the model's, is the parameters by name.
    const byName = await call('PUT', '/items/5', JSON.stringify({ item: { name: 'd', price: 4 }, dry_run: 'yes' }), models);
    assert.deepEqual([byName.status, byName.body], [200, { item_id: 5, item: { name: 'd', price: 4, tags: [] }, dry_run: true }]);
    // A model with a field named as its parameter: {"config": {...}} is the model by name where only that reading is
    // one; {"config": "x"} is the whole body.
    const same = await call('POST', '/config', JSON.stringify({ config: { config: 'x', level: 2 } }), models);
    assert.deepEqual([same.status, same.body], [200, { config: 'x', level: 2 }]);
    const whole2 = await call('POST', '/config', JSON.stringify({ config: 'y' }), models);
    assert.deepEqual([whole2.status, whole2.body], [200, { config: 'y', level: 0 }]);
  });

  test('a body that is not a valid model is a 422 listing each field, as FastAPI lists them', async (t) => {
    if (noPydantic) return t.skip(noPydantic);
    const r = await call('POST', '/items', JSON.stringify({ name: 'a', price: 'cheap', tags: 'x' }), models);
    assert.equal(r.status, 422);
    assert.equal(r.body.error, 'invalid argument');
    assert.deepEqual(
      r.body.errors.map((e: any) => [e.loc, e.type, e.input]),
      [
        [['body', 'price'], 'float_parsing', 'cheap'],
        [['body', 'tags'], 'list_type', 'x'],
      ],
    );
    assert.match(
      r.body.detail,
      /^create_item\(\) takes the JSON body as item: Item, and the body is not a valid Item: price: Input should be a valid number, unable to parse string as a number \(got "cheap"\); tags: Input should be a valid list/,
    );
    const missing = await call('POST', '/items', JSON.stringify({ name: 'a' }), models);
    assert.deepEqual([missing.status, missing.body.errors.map((e: any) => [e.loc, e.type])], [422, [[['body', 'price'], 'missing']]]);
    const notObject = await call('POST', '/items', '[1]', models);
    assert.deepEqual([notObject.status, notObject.body.errors[0].loc, notObject.body.errors[0].type], [422, ['body'], 'model_type']);
  });

  test('body fields are validated and converted by annotation: "3" is 3, "x" for an int is a 422 naming the field', async (t) => {
    if (noPydantic) return t.skip(noPydantic);
    const ok = await call('POST', '/process', JSON.stringify({ text: 'ab', repeat: '3', scores: [1, '2.5'], limit: null }), models);
    assert.deepEqual([ok.status, ok.body], [200, { text: 'ababab', repeat: 3, scores: [1, 2.5], limit: null }]);
    const bad = await call('POST', '/process', JSON.stringify({ text: 'ab', repeat: 'x', scores: [1, 'many'] }), models);
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors, [
      { type: 'int_parsing', loc: ['body', 'repeat'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'x' },
      { type: 'float_parsing', loc: ['body', 'scores', 1], msg: 'Input should be a valid number, unable to parse string as a number', input: 'many' },
    ]);
    assert.match(
      bad.body.detail,
      /^process\(\) got invalid argument\(s\): repeat: Input should be a valid integer.*; scores\.1: Input should be a valid number/,
    );
  });

  test('a returned model is its JSON form: nested model, UUID, datetime, Enum, Decimal, aliases', async (t) => {
    if (noPydantic) return t.skip(noPydantic);
    const r = await call('GET', '/stored', undefined, models);
    assert.deepEqual(
      [r.status, r.body],
      [
        200,
        {
          id: '00000000-0000-0000-0000-000000000007',
          item: { name: 'a', price: 1.5, tags: ['x'] },
          created: '2024-05-01T09:00:00',
          colour: 'red',
          total: '12.50',
          displayLabel: 'L',
        },
      ],
    );
  });

  test('a script sends a model, a datetime, a UUID or an Enum in its JSON form (call_route, and the request every client call goes through)', async (t) => {
    if (noPydantic) return t.skip(noPydantic);
    const script = `
import datetime, enum, json, types, uuid
from pydantic import BaseModel
import strato._remote as remote
from strato._wire import request

class Item(BaseModel):
    name: str
    price: float
    tags: list[str] = []

class Colour(enum.Enum):
    RED = "red"

def create_item(item: Item): ...
def echo(when, id, colour, price=""): ...

remote.lookup = lambda name: {"url": "${models}", "key": "k", "timeout_ms": 0}
endpoint = types.SimpleNamespace(name="models", execution_timeout_ms=0)
print(json.dumps(remote.call_route(endpoint, "POST", "/items", create_item, (Item(name="a", price=1.5, tags=["t"]),), {})))
print(json.dumps(request("POST", "${models}/items", "k", Item(name="w", price=2))[1]))
print(json.dumps(remote.call_route(endpoint, "GET", "/echo", echo, (), {
    "when": datetime.datetime(2024, 5, 1, 9, 30), "id": uuid.UUID(int=3), "colour": Colour.RED, "price": 1.5})))
try:
    remote.call_route(endpoint, "POST", "/items", create_item, (b"raw",), {})
except TypeError as e:
    print("refused:", e)
`;
    const r = await runPython(['-c', script]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(JSON.parse(lines[0]), { type: 'Item', name: 'a', price: 1.5, tags: ['t'] });
    assert.deepEqual(JSON.parse(lines[1]), { type: 'Item', name: 'w', price: 2, tags: [] });
    assert.deepEqual(JSON.parse(lines[2]), { when: '2024-05-01T09:30:00', id: '00000000-0000-0000-0000-000000000003', colour: 'red', price: '1.5' });
    assert.match(lines[3], /^refused: the call's arguments cannot be sent as JSON: Object of type bytes is not JSON serializable: bytes have no JSON form/);
  });
});
