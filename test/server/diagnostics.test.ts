// Diagnostics through the protocol: every engine rule with its code, severity and message; duplicate names at
// both places with related information; pull (result ids, refresh) and push; fixing one duplicate clears both.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { DiagnosticSeverity, type CodeAction, type Diagnostic } from 'vscode-languageserver/node';
import { analyzeText, combine, createPythonParser } from '../../engine/src/project';
import { FIXTURES, TestClient, uriOf } from './lspClient';
import { copyWorkspace, type Workspace } from './workspace';

const codes = (ds: Diagnostic[]) => ds.map((d) => d.code).sort();

describe('diagnostics', () => {
  let ws: Workspace;
  let c: TestClient;
  const uri = (rel: string) => uriOf(ws.file(rel));

  beforeEach(() => {
    ws = copyWorkspace();
    c = TestClient.inMemory();
  });
  afterEach(async () => {
    assert.deepEqual(c.errors(), []);
    await c.stop();
    ws.dispose();
  });

  it('reports every rule of the engine with the same code, severity, message and range as the build', async () => {
    await c.initialize({ folders: [] }); // the fixture, opened on its own, is a project of one file
    const file = path.join(FIXTURES, 'every_rule.py');
    const text = readFileSync(file, 'utf8');
    const u = uriOf(file);
    await c.open(u, text);
    const actual = await c.diagnostics(u);

    const parser = await createPythonParser();
    const model = analyzeText(parser, 'every_rule.py', text, { localModules: new Set() });
    parser.delete();
    const expected = combine(FIXTURES, [model]).diagnostics;
    const severity = {
      error: DiagnosticSeverity.Error,
      warning: DiagnosticSeverity.Warning,
      information: DiagnosticSeverity.Information,
      hint: DiagnosticSeverity.Hint,
    };
    const key = (d: { code?: unknown; message: string; range: unknown }) => JSON.stringify([d.code, d.message, d.range]);
    assert.deepEqual(actual.map(key).sort(), expected.map(key).sort());
    for (const d of actual) {
      const e = expected.find((x) => key(x) === key(d))!;
      assert.equal(d.severity, severity[e.severity], `${d.code} severity`);
      assert.equal(d.source, 'strato');
    }
    // The fixture exercises (nearly) every rule code.
    assert.deepEqual(
      [...new Set(codes(actual))],
      [
        'duplicate-endpoint-name',
        'duplicate-queue-function',
        'duplicate-route',
        'gpu-and-cpu',
        'invalid-dependencies',
        'invalid-endpoint-name',
        'invalid-env',
        'invalid-type',
        'invalid-workers',
        'lb-no-routes',
        'not-literal',
        'out-of-range',
        'route-path-reserved',
        'route-path-slash',
        'syntax-error',
        'top-level-import',
        'unknown-cpu',
        'unknown-gpu',
        'unknown-method',
        'unknown-parameter',
      ],
    );
    assert.equal(actual.find((d) => d.code === 'top-level-import')?.severity, DiagnosticSeverity.Warning);
    const route = actual.find((d) => d.code === 'duplicate-route')!;
    assert.equal(route.relatedInformation?.[0].location.uri, u);
  });

  it('a duplicate name is reported at both places with related information, and fixing one clears both (pull)', async () => {
    await c.initialize({ folders: [ws.root] });
    const a = uri('workers/again.py');
    const b = uri('workers/gpu_infer.py');
    await c.open(a, 'from strato import Endpoint\n\n\n@Endpoint(name="embed", workers=2)\ndef again(x):\n    return x\n');
    const [here] = await c.diagnostics(a);
    assert.equal(here.code, 'duplicate-queue-function');
    assert.match(here.message, /also at workers\/gpu_infer\.py:5/);
    assert.deepEqual(
      here.relatedInformation?.map((r) => [r.location.uri, r.location.range.start.line]),
      [[b, 4]],
    );

    // The closed file reports it too, pointing back.
    const report = await c.workspaceDiagnostics();
    const there = report.items.find((i) => i.uri === b);
    assert.ok(there && there.kind === 'full');
    assert.deepEqual(
      there.items.map((d) => d.code),
      ['duplicate-queue-function'],
    );
    assert.deepEqual(
      there.items[0].relatedInformation?.map((r) => [r.location.uri, r.location.range.start.line]),
      [[a, 3]],
    );

    const refreshes = c.refreshes;
    const [rename] = (await c.codeActions(a, here.range, [here])) as CodeAction[];
    assert.match(rename.title, /Rename the endpoint to "embed-\d+"/);
    await c.apply(rename.edit!);
    // The other file's result changed: the client is asked to pull again, and both are clean.
    await c.until(() => c.refreshes > refreshes, 'a diagnostic refresh');
    assert.deepEqual(await c.diagnostics(a), []);
    const after = await c.workspaceDiagnostics([{ uri: b, value: there.resultId! }]);
    const cleared = after.items.find((i) => i.uri === b);
    assert.ok(cleared && cleared.kind === 'full');
    assert.deepEqual(cleared.items, []);
  });

  it('a load-balanced endpoint and a function sharing a name: duplicate-endpoint-name at both', async () => {
    await c.initialize({ folders: [ws.root] });
    const a = uri('service.py');
    await c.open(a, 'from strato import Endpoint\n\nsvc = Endpoint(name="resize")\n\n\n@svc.post("/go")\ndef go(x):\n    return x\n');
    assert.deepEqual(codes(await c.diagnostics(a)), ['duplicate-endpoint-name']);
    await c.open(uri('workers/cpu_tasks.py'), readFileSync(ws.file('workers/cpu_tasks.py'), 'utf8'));
    assert.deepEqual(codes(await c.diagnostics(uri('workers/cpu_tasks.py'))), ['duplicate-endpoint-name']);
  });

  it('result ids: an unchanged result is answered "unchanged", an edit makes it full again', async () => {
    await c.initialize({ folders: [ws.root] });
    const u = uri('api.py');
    await c.open(u, readFileSync(ws.file('api.py'), 'utf8'));
    const first = await c.report(u);
    assert.equal(first.kind, 'full');
    assert.equal((await c.report(u, first.resultId)).kind, 'unchanged');
    const at = c.text(u).indexOf('/predict');
    await c.replace(u, at, at + 1, '');
    const second = await c.report(u, first.resultId);
    assert.equal(second.kind, 'full');
    assert.deepEqual(codes(second.items!), ['route-path-slash']);
  });

  it('an edit that only changes the edited file sends no refresh', async () => {
    await c.initialize({ folders: [ws.root] });
    const u = uri('api.py');
    await c.open(u, readFileSync(ws.file('api.py'), 'utf8'));
    await c.diagnostics(u);
    const refreshes = c.refreshes;
    const at = c.text(u).indexOf('/predict');
    await c.replace(u, at, at + 1, '');
    assert.deepEqual(codes(await c.diagnostics(u)), ['route-path-slash']);
    assert.equal(c.refreshes, refreshes);
  });

  it('push: clients without pull diagnostics get both places published, and both cleared', async () => {
    await c.initialize({ folders: [ws.root], pull: false });
    const a = uri('workers/again.py');
    const b = uri('workers/gpu_infer.py');
    await c.open(a, 'from strato import Endpoint\n\n\n@Endpoint(name="generate")\ndef again(x):\n    return x\n');
    await c.until(() => c.published.get(a)?.diagnostics.length && c.published.get(b)?.diagnostics.length, 'both files published');
    assert.deepEqual(codes(c.published.get(a)!.diagnostics), ['duplicate-queue-function']);
    assert.equal(c.published.get(a)!.version, 1);
    assert.equal(c.published.get(b)!.diagnostics[0].relatedInformation?.[0].location.uri, a);

    const at = c.text(a).indexOf('generate');
    await c.replace(a, at, at + 'generate'.length, 'unique');
    await c.until(() => c.published.get(a)?.diagnostics.length === 0 && c.published.get(b)?.diagnostics.length === 0, 'both files cleared');
  });

  it('push: a burst of typing is analysed once it pauses, not once a keystroke; the last text is what is published', async () => {
    await c.initialize({ folders: [ws.root], pull: false });
    const a = uri('workers/typed.py');
    await c.open(a, 'from strato import Endpoint\n\n\n@Endpoint(name="t", workers=(0, 1))\ndef t(x):\n    return x\n');
    const before = c.publications.length;
    // 40 keystrokes sent at once, each of which makes the workers range wrong or right again, and the last wrong.
    const at = c.text(a).indexOf('1))');
    const sends: Array<Promise<void>> = [];
    for (let i = 0; i < 40; i++) sends.push(c.replace(a, at, at + 1, i % 2 ? '0' : '1'));
    sends.push(c.replace(a, at, at + 1, '0'));
    await Promise.all(sends);
    const last = await c.until(() => (c.published.get(a)?.version === 42 ? c.published.get(a) : undefined), 'the last version published');
    assert.deepEqual(codes(last.diagnostics), ['invalid-workers']);
    const during = c.publications.slice(before).filter((p) => p.uri === a).length;
    assert.ok(during <= 3, `${during} publications for 41 keystrokes`);
  });

  it('push: the diagnostics of closed files are published at start', async () => {
    ws.write('workers/broken.py', 'from strato import Endpoint\n\n\n@Endpoint(name="broken", gpu="H100")\ndef broken(x):\n    return x\n');
    await c.initialize({ folders: [ws.root], pull: false });
    const published = await c.until(() => c.published.get(uri('workers/broken.py')), 'the closed file published');
    assert.deepEqual(codes(published.diagnostics), ['unknown-gpu']);
  });

  it('a worker file the analysis cannot read (binary) is named as such, closed or open, as strato check names it', async () => {
    const text = 'from strato import Endpoint\n\n\n@Endpoint(name="nul", workers=(3, 1))\ndef nul(x):\n    return "\u0000"\n';
    ws.write('workers/nul.py', text);
    await c.initialize({ folders: [ws.root], pull: false });
    const closed = await c.until(() => c.published.get(uri('workers/nul.py')), 'the closed file published');
    assert.deepEqual(
      closed.diagnostics.map((d) => [d.code, d.severity, d.message.split(':')[0]]),
      [['unread-file', DiagnosticSeverity.Warning, 'workers/nul.py is not read for endpoints']],
    );
    assert.match(closed.diagnostics[0].message, /it holds a NUL byte, so it is read as binary\. Any @Endpoint in it is not deployed/);
    // A closed file that is not UTF-8: the error strato check and the build report (its workers could not import it).
    writeFileSync(ws.file('workers/latin.py'), Buffer.concat([Buffer.from('from strato import Endpoint\n# caf'), Buffer.from([0xe9]), Buffer.from('\n')]));
    await c.watched([{ uri: uri('workers/latin.py'), type: 1 }]);
    const latin = await c.until(() => c.published.get(uri('workers/latin.py')), 'the file that is not UTF-8 published');
    assert.deepEqual(
      latin.diagnostics.map((d) => [d.code, d.severity, d.range.start.line]),
      [['syntax-error', DiagnosticSeverity.Error, 1]],
    );
    assert.match(latin.diagnostics[0].message, /^workers\/latin\.py is not UTF-8 \(byte 0xe9 on line 2\)/);
    const other = uri('workers/nul2.py');
    await c.open(other, text);
    const opened = await c.until(() => c.published.get(other), 'the open document published');
    assert.deepEqual(
      opened.diagnostics.map((d) => d.code),
      ['unread-file'],
    );
  });
});
