// The server as its own process: from source over stdio and over Node IPC (as vscode-languageclient starts it),
// and the bundle `dist/server.js` that `npm run build` produces.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO, SOURCE_SERVER, TestClient, uriOf } from './lspClient';
import { copyWorkspace } from './workspace';

/** A short session: initialize, index, open a broken file, pull its diagnostics, shut down; returns the exit code. */
async function session(c: TestClient): Promise<number | null> {
  const ws = copyWorkspace();
  try {
    const init = await c.initialize({ folders: [ws.root] });
    assert.equal(
      init.capabilities.textDocumentSync && typeof init.capabilities.textDocumentSync === 'object' ? init.capabilities.textDocumentSync.change : 0,
      2,
    );
    assert.deepEqual(init.capabilities.diagnosticProvider, { identifier: 'strato', interFileDependencies: true, workspaceDiagnostics: true });
    const u = uriOf(ws.file('workers/gpu_infer.py'));
    await c.open(u, readFileSync(ws.file('workers/gpu_infer.py'), 'utf8').replace('GpuGroup.ADA_24', 'GpuGroup.ADA_42'));
    const [d] = await c.diagnostics(u);
    assert.equal(d.code, 'unknown-gpu');
    assert.equal(d.message, 'GpuGroup.ADA_42 does not exist: did you mean GpuGroup.ADA_24?');
    assert.ok(
      c.logs.some((l) => /indexed 4 Python files/.test(l.message)),
      JSON.stringify(c.logs),
    );
    assert.deepEqual(c.errors(), []);
    return await c.stop();
  } finally {
    ws.dispose();
  }
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

describe('server process', () => {
  it('runs from source over stdio and exits 0 after shutdown and exit', async () => {
    assert.equal(await session(TestClient.stdio([...SOURCE_SERVER, '--stdio'])), 0);
  });

  it('runs over Node IPC, the transport vscode-languageclient uses', async () => {
    assert.equal(await session(TestClient.ipc(SOURCE_SERVER)), 0);
  });

  it('the bundle dist/server.js from npm run build serves the same protocol', async () => {
    const bundle = path.join(REPO, 'dist', 'server.js');
    const sources = Math.max(...['server/src', 'engine/src/project', 'engine/src/catalog'].map((d) => newestMtime(path.join(REPO, d))));
    if (!existsSync(bundle) || statSync(bundle).mtimeMs < sources) {
      const build = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: REPO, encoding: 'utf8' }); // what `npm run build` runs
      assert.equal(build.status, 0, build.stderr);
    }
    // The bundle loads its WebAssembly parsers from beside itself.
    assert.ok(existsSync(path.join(REPO, 'dist', 'tree-sitter-python.wasm')));
    assert.equal(await session(TestClient.stdio([bundle, '--stdio'])), 0);
  });
});
