// What the client of an environment offers, from Python source and an environment as the control plane lists it:
// which member calls which endpoint (a member never moves to another endpoint when one is deployed beside it), and
// what a route's caller receives, in the TypeScript module and the OpenAPI document alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeFiles } from '../helpers/analysis';
import { environmentOpenApiDocument } from '../../engine/src/clientgen/openapi';
import { typescriptClient } from '../../engine/src/clientgen/typescript';
import type { EndpointSummary, EnvironmentSummary } from '../../engine/src/deploy/environments';

const HEAD = 'from strato import Endpoint\nfrom typing import Literal, Optional, TypedDict, Union\n\n';

/** The environment where each endpoint of `files` is deployed (queue-based, or load-balanced with `routes`). */
function environment(endpoints: Array<Pick<EndpointSummary, 'name'> & Partial<EndpointSummary>>): EnvironmentSummary {
  return {
    app: 'a',
    environment: 'production',
    buildId: null,
    endpoints: endpoints.map((e) => ({ type: 'QUEUE', id: `${e.name}-id`, url: `http://h/v2/${e.name}-id`, routes: [], executionTimeoutMs: null, ...e })),
    volumes: [],
  };
}

/** Each member of the client and the endpoint it calls. */
async function members(files: Record<string, string>, names: string[]): Promise<{ members: Record<string, string>; text: string }> {
  const model = await analyzeFiles(files);
  const { text, surface } = await typescriptClient(model, environment(names.map((name) => ({ name }))));
  return { members: Object.fromEntries(surface.endpoints.map((e) => [e.member, e.endpoint])), text };
}

