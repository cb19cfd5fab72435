// The sample calls deploy prints: a body of values the function takes (test/deploy/deploy.test.ts runs the template's
// as printed), here the annotations whose placeholders were wrong when pasted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeFiles } from '../helpers/analysis';
import { sampleCall } from '../../engine/src/deploy/samples';
import { sampleArgs } from '../../engine/src/project/sampleInput';
import type { Endpoint } from '../../engine/src/api/controlPlane';

const HEAD = 'from strato import Endpoint\n\n';

test('an untyped list is sampled as numbers, a set as a list of its items, a typed path parameter as a value of its type', async () => {
  const model = await analyzeFiles({
    'w.py':
      `${HEAD}@Endpoint(name="stats", cpu="cpu3c-1-2")\ndef stats(numbers: list, tags: set[str], label: str = "x") -> dict:\n    return {}\n\n` +
      `api = Endpoint(name="api", cpu="cpu3c-1-2")\n\n@api.get("/items/{item_id}/{slug}")\ndef item(item_id: int, slug: str) -> dict:\n    return {}\n`,
  });
  const [stats, api] = ['stats', 'api'].map((n) => model.endpoints.find((e) => e.name === n)!);
  assert.deepEqual(sampleArgs(stats.functions[0]), { numbers: [1, 2], tags: ['value', 'value'], label: 'x' });
  const ep = { type: 'LOAD_BALANCED', url: 'http://h/lb/id' } as Endpoint;
  assert.match(sampleCall(ep, api), /^curl -X GET http:\/\/h\/lb\/id\/items\/1\/example-slug /);
});

test("a POST route's sample body leaves out the path's parameters, which travel in the path", async () => {
  const model = await analyzeFiles({
    'w.py': `${HEAD}items = Endpoint(name="items", cpu="cpu3c-1-2")\n\n@items.post("/items/{item_id}/tags")\ndef tag_item(item_id: int, tags: list[str]) -> dict:\n    return {}\n`,
  });
  const ep = { type: 'LOAD_BALANCED', url: 'http://h/lb/id' } as Endpoint;
  const call = sampleCall(ep, model.endpoints[0]);
  assert.match(call, /^curl -X POST http:\/\/h\/lb\/id\/items\/1\/tags /);
  assert.deepEqual(JSON.parse(/-d '(.*)'$/.exec(call)![1]), { tags: ['value', 'value'] });
});
