// The dev server's route table and OpenAPI document, from the project model: module paths, several queue
// functions in one file, load-balanced routes with path parameters, and schemas from type hints.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeFiles } from '../helpers/analysis';
import { devRoutes, matchRoute, routeCollisions } from '../../engine/src/dev/routes';
import { devOpenApiDocument } from '../../engine/src/clientgen/openapi';

const SRC = {
  'workers/gpu_infer.py':
    'from strato import Endpoint\n\n@Endpoint(name="infer")\ndef infer(prompt: str, n: int = 2) -> dict:\n    """Run inference.\n\n    Longer."""\n   ' +
    ' return {}\n',
  'multi.py':
    'from strato import Endpoint\n\n@Endpoint(name="one")\ndef first(x: float):\n    return x\n\n@Endpoint(name="two")\nasync def second(items: ' +
    'list[int], flag: bool = False):\n    return items\n',
  'api.py':
    'from strato import Endpoint\napi = Endpoint(name="api", cpu="cpu3c-1-2")\n\n@api.get("/items/{item_id}")\ndef item(item_id: int, verbose: bool = ' +
    'False):\n    """Get an item."""\n    return {}\n\n@api.post("/items")\ndef create(name: str, tags: dict | None = None):\n    return {}\n',
};

test('queue functions are served at /<module path>/runsync, or /<module path>/<function>/runsync when a file has several', async () => {
  const routes = devRoutes(await analyzeFiles(SRC));
  assert.deepEqual(
    routes.map((r) => `${r.method} ${r.path} ${r.kind}`),
    [
      'POST /api/items LOAD_BALANCED',
      'GET /api/items/{item_id} LOAD_BALANCED',
      'POST /multi/first/runsync QUEUE',
      'POST /multi/second/runsync QUEUE',
      'POST /workers/gpu_infer/runsync QUEUE',
    ],
  );
  const m = matchRoute(routes, 'GET', '/api/items/42');
  assert.equal(m.route?.function.name, 'item');
  assert.equal(m.endpointPath, '/items/42');
  assert.deepEqual(matchRoute(routes, 'DELETE', '/api/items'), { pathMatched: true });
  assert.deepEqual(matchRoute(routes, 'GET', '/nope'), { pathMatched: false });
});

test('files with spaces or non-ASCII letters in their path are reached by the %-encoded path a client sends', async () => {
  const api =
    'from strato import Endpoint\napi = Endpoint(name="apí", cpu="cpu3c-1-2")\n\n@api.get("/items/{item_id}")\ndef item(item_id: str):\n    return {}\n';
  const routes = devRoutes(await analyzeFiles({ 'my worker.py': SRC['workers/gpu_infer.py'], 'wörker/api.py': api }));
  assert.deepEqual(
    routes.map((r) => `${r.method} ${r.path}`),
    ['POST /my worker/runsync', 'GET /wörker/api/items/{item_id}'],
  );
  assert.equal(matchRoute(routes, 'POST', '/my%20worker/runsync').route?.function.name, 'infer');
  const lb = matchRoute(routes, 'GET', `/${encodeURIComponent('wörker')}/api/items/a%2Fb`);
  assert.equal(lb.route?.function.name, 'item');
  assert.equal(lb.endpointPath, '/items/a%2Fb', 'the route path is passed on as the client wrote it');
  assert.deepEqual(matchRoute(routes, 'POST', '/my%zz/runsync'), { pathMatched: false }, 'a malformed escape matches nothing');
});

test('the OpenAPI document carries summaries, input wrappers, bodies, query and path parameters from type hints', async () => {
  const model = await analyzeFiles(SRC);
  const doc = devOpenApiDocument('demo', model, devRoutes(model)) as any;
  const infer = doc.paths['/workers/gpu_infer/runsync'].post;
  assert.equal(infer.summary, 'Run inference.');
  assert.deepEqual(infer.requestBody.content['application/json'].schema, {
    type: 'object',
    required: ['input'],
    properties: { input: { type: 'object', properties: { prompt: { type: 'string' }, n: { type: 'integer', default: 2 } }, required: ['prompt'] } },
  });
  const get = doc.paths['/api/items/{item_id}'].get;
  assert.deepEqual(get.parameters, [
    { name: 'item_id', in: 'path', required: true, schema: { type: 'integer' } },
    { name: 'verbose', in: 'query', required: false, schema: { type: 'boolean', default: false } },
  ]);
  const post = doc.paths['/api/items'].post;
  assert.equal(post.summary, 'create', 'no docstring: the function name');
  assert.deepEqual(post.requestBody.content['application/json'].schema.properties.tags, { type: 'object', nullable: true, default: null });
  const second = doc.paths['/multi/second/runsync'].post.requestBody.content['application/json'].schema.properties.input;
  assert.deepEqual(second.properties.items, { type: 'array', items: { type: 'integer' } });
  assert.deepEqual(doc.paths['/workers/gpu_infer/runsync'].post.responses['200'].content['application/json'].schema.properties.output, { type: 'object' });
});

test('two routes on one path (w.py with a function x, and w/x.py) are named: only the first is reached', async () => {
  const two = 'from strato import Endpoint\n\n@Endpoint(name="f")\ndef f():\n    return 1\n\n@Endpoint(name="x")\ndef x():\n    return 2\n';
  const one = 'from strato import Endpoint\n\n@Endpoint(name="g")\ndef g():\n    return 3\n';
  const routes = devRoutes(await analyzeFiles({ 'w.py': two, 'w/x.py': one }));
  const said = routeCollisions(routes);
  assert.equal(said.length, 1);
  const served = matchRoute(routes, 'POST', '/w/x/runsync').route!;
  const hidden = served.function.name === 'x' ? 'w/x.py (g)' : 'w.py (x)';
  assert.equal(
    said[0],
    `POST /w/x/runsync is served by ${served.endpoint.file} (${served.function.name}); ${hidden} has the same path and cannot be reached: rename one of the files or functions`,
  );
  assert.deepEqual(routeCollisions(devRoutes(await analyzeFiles(SRC))), []);
});