test('a function name that two endpoints share is a member of neither: deploying a second `handler` does not move strato.handler', async () => {
  const zeta = { 'zeta.py': `${HEAD}@Endpoint(name="zeta")\ndef handler(n: int) -> int:\n    return n\n` };
  const before = await members(zeta, ['zeta']);
  assert.deepEqual(before.members, { handler: 'zeta' });
  assert.match(before.text, /export interface HandlerInput \{/);

  const both = { ...zeta, 'alpha.py': `${HEAD}@Endpoint(name="alpha")\ndef handler(s: str) -> str:\n    return s\n` };
  const after = await members(both, ['alpha', 'zeta']);
  assert.deepEqual(after.members, { alpha: 'alpha', zeta: 'zeta' }, 'strato.handler is gone: the code that used it stops compiling');
  assert.doesNotMatch(after.text, /\bHandler(Input|Output)\b/, 'nor do the types named after it move');
  assert.match(after.text, /export interface ZetaInput \{\n {2}n: number;\n\}/);
  assert.match(after.text, /export interface AlphaInput \{\n {2}s: string;\n\}/);
  assert.match(after.text, /zeta: QueueFunction<ZetaInput, ZetaOutput>;/);
});

test("a function named like another endpoint does not take that endpoint's member", async () => {
  const beta = { 'beta.py': `${HEAD}@Endpoint(name="beta")\ndef beta(n: int) -> int:\n    return n\n` };
  assert.deepEqual((await members(beta, ['beta'])).members, { beta: 'beta' });
  // alpha sorts first: it took `beta` and beta's own function became strato.beta2.
  const both = { ...beta, 'alpha.py': `${HEAD}@Endpoint(name="alpha")\ndef beta(s: str) -> str:\n    return s\n` };
  assert.deepEqual((await members(both, ['alpha', 'beta'])).members, { alpha: 'alpha', beta: 'beta' });
  const unique = { ...beta, 'gamma.py': `${HEAD}@Endpoint(name="gamma")\ndef shout(s: str) -> str:\n    return s\n` };
  assert.deepEqual((await members(unique, ['beta', 'gamma'])).members, { beta: 'beta', shout: 'gamma' }, 'a name no one else claims stays');
});

test('endpoint names one in camelCase (lb-api, lb_api): neither takes lbApi, each spells its separator, and the client says so', async () => {
  const api = (name: string, fn: string) => `${HEAD}api = Endpoint(name="${name}", cpu="cpu3c-1-2")\n\n@api.get("/items")\ndef ${fn}() -> int:\n    return 1\n`;
  const one = { 'a.py': api('lb-api', 'items') };
  const model1 = await analyzeFiles(one);
  const lb = (name: string) => ({ name, type: 'LOAD_BALANCED' as const, routes: [{ method: 'GET', path: '/items', function: 'items' }] });
  const before = await typescriptClient(model1, environment([lb('lb-api')]));
  assert.deepEqual(
    before.surface.endpoints.map((e) => [e.member, e.endpoint]),
    [['lbApi', 'lb-api']],
  );
  const model2 = await analyzeFiles({ ...one, 'b.py': api('lb_api', 'other') });
  const after = await typescriptClient(model2, environment([lb('lb_api'), lb('lb-api')]));
  assert.deepEqual(
    Object.fromEntries(after.surface.endpoints.map((e) => [e.endpoint, e.member])),
    { 'lb-api': 'lbDashApi', lb_api: 'lbUnderscoreApi' },
    'strato.lbApi is gone rather than moved to the other endpoint',
  );
  assert.ok(
    after.surface.warnings.some((w) => /endpoints lb-api and lb_api have one name in camelCase \(lbApi\)/.test(w)),
    after.surface.warnings.join('\n'),
  );
  // Queue-based endpoints whose functions share a name fall back to their endpoint's names: the same rule.
  const q = (name: string) => `${HEAD}@Endpoint(name="${name}")\ndef handler(n: int) -> int:\n    return n\n`;
  assert.deepEqual((await members({ 'x.py': q('foo-bar'), 'y.py': q('foo.bar') }, ['foo.bar', 'foo-bar'])).members, {
    fooDashBar: 'foo-bar',
    fooDotBar: 'foo.bar',
  });
  // Names that differ in their capitals too: myFn was my-fn's member; none keeps it once the others are deployed.
  const group = { 'x.py': q('my-fn'), 'y.py': q('MyFn'), 'z.py': q('myFn'), 'w.py': q('my_Fn') };
  assert.deepEqual((await members(group, ['my-fn', 'MyFn', 'myFn', 'my_Fn'])).members, {
    myDashFn: 'my-fn',
    upperMyFn: 'MyFn',
    myFnEndpoint: 'myFn',
    myUnderscoreUpperFn: 'my_Fn',
  });
});

test('a route that returns (body, status) is typed as its body, in the module and in the OpenAPI document', async () => {
  const model = await analyzeFiles({
    'api.py':
      `${HEAD}class Item(TypedDict):\n    id: int\n\napi = Endpoint(name="api", cpu="cpu3c-1-2")\n\n` +
      `@api.post("/items")\ndef create(name: str) -> tuple[Item, int]:\n    return {"id": 1}, 201\n\n` +
      `@api.get("/check")\ndef check(id: int) -> Union[tuple[Item, Literal[404]], Item]:\n    return {"id": id}\n\n` +
      `@api.get("/pair")\ndef pair() -> tuple[str, str]:\n    return "a", "b"\n`,
  });
  const env = environment([
    {
      name: 'api',
      type: 'LOAD_BALANCED',
      routes: [
        { method: 'POST', path: '/items', function: 'create' },
        { method: 'GET', path: '/check', function: 'check' },
        { method: 'GET', path: '/pair', function: 'pair' },
      ],
    },
  ]);
  const { text } = await typescriptClient(model, env);
  assert.match(text, /export type CreateOutput = Item;/);
  assert.match(text, /export type CheckOutput = Item;/);
  assert.match(text, /export type PairOutput = \[string, string\];/, 'a tuple that does not end in a status is the tuple');
  const { document } = environmentOpenApiDocument(model, env);
  const paths = document.paths as Record<string, Record<string, any>>;
  const schema = (path: string, method: string) => paths[`/v2/api-id${path}`][method].responses['200'].content['application/json'].schema;
  assert.deepEqual(schema('/items', 'post'), { $ref: '#/components/schemas/Item' });
  assert.deepEqual(schema('/check', 'get'), { $ref: '#/components/schemas/Item' });
  assert.equal(schema('/pair', 'get').type, 'array');
});

test("a path parameter the route's function does not take is still in its input (the URL needs it); one it takes keeps its type", async () => {
  const model = await analyzeFiles({
    'api.py': `${HEAD}api = Endpoint(name="api", cpu="cpu3c-1-2")\n\n@api.post("/kw/{class}/{n}")\ndef kw_route(default: str, n: int = 0) -> str:\n    return default\n`,
  });
  const env = environment([{ name: 'api', type: 'LOAD_BALANCED', routes: [{ method: 'POST', path: '/kw/{class}/{n}', function: 'kw_route' }] }]);
  const { text } = await typescriptClient(model, env);
  assert.match(text, /export interface KwRouteInput \{\n {2}default: string;\n(.*\n)* {2}n\?: number;\n(.*\n)* {2}class: string;\n\}/);
});

test('a route taking a pydantic model: the model as the body field it is sent in, defaults optional there only; a 422 where an argument can be missing or refused', async () => {
  const model = await analyzeFiles({
    'api.py':
      `${HEAD}from pydantic import BaseModel, Field\n\nclass Item(BaseModel):\n    name: str\n    price: float\n    tags: list[str] = []\n\n` +
      `api = Endpoint(name="api", cpu="cpu3c-1-2")\n\n@api.post("/items")\ndef create_item(item: Item) -> Item:\n    return item\n\n` +
      `@api.get("/items/{id}")\ndef get_item(id: int, full: bool = False) -> Item:\n    return Item(name="x", price=1)\n\n` +
      `@api.post("/raw")\ndef raw(data, n=1):\n    return data\n`,
  });
  const env = environment([
    {
      name: 'api',
      type: 'LOAD_BALANCED',
      routes: [
        { method: 'POST', path: '/items', function: 'create_item' },
        { method: 'GET', path: '/items/{id}', function: 'get_item' },
        { method: 'POST', path: '/raw', function: 'raw' },
      ],
    },
  ]);
  const { text, surface } = await typescriptClient(model, env);
  assert.deepEqual(surface.warnings, []);
  assert.match(text, /export interface Item \{\n {2}name: string;\n {2}price: number;\n(.*\n)* {2}tags: string\[\];\n\}/);
  assert.match(text, /export interface ItemInput \{\n {2}name: string;\n {2}price: number;\n(.*\n)* {2}tags\?: string\[\];\n\}/);
  assert.match(text, /export interface CreateItemInput \{\n {2}item: ItemInput;\n\}/, 'sent as {"item": {...}}, as the runtime still takes it');
  assert.match(text, /export type CreateItemOutput = Item;/);
  assert.match(text, /Python: BaseModel `Item` in api\.py\./);

  const { document } = environmentOpenApiDocument(model, env);
  const paths = document.paths as Record<string, Record<string, any>>;
  const responses = (path: string, method: string) => Object.keys(paths[`/v2/api-id${path}`][method].responses);
  assert.deepEqual(responses('/items', 'post'), ['200', '400', '401', '422', '429', '500']);
  assert.deepEqual(paths['/v2/api-id/items'].post.responses['422'].content['application/json'].schema, { $ref: '#/components/schemas/RouteValidationError' });
  assert.ok(responses('/items/{id}', 'get').includes('422'), 'a path or query value that does not convert is a 422');
  assert.ok(responses('/raw', 'post').includes('422'), 'nothing annotated, but data can be missing: a 422');
  const schemas = (document.components as { schemas: Record<string, any> }).schemas;
  assert.deepEqual(schemas.ItemInput.required, ['name', 'price']);
  assert.deepEqual(schemas.Item.required, ['name', 'price', 'tags']);
  assert.deepEqual(schemas.RouteValidationError.required, ['error', 'detail', 'errors']);
});

test('an endpoint named with a leading digit gets members and types that are identifiers (the platform takes such names)', async () => {
  const files = {
    'fast.py': `${HEAD}api = Endpoint(name="2fast", cpu="cpu3c-1-2")\n\n@api.get("/ping2")\ndef ping2() -> int:\n    return 1\n\n@Endpoint(name="3d")\ndef render(n: int) -> int:\n    return n\n`,
  };
  const model = await analyzeFiles(files);
  const env = environment([{ name: '2fast', type: 'LOAD_BALANCED', routes: [{ method: 'GET', path: '/ping2' }] as EndpointSummary['routes'] }, { name: '3d' }]);
  const { text } = await typescriptClient(model, env);
  assert.match(text, /export interface _2fastRoutes \{/);
  assert.doesNotMatch(text, /\binterface \d/);
});
