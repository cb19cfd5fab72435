// The workspace index through the protocol: the build's ignore rules, open documents over disk, incremental
// edits, watched files, .gitignore changes, workspace folders, and documents outside every folder.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { FileChangeType, type Diagnostic } from 'vscode-languageserver/node';
import { analyzeText, createPythonParser, listProjectFiles, localModulesOf } from '../../engine/src/project';
import { TestClient, uriOf } from './lspClient';
import { copyWorkspace, type Workspace } from './workspace';

const codes = (ds: Diagnostic[]) => ds.map((d) => d.code).sort();

describe('workspace index', () => {
  let ws: Workspace;
  let c: TestClient;
  const uri = (rel: string) => uriOf(ws.file(rel));
  const openDisk = async (rel: string) => c.open(uri(rel), readFileSync(ws.file(rel), 'utf8'));

  beforeEach(async () => {
    ws = copyWorkspace();
    c = TestClient.inMemory();
    await c.initialize({ folders: [ws.root] });
  });
  afterEach(async () => {
    assert.deepEqual(c.errors(), []);
    await c.stop();
    ws.dispose();
  });

  it('indexes every Python file with the build ignore rules: ignored files never report', async () => {
    // scratch/ (.gitignore) and tests/ (built-in) hold errors and a second "embed" and "resize".
    const report = await c.workspaceDiagnostics();
    assert.deepEqual(
      report.items.filter((i) => i.kind === 'full' && i.items.length),
      [],
    );
    await openDisk('scratch/ignored.py');
    assert.deepEqual(await c.diagnostics(uri('scratch/ignored.py')), []);
    await openDisk('workers/gpu_infer.py');
    assert.deepEqual(await c.diagnostics(uri('workers/gpu_infer.py')), []);
  });

  it('closed files take part in cross-file rules: a duplicate in a closed file shows in the open one', async () => {
    ws.write('workers/more.py', 'from strato import Endpoint\n\n\n@Endpoint(name="embed")\ndef more(x):\n    return x\n');
    await c.watched([{ uri: uri('workers/more.py'), type: FileChangeType.Created }]);
    await openDisk('workers/gpu_infer.py');
    const [dup] = await c.diagnostics(uri('workers/gpu_infer.py'));
    assert.equal(dup.code, 'duplicate-queue-function');
    assert.equal(dup.relatedInformation?.[0].location.uri, uri('workers/more.py'));
    assert.equal(dup.relatedInformation?.[0].location.range.start.line, 3);
    // The closed file reports it too (workspace pull).
    const report = await c.workspaceDiagnostics();
    const closed = report.items.find((i) => i.uri === uri('workers/more.py'));
    assert.equal(closed?.kind, 'full');
    assert.deepEqual(codes(closed && 'items' in closed ? closed.items : []), ['duplicate-queue-function']);
  });

  it('a closed file deleted without a watched-file event loses its diagnostics at the next workspace pull', async () => {
    ws.write('workers/broken.py', 'from strato import Endpoint\n\n\n@Endpoint(name="b", gpu="ADA_24", cpu="cpu3c-1-2")\ndef b():\n    return 1\n');
    await c.watched([{ uri: uri('workers/broken.py'), type: FileChangeType.Created }]);
    const first = await c.workspaceDiagnostics();
    const had = first.items.find((i) => i.uri === uri('workers/broken.py'));
    assert.deepEqual(codes(had && 'items' in had ? had.items : []), ['gpu-and-cpu']);
    rmSync(ws.file('workers/broken.py'));
    const after = await c.workspaceDiagnostics([{ uri: uri('workers/broken.py'), value: had!.resultId! }]);
    const now = after.items.find((i) => i.uri === uri('workers/broken.py'));
    assert.equal(now?.kind, 'full');
    assert.deepEqual(now && 'items' in now ? now.items : null, []);
  });

  it('open documents override the disk, and closing returns to what the disk says', async () => {
    await c.open(uri('api.py'), readFileSync(ws.file('api.py'), 'utf8').replace('"/predict"', '"predict"'));
    assert.deepEqual(codes(await c.diagnostics(uri('api.py'))), ['route-path-slash']);
    await c.close(uri('api.py'));
    assert.deepEqual(await c.diagnostics(uri('api.py')), []);
  });

  it('incremental edits keep the tree in step: typing an endpoint ends where a fresh analysis does', async () => {
    const u = uri('workers/typed.py');
    await c.open(u, '');
    const target = [
      'import requests',
      'from strato import Endpoint, GpuGroup',
      '',
      'LIMIT = 4',
      '',
      '@Endpoint(name="typed", gpu=GpuGroup.ADA_2, workers=(LIMIT, 1), cpu="cpu3c-2-5")',
      'def typed(x: dict) -> dict:',
      '    """Typed in one key at a time."""',
      '    return requests.get(x["url"]).json()',
      '',
    ].join('\n');
    for (let i = 0; i < target.length; i++) {
      await c.replace(u, i, i, target[i]);
      if (i % 97 === 0) await c.diagnostics(u); // parse now and then, as an editor would
    }
    // A few edits in the middle: delete and retype a word, replace a line.
    const at = target.indexOf('workers=');
    await c.replace(u, at, at + 7, '');
    await c.diagnostics(u);
    await c.replace(u, at, at, 'workers');
    const line = c.text(u).indexOf('LIMIT = 4');
    await c.replace(u, line, line + 9, 'LIMIT = 5');
    const text = c.text(u);
    const parser = await createPythonParser();
    const localModules = localModulesOf([...listProjectFiles(ws.root).pythonFiles, 'workers/typed.py']);
    const expected = analyzeText(parser, 'workers/typed.py', text, { localModules }).diagnostics;
    parser.delete();
    const actual = await c.diagnostics(u);
    assert.deepEqual(
      actual.map((d) => [d.code, d.message, d.range]),
      expected.map((d) => [d.code, d.message, d.range]),
    );
    assert.deepEqual(codes(actual), ['invalid-workers', 'top-level-import', 'unknown-cpu', 'unknown-gpu']);
  });

  it('watched files: a file created on disk joins the project, a change is read again, a deletion leaves', async () => {
    await openDisk('workers/gpu_infer.py');
    assert.deepEqual(await c.diagnostics(uri('workers/gpu_infer.py')), []);
    const refreshes = c.refreshes;
    ws.write('workers/dup.py', 'from strato import Endpoint\n\n\n@Endpoint(name="generate")\ndef dup(x):\n    return x\n');
    await c.watched([{ uri: uri('workers/dup.py'), type: FileChangeType.Created }]);
    await c.until(() => c.refreshes > refreshes, 'a diagnostic refresh');
    assert.deepEqual(codes(await c.diagnostics(uri('workers/gpu_infer.py'))), ['duplicate-queue-function']);

    ws.write('workers/dup.py', 'from strato import Endpoint\n\n\n@Endpoint(name="other")\ndef dup(x):\n    return x\n');
    await c.watched([{ uri: uri('workers/dup.py'), type: FileChangeType.Changed }]);
    assert.deepEqual(await c.diagnostics(uri('workers/gpu_infer.py')), []);

    ws.write('workers/dup.py', 'from strato import Endpoint\n\n\n@Endpoint(name="embed")\ndef dup(x):\n    return x\n');
    await c.watched([{ uri: uri('workers/dup.py'), type: FileChangeType.Changed }]);
    assert.deepEqual(codes(await c.diagnostics(uri('workers/gpu_infer.py'))), ['duplicate-queue-function']);
    ws.remove('workers/dup.py');
    await c.watched([{ uri: uri('workers/dup.py'), type: FileChangeType.Deleted }]);
    assert.deepEqual(await c.diagnostics(uri('workers/gpu_infer.py')), []);

    // Deleted while open (the editor keeps its tab): it no longer counts, as strato check no longer sees it.
    ws.write('workers/dup.py', 'from strato import Endpoint\n\n\n@Endpoint(name="embed")\ndef dup(x):\n    return x\n');
    await c.watched([{ uri: uri('workers/dup.py'), type: FileChangeType.Created }]);
    await openDisk('workers/dup.py');
    assert.deepEqual(codes(await c.diagnostics(uri('workers/gpu_infer.py'))), ['duplicate-queue-function']);
    ws.remove('workers/dup.py');
    await c.watched([{ uri: uri('workers/dup.py'), type: FileChangeType.Deleted }]);
    assert.deepEqual(await c.diagnostics(uri('workers/gpu_infer.py')), []);
    assert.deepEqual(await c.diagnostics(uri('workers/dup.py')), []);
  });

  it('registers file watchers for Python files, orchestration YAML files, .gitignore and removed folders', async () => {
    const reg = await c.until(() => c.registrations.find((r) => r.method === 'workspace/didChangeWatchedFiles'), 'a watcher registration');
    const globs = (reg.registerOptions as { watchers: Array<{ globPattern: string }> }).watchers.map((w) => w.globPattern);
    assert.deepEqual(globs, ['**/*.py', '**/{.dstack.yml,*.dstack.yml,.dstack.yaml,*.dstack.yaml,.dstack/server/config.yml}', '**/.gitignore', '**/*']);
  });

  it('a .gitignore change applies at once, and a deleted folder takes its files with it', async () => {
    await openDisk('workers/cpu_tasks.py');
    ws.write('extra/copy.py', 'from strato import Endpoint\n\n\n@Endpoint(name="resize")\ndef copy(x):\n    return x\n');
    await c.watched([{ uri: uri('extra/copy.py'), type: FileChangeType.Created }]);
    assert.deepEqual(codes(await c.diagnostics(uri('workers/cpu_tasks.py'))), ['duplicate-queue-function']);

    ws.write('.gitignore', 'scratch/\nextra/\n');
    await c.watched([{ uri: uri('.gitignore'), type: FileChangeType.Changed }]);
    assert.deepEqual(await c.diagnostics(uri('workers/cpu_tasks.py')), []);
    ws.write('.gitignore', 'scratch/\n');
    await c.watched([{ uri: uri('.gitignore'), type: FileChangeType.Changed }]);
    assert.deepEqual(codes(await c.diagnostics(uri('workers/cpu_tasks.py'))), ['duplicate-queue-function']);

    ws.remove('extra');
    await c.watched([{ uri: uri('extra'), type: FileChangeType.Deleted }]);
    assert.deepEqual(await c.diagnostics(uri('workers/cpu_tasks.py')), []);
  });

  it('a new top-level package changes which imports are third-party', async () => {
    const u = uri('workers/uses_lib.py');
    await c.open(u, 'import mylib\nfrom strato import Endpoint\n\n\n@Endpoint(name="uses-lib")\ndef uses(x):\n    return mylib.run(x)\n');
    assert.deepEqual(codes(await c.diagnostics(u)), ['top-level-import']);
    ws.write('mylib/__init__.py', 'def run(x):\n    return x\n');
    await c.watched([{ uri: uri('mylib/__init__.py'), type: FileChangeType.Created }]);
    assert.deepEqual(await c.diagnostics(u), []);
  });

  it('documents outside every folder, and untitled ones, are analysed alone', async () => {
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'strato-lsp-loose-'));
    try {
      const file = path.join(elsewhere, 'solo.py');
      const text = 'from strato import Endpoint\n\n\n@Endpoint(name="embed", workers=(3, 1))\ndef solo(x):\n    return x\n';
      writeFileSync(file, text);
      await c.open(uriOf(file), text);
      // "embed" is also declared in the workspace, but this file is not part of that project.
      assert.deepEqual(codes(await c.diagnostics(uriOf(file))), ['invalid-workers']);
      await c.open('untitled:Untitled-1', text);
      assert.deepEqual(codes(await c.diagnostics('untitled:Untitled-1')), ['invalid-workers']);
      await c.close('untitled:Untitled-1');
      await c.close(uriOf(file));
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('workspace folders can be added and removed; each is its own project', async () => {
    const second = copyWorkspace();
    try {
      const other = uriOf(second.file('workers/gpu_infer.py'));
      await c.foldersChanged([second.root], []);
      // Same endpoint names in both folders: no duplicate, they are two projects.
      await c.open(other, readFileSync(second.file('workers/gpu_infer.py'), 'utf8'));
      assert.deepEqual(await c.diagnostics(other), []);
      second.write('workers/dup.py', 'from strato import Endpoint\n\n\n@Endpoint(name="embed")\ndef dup(x):\n    return x\n');
      await c.watched([{ uri: uriOf(second.file('workers/dup.py')), type: FileChangeType.Created }]);
      assert.deepEqual(codes(await c.diagnostics(other)), ['duplicate-queue-function']);
      await c.foldersChanged([], [second.root]);
      // The open document stays, now on its own.
      assert.deepEqual(await c.diagnostics(other), []);
    } finally {
      second.dispose();
    }
  });
});
