// The project model the extension's views show comes from the language server's index (custom request
// strato/projectModel): the same analysis as diagnostics, with unsaved editor text winning over the disk.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { FileChangeType } from 'vscode-languageserver/node';
import { after, before, describe, it } from 'node:test';
import type { ProjectModel } from '../../engine/src/project';
import { loadProject } from '../../engine/src/project';
import { PROJECT_CHANGED_NOTIFICATION, PROJECT_MODEL_REQUEST, type ProjectChangedParams, type ProjectModelParams } from '../../engine/src/protocol/lsp';
import { TestClient, uriOf } from './lspClient';
import { copyWorkspace, type Workspace } from './workspace';

describe('the project model request', () => {
  let ws: Workspace;
  let c: TestClient;
  const model = (folder: string) =>
    c.connection.sendRequest(PROJECT_MODEL_REQUEST, { folderUri: uriOf(folder) } satisfies ProjectModelParams) as Promise<ProjectModel | null>;

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

  it('answers the model of a folder, equal to the engine reading the same files', async () => {
    const fromServer = await model(ws.root);
    const fromDisk = await loadProject(ws.root);
    assert.ok(fromServer);
    const names = (m: ProjectModel) => m.endpoints.map((e) => `${e.name}:${e.kind}:${e.file}`).sort();
    assert.deepEqual(names(fromServer), names(fromDisk));
    assert.ok(fromServer.endpoints.length >= 3);
    assert.deepEqual(fromServer.diagnostics.map((d) => d.code).sort(), fromDisk.diagnostics.map((d) => d.code).sort());
  });

  it('an unsaved edit shows in the model at once', async () => {
    const rel = 'workers/gpu_infer.py';
    const text = readFileSync(ws.file(rel), 'utf8');
    await c.open(uriOf(ws.file(rel)), text.replace('name="embed"', 'name="embed-v2"'));
    const m = await model(ws.root);
    assert.ok(m?.endpoints.some((e) => e.name === 'embed-v2'));
    assert.ok(!m?.endpoints.some((e) => e.name === 'embed'));
  });

  it('the server says which folder changed when its endpoints change, and stays quiet for edits that leave them alone', async () => {
    const notices: ProjectChangedParams[] = [];
    const sub = c.connection.onNotification(PROJECT_CHANGED_NOTIFICATION, (p: ProjectChangedParams) => notices.push(p));
    try {
      const rel = 'workers/gpu_infer.py';
      const text = readFileSync(ws.file(rel), 'utf8');
      await c.open(uriOf(ws.file(rel)), `${text}\n\ndef helper():\n    return 1\n`);
      await new Promise((r) => setTimeout(r, 600));
      assert.deepEqual(notices, [], 'a helper function is not an endpoint: no notice');
      await c.open(uriOf(ws.file(rel)), text.replace('name="embed"', 'name="embed-v3"'));
      const deadline = Date.now() + 5000;
      while (!notices.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(notices, [{ folderUris: [uriOf(ws.root)] }]);
    } finally {
      sub.dispose();
    }
  });

  it('a file deleted on disk leaves the model, and the server says that the project changed', async () => {
    const noticed = new Promise<void>((resolve) => c.connection.onNotification(PROJECT_CHANGED_NOTIFICATION, () => resolve()));
    const rel = 'workers/cpu_tasks.py';
    const before = await model(ws.root);
    const gone = before!.endpoints.filter((e) => e.file === rel).map((e) => e.name);
    assert.ok(gone.length > 0);
    rmSync(ws.file(rel));
    await c.watched([{ uri: uriOf(ws.file(rel)), type: FileChangeType.Deleted }]);
    await Promise.race([noticed, new Promise((_, reject) => setTimeout(() => reject(new Error('no projectChanged notification')), 5000))]);
    const after = await model(ws.root);
    assert.ok(gone.every((n) => !after!.endpoints.some((e) => e.name === n)));
  });

  it('a file deleted with no watched-file event (as some clients do) leaves the model at the next request', async () => {
    const rel = 'api.py';
    const gone = (await model(ws.root))!.endpoints.filter((e) => e.file === rel).map((e) => e.name);
    assert.ok(gone.length > 0);
    rmSync(ws.file(rel));
    const after = await model(ws.root);
    assert.ok(gone.every((n) => !after!.endpoints.some((e) => e.name === n)));
  });

  it('an unknown folder answers null', async () => {
    assert.equal(await model(`${ws.root}-elsewhere`), null);
  });
});
