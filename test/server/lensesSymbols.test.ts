// Code lenses (run and deploy, with the argument the client's commands take) and document symbols.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { SymbolKind } from 'vscode-languageserver/node';
import { Commands, isEndpointCommandArgs, type EndpointCommandArgs } from '../../engine/src/protocol/lsp';
import { TestClient, uriOf } from './lspClient';
import { copyWorkspace, type Workspace } from './workspace';

describe('code lenses and document symbols', () => {
  let ws: Workspace;
  let c: TestClient;
  const uri = (rel: string) => uriOf(ws.file(rel));
  const openDisk = (rel: string) => c.open(uri(rel), readFileSync(ws.file(rel), 'utf8'));

  before(async () => {
    ws = copyWorkspace();
    c = TestClient.inMemory();
    await c.initialize({ folders: [ws.root] });
  });
  after(async () => {
    assert.deepEqual(c.errors(), []);
    await c.stop();
    ws.dispose();
  });

  it('a run, a debug and a deploy lens above each queue-based endpoint function; Deploy says that all the endpoints go', async () => {
    await openDisk('workers/gpu_infer.py');
    const lenses = await c.codeLenses(uri('workers/gpu_infer.py'));
    assert.deepEqual(
      lenses.map((l) => [l.range.start.line, l.command?.command, l.command?.title]),
      [
        [4, Commands.runEndpoint, '▶ Run embed'],
        [4, Commands.debugEndpoint, 'Debug'],
        [4, Commands.deployEndpoint, 'Deploy all 4 endpoints'],
        [13, Commands.runEndpoint, '▶ Run generate'],
        [13, Commands.debugEndpoint, 'Debug'],
        [13, Commands.deployEndpoint, 'Deploy all 4 endpoints'],
      ],
    );
    const arg = lenses[0].command?.arguments?.[0] as EndpointCommandArgs;
    assert.deepEqual(arg, { endpoint: 'embed', function: 'embed', file: 'workers/gpu_infer.py', uri: uri('workers/gpu_infer.py'), kind: 'QUEUE' });
    assert.ok(isEndpointCommandArgs(arg));
    assert.ok(!isEndpointCommandArgs({ ...arg, kind: 'other' }));
  });

  it('a run, a debug and a deploy lens above each route, with its method and path', async () => {
    await openDisk('api.py');
    const lenses = await c.codeLenses(uri('api.py'));
    assert.deepEqual(
      lenses.map((l) => [l.range.start.line, l.command?.title]),
      [
        [5, '▶ Run POST /predict'],
        [5, 'Debug'],
        [5, 'Deploy all 4 endpoints'],
        [10, '▶ Run GET /health-check'],
        [10, 'Debug'],
        [10, 'Deploy all 4 endpoints'],
      ],
    );
    assert.deepEqual(lenses[0].command?.arguments?.[0], {
      endpoint: 'api',
      function: 'predict',
      file: 'api.py',
      uri: uri('api.py'),
      kind: 'LOAD_BALANCED',
      method: 'POST',
      path: '/predict',
    });
  });

  it('lenses follow edits, cover classes, and are absent from files the build ignores', async () => {
    const u = uri('workers/model.py');
    await c.open(u, 'from strato import Endpoint\n\n\n@Endpoint(name="model")\nclass Model:\n    def predict(self, x):\n        return x\n');
    assert.deepEqual(
      (await c.codeLenses(u)).map((l) => (l.command?.arguments?.[0] as EndpointCommandArgs).function),
      ['Model', 'Model', 'Model'],
    );
    await c.replace(u, 0, 0, '\n\n');
    assert.equal((await c.codeLenses(u))[0].range.start.line, 5);
    await openDisk('scratch/ignored.py');
    assert.deepEqual(await c.codeLenses(uri('scratch/ignored.py')), []);
  });

  it('a file alone (outside the workspace folders) with one endpoint: "Deploy <name>"', async () => {
    const u = uriOf('/outside-the-workspace/solo.py');
    await c.open(u, 'from strato import Endpoint\n\n\n@Endpoint(name="solo")\ndef solo(x: int) -> int:\n    return x\n');
    assert.deepEqual(
      (await c.codeLenses(u)).map((l) => l.command?.title),
      ['▶ Run solo', 'Debug', 'Deploy solo'],
    );
  });

  it('document symbols: endpoints, and a load-balanced endpoint holding its routes', async () => {
    await openDisk('workers/gpu_infer.py');
    const queue = await c.symbols(uri('workers/gpu_infer.py'));
    assert.deepEqual(
      queue.map((s) => [s.name, s.kind, s.selectionRange.start.line]),
      [
        ['embed', SymbolKind.Function, 5],
        ['generate', SymbolKind.Function, 14],
      ],
    );
    assert.match(queue[0].detail!, /queue endpoint · gpu ADA_24 · def embed/);
    await openDisk('api.py');
    const [api] = await c.symbols(uri('api.py'));
    assert.equal(api.name, 'api');
    assert.match(api.detail!, /load-balanced endpoint · cpu cpu3g-2-8 · api/);
    assert.deepEqual(
      api.children?.map((s) => [s.name, s.detail, s.kind]),
      [
        ['POST /predict', 'predict', SymbolKind.Method],
        ['GET /health-check', 'health', SymbolKind.Method],
      ],
    );
    for (const child of api.children!) assert.ok(child.range.start.line >= api.range.start.line && child.range.end.line <= api.range.end.line);
  });
});
