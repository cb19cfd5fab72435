// The extension's view of a running preview, tested with plain node: `.strato/preview.json` is shown only while its
// process runs (a stale file, or a pid reused by another program, is not), as an Environments node with its URLs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildPreviewNode } from '../../client/src/endpointTree';
import { readPreviewState, writePreviewState, type PreviewState } from '../../engine/src/preview/state';

test('a running preview is read from its state file and shown with its endpoints and routes; a stale one is ignored', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'strato-preview-view-'));
  // A process whose command line says --preview, like `strato deploy --preview`.
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', 'deploy', '--preview'], { stdio: 'ignore' });
  try {
    const state: PreviewState = {
      pid: child.pid!,
      network: 'strato-preview-shop-abc123',
      url: 'http://127.0.0.1:4321',
      startedAt: Date.now(),
      environment: 'production',
      endpoints: [
        { name: 'lb-api', type: 'LOAD_BALANCED', url: 'http://127.0.0.1:4321/lb/x', routes: [{ method: 'POST', path: '/process' }] },
        { name: 'cpu-stats', type: 'QUEUE', url: 'http://127.0.0.1:4321/v2/y', routes: [] },
      ],
    };
    writePreviewState(root, state);
    await new Promise((r) => setTimeout(r, 200)); // let the child's command line appear
    const read = readPreviewState(root);
    assert.deepEqual(read, state);
    const node = buildPreviewNode('shop', read!);
    assert.equal(node.label, 'preview');
    assert.equal(node.description, 'shop · 2 endpoint(s) in containers · strato-preview-shop-abc123');
    assert.deepEqual(
      node.children!.map((c) => [c.label, c.url, c.icon]),
      [
        ['cpu-stats', 'http://127.0.0.1:4321/v2/y', 'list-ordered'],
        ['lb-api', 'http://127.0.0.1:4321/lb/x', 'server'],
      ],
    );
    assert.deepEqual(
      node.children![1].children!.map((r) => [r.label, r.url]),
      [['POST /process', 'http://127.0.0.1:4321/lb/x/process']],
    );

    writePreviewState(root, { ...state, pid: process.pid }); // a live process that is not a preview
    assert.equal(readPreviewState(root), null);
    writePreviewState(root, state);
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    assert.equal(readPreviewState(root), null, 'the preview ended: the file is stale');
  } finally {
    child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  }
});
