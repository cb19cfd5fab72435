// Quick fixes through the protocol: each one is asked for at its diagnostic, applied as the editor would, and
// the document is validated again.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { CodeAction, Diagnostic } from 'vscode-languageserver/node';
import { TestClient, uriOf } from './lspClient';
import { copyWorkspace, type Workspace } from './workspace';

const HEADER = 'from strato import Endpoint, GpuGroup, CpuInstanceType\n\n\n';

describe('quick fixes', () => {
  let ws: Workspace;
  let c: TestClient;
  let n = 0;

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

  /** Opens `text`, takes the fix titled `title` at the diagnostic `code`, applies it; returns the new text and diagnostics. */
  async function fix(text: string, code: string, title: RegExp): Promise<{ text: string; diagnostics: Diagnostic[]; actions: CodeAction[] }> {
    const u = uriOf(ws.file(`workers/fix_${n++}.py`));
    await c.open(u, text);
    const diagnostic = (await c.diagnostics(u)).find((d) => d.code === code);
    assert.ok(diagnostic, `no ${code} diagnostic`);
    const actions = await c.codeActions(u, diagnostic.range, [diagnostic]);
    const action = actions.find((a) => title.test(a.title));
    assert.ok(action, `no action matching ${title} among ${actions.map((a) => a.title).join(' | ')}`);
    assert.equal(action.kind, 'quickfix');
    assert.ok(action.diagnostics?.some((d) => d.code === code));
    await c.apply(action.edit!);
    return { text: c.text(u), diagnostics: await c.diagnostics(u), actions };
  }

  it('gpu and cpu together: keep gpu, or keep cpu', async () => {
    const src = `${HEADER}@Endpoint(name="x1", gpu=GpuGroup.ADA_24, cpu="cpu3c-2-4", workers=2)\ndef x1(v):\n    return v\n`;
    const gpu = await fix(src, 'gpu-and-cpu', /^Keep gpu/);
    assert.equal(gpu.text, src.replace(' cpu="cpu3c-2-4",', ''));
    assert.deepEqual(gpu.diagnostics, []);
    assert.equal(gpu.actions.length, 2);
    const cpu = await fix(src.replace('x1', 'x2'), 'gpu-and-cpu', /^Keep cpu/);
    assert.equal(cpu.text, src.replace('x1', 'x2').replace(' gpu=GpuGroup.ADA_24,', ''));
    assert.deepEqual(cpu.diagnostics, []);
  });

  it('gpu and cpu on their own lines: the whole line goes; as last argument, the comma before it goes', async () => {
    const src = `${HEADER}@Endpoint(\n    name="x3",\n    gpu=GpuGroup.ADA_24,\n    cpu=CpuInstanceType.CPU3C_2_4,\n)\ndef x3(v):\n    return v\n`;
    const r = await fix(src, 'gpu-and-cpu', /^Keep cpu/);
    assert.equal(r.text, src.replace('    gpu=GpuGroup.ADA_24,\n', ''));
    assert.deepEqual(r.diagnostics, []);
    const last = `${HEADER}@Endpoint(name="x4", gpu=GpuGroup.ADA_24, cpu="cpu3c-2-4")\ndef x4(v):\n    return v\n`;
    const r2 = await fix(last, 'gpu-and-cpu', /^Keep gpu/);
    assert.equal(r2.text, last.replace(', cpu="cpu3c-2-4"', ''));
    assert.deepEqual(r2.diagnostics, []);
  });

  it('a reversed workers pair is swapped', async () => {
    const src = `${HEADER}@Endpoint(name="w", workers=(5, 2))\ndef w(v):\n    return v\n`;
    const r = await fix(src, 'invalid-workers', /workers=\(2, 5\)/);
    assert.equal(r.text, src.replace('(5, 2)', '(2, 5)'));
    assert.deepEqual(r.diagnostics, []);
  });

  it('an unknown GPU or CPU value is replaced with the suggestion, keeping the quote style', async () => {
    const s1 = `${HEADER}@Endpoint(name="g1", gpu='ADA_2')\ndef g1(v):\n    return v\n`;
    const r1 = await fix(s1, 'unknown-gpu', /Replace with 'ADA_24'/);
    assert.equal(r1.text, s1.replace("'ADA_2'", "'ADA_24'"));
    assert.deepEqual(r1.diagnostics, []);

    const s2 = `${HEADER}@Endpoint(name="g2", gpu=GpuGroup.AMPERE_8)\ndef g2(v):\n    return v\n`;
    const r2 = await fix(s2, 'unknown-gpu', /Replace with GpuGroup.AMPERE_80/);
    assert.equal(r2.text, s2.replace('AMPERE_8)', 'AMPERE_80)'));
    assert.deepEqual(r2.diagnostics, []);

    const s3 = `${HEADER}@Endpoint(name="c1", cpu="cpu3c-2-5")\ndef c1(v):\n    return v\n`;
    const r3 = await fix(s3, 'unknown-cpu', /Replace with "cpu3c-2-4"/);
    assert.equal(r3.text, s3.replace('cpu3c-2-5', 'cpu3c-2-4'));
    assert.deepEqual(r3.diagnostics, []);

    const s4 = `${HEADER}@Endpoint(name="c2", cpu=CpuInstanceType.CPU5C_2_5)\ndef c2(v):\n    return v\n`;
    const r4 = await fix(s4, 'unknown-cpu', /Replace with CpuInstanceType.CPU5C_2_4/);
    assert.equal(r4.text, s4.replace('CPU5C_2_5', 'CPU5C_2_4'));
    assert.deepEqual(r4.diagnostics, []);
  });

  it("a route without its '/' gets it; a misspelt route method is corrected", async () => {
    const src = `${HEADER}svc = Endpoint(name="svc")\n\n\n@svc.post('run')\ndef run(v):\n    return v\n`;
    const r = await fix(src, 'route-path-slash', /Add the missing '\/'/);
    assert.equal(r.text, src.replace("'run'", "'/run'"));
    assert.deepEqual(r.diagnostics, []);
    const typo = `${HEADER}svc2 = Endpoint(name="svc2")\n\n\n@svc2.pots("/run")\ndef run(v):\n    return v\n`;
    const r2 = await fix(typo, 'unknown-method', /Replace with post/);
    assert.equal(r2.text, typo.replace('.pots(', '.post('));
    assert.deepEqual(r2.diagnostics, []);
  });

  it('a top-level third-party import moves into the function bodies that use it', async () => {
    const src = [
      'import numpy as np',
      'from strato import Endpoint',
      '',
      '',
      '@Endpoint(name="mean")',
      'def mean(values):',
      '    """Mean of the values."""',
      '    return float(np.mean(values))',
      '',
      '',
      '@Endpoint(name="total")',
      'def total(values):',
      '    return float(np.sum(values))',
      '',
    ].join('\n');
    const r = await fix(src, 'top-level-import', /^Move 'import numpy as np' into the 2 functions/);
    assert.equal(
      r.text,
      [
        'from strato import Endpoint',
        '',
        '',
        '@Endpoint(name="mean")',
        'def mean(values):',
        '    """Mean of the values."""',
        '    import numpy as np',
        '    return float(np.mean(values))',
        '',
        '',
        '@Endpoint(name="total")',
        'def total(values):',
        '    import numpy as np',
        '    return float(np.sum(values))',
        '',
      ].join('\n'),
    );
    assert.deepEqual(r.diagnostics, []);
  });

  it('moving an import keeps a tab-indented body valid; none is offered for a body on the def line or an import sharing its line', async () => {
    const tabs = 'import numpy as np\nfrom strato import Endpoint\n\n\n@Endpoint(name="tabs")\ndef tabs(x):\n\ty = x + 1\n\treturn np.zeros(y)\n';
    const r = await fix(tabs, 'top-level-import', /^Move 'import numpy as np'/);
    assert.equal(r.text, 'from strato import Endpoint\n\n\n@Endpoint(name="tabs")\ndef tabs(x):\n\timport numpy as np\n\ty = x + 1\n\treturn np.zeros(y)\n');
    assert.deepEqual(r.diagnostics, []);
    const actionsFor = async (text: string) => {
      const u = uriOf(ws.file(`workers/nofix_${n++}.py`));
      await c.open(u, text);
      const d = (await c.diagnostics(u)).find((x) => x.code === 'top-level-import');
      assert.ok(d, 'the warning stays');
      return (await c.codeActions(u, d.range, [d])).map((a) => a.title);
    };
    const oneLine = await actionsFor('import numpy as np\nfrom strato import Endpoint\n\n\n@Endpoint(name="one")\ndef one(x): return np.zeros(x)\n');
    assert.ok(!oneLine.some((t) => t.startsWith('Move')), oneLine.join(' | '));
    const shared = await actionsFor(
      'import numpy as np; import os\nfrom strato import Endpoint\n\nBASE = os.getcwd()\n\n\n@Endpoint(name="shared")\ndef shared(x):\n    return np.zeros(x)\n',
    );
    assert.ok(!shared.some((t) => t.startsWith('Move')), shared.join(' | '));
  });

  it('a duplicate name is renamed to a free one, which clears both diagnostics', async () => {
    const src = `${HEADER}@Endpoint(name="job")\ndef a(v):\n    return v\n\n\n@Endpoint(name='job')\ndef b(v):\n    return v\n`;
    const r = await fix(src, 'duplicate-queue-function', /Rename the endpoint to "job-2"/);
    assert.equal(r.text, src.replace('name="job"', 'name="job-2"'));
    assert.deepEqual(r.diagnostics, []);
    // Suggestions skip names already taken anywhere in the project ("embed" and "embed-2" here).
    ws.write('workers/taken.py', `${HEADER}@Endpoint(name="embed-2")\ndef t(v):\n    return v\n`);
    await c.watched([{ uri: uriOf(ws.file('workers/taken.py')), type: 1 }]);
    const r2 = await fix(`${HEADER}@Endpoint(name='embed')\ndef e(v):\n    return v\n`, 'duplicate-queue-function', /Rename the endpoint to "embed-\d+"/);
    assert.ok(Number(/name='embed-(\d+)'/.exec(r2.text)?.[1]) >= 3, r2.text);
    assert.deepEqual(r2.diagnostics, []);
  });

  it('an invalid endpoint name is replaced with a valid one', async () => {
    const src = `${HEADER}@Endpoint(name="my endpoint!")\ndef m(v):\n    return v\n`;
    const r = await fix(src, 'invalid-endpoint-name', /Rename the endpoint to "my-endpoint"/);
    assert.deepEqual(r.diagnostics, []);
  });

  it('versioned edits for clients that support documentChanges; nothing when only other kinds are asked for', async () => {
    await c.stop();
    c = TestClient.inMemory();
    await c.initialize({ folders: [ws.root], documentChanges: true });
    const u = uriOf(ws.file('workers/versioned.py'));
    await c.open(u, `${HEADER}@Endpoint(name="v", workers=(2, 1))\ndef v(x):\n    return x\n`);
    const [d] = await c.diagnostics(u);
    const [action] = await c.codeActions(u, d.range, [d]);
    const change = action.edit?.documentChanges?.[0];
    assert.ok(change && 'textDocument' in change);
    assert.deepEqual(change.textDocument, { uri: u, version: 1 });
    const none = await c.connection.sendRequest('textDocument/codeAction', {
      textDocument: { uri: u },
      range: d.range,
      context: { diagnostics: [d], only: ['refactor'] },
    });
    assert.deepEqual(none, []);
    const none2 = await c.codeActions(u, { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } });
    assert.deepEqual(none2, []);
  });
});
