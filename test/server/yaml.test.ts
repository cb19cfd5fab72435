// The orchestration YAML files through the protocol, on real files: the valid set is clean, rules reach the
// editor (related information on the volume file), the clear-text key fix, completion, hover, symbols, push
// mode, and a bounded fuzz pass of random edits that must never make the server fail.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { analyzeDstack } from '../../engine/src/orchestration';
import { TestClient, uriOf } from './lspClient';

const GOOD = path.resolve(__dirname, '../fixtures/dstack/good');

describe('orchestration YAML in the language server', () => {
  let root: string;
  let c: TestClient;
  const file = (rel: string) => path.join(root, ...rel.split('/'));

  beforeEach(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'strato-lsp-yaml-'));
    cpSync(GOOD, root, { recursive: true });
    c = TestClient.inMemory();
    await c.initialize({ folders: [root] });
  });
  afterEach(async () => {
    assert.deepEqual(c.errors(), []);
    await c.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('reports nothing on the valid set, and every file is pulled clean', async () => {
    for (const rel of ['.dstack.yml', 'infra/data.dstack.yml', 'infra/other.dstack.yml', '.dstack/server/config.yml']) {
      const u = uriOf(file(rel));
      await c.open(u, readFileSync(file(rel), 'utf8'));
      assert.deepEqual(await c.diagnostics(u), [], rel);
    }
    const ws = await c.workspaceDiagnostics();
    assert.deepEqual(
      ws.items.filter((i) => i.uri.includes('dstack') && i.kind === 'full' && i.items.length),
      [],
    );
  });

  it('a region conflict is reported on the task with related information at the volume file', async () => {
    const vol = uriOf(file('infra/data.dstack.yml'));
    await c.open(vol, readFileSync(file('infra/data.dstack.yml'), 'utf8').replace('EU-RO-1', 'EUR-NO-1'));
    const task = uriOf(file('.dstack.yml'));
    await c.open(task, readFileSync(file('.dstack.yml'), 'utf8'));
    const d = await c.diagnostics(task);
    const excluded = d.find((x) => /volume "data" is in region EUR-NO-1/.test(x.message));
    assert.ok(excluded, JSON.stringify(d));
    assert.equal(excluded.code, 'region-conflict');
    assert.equal(excluded.relatedInformation?.[0].location.uri, vol);
    assert.deepEqual(excluded.relatedInformation?.[0].location.range.start, { line: 3, character: 8 });
    assert.ok(d.some((x) => /different regions/.test(x.message)));
  });

  it('unknown keys, GPU names and volumes reach the editor with codes', async () => {
    const u = uriOf(file('infra/new.dstack.yml'));
    await c.open(u, 'type: task\ncomands: [ls]\nresources:\n  gpu: H1000\nvolumes:\n  - nope:/x\n');
    const d = await c.diagnostics(u);
    assert.deepEqual(d.map((x) => x.code).sort(), ['unknown-gpu', 'unknown-key', 'unknown-volume']);
    assert.ok(d.every((x) => x.source === 'strato'));
  });

  it('the clear-text key gets a quick fix that moves it to an environment reference', async () => {
    const u = uriOf(file('.dstack/server/config.yml'));
    await c.open(u, readFileSync(file('.dstack/server/config.yml'), 'utf8').replace('${{ env.STRATO_API_KEY }}', 'sk-live-abc'));
    const d = (await c.diagnostics(u)).find((x) => x.code === 'clear-text-key');
    assert.ok(d);
    assert.equal(d.severity, 2);
    const actions = await c.codeActions(u, d.range, [d]);
    assert.equal(actions.length, 1);
    assert.match(actions[0].title, /environment reference/);
    await c.apply(actions[0].edit!);
    assert.match(c.text(u), /api_key: "\$\{\{ env\.STRATO_API_KEY \}\}"/);
    assert.deepEqual(await c.diagnostics(u), []);
  });

  it('completes keys and values from the rule table and the catalog, and hovers them', async () => {
    const u = uriOf(file('infra/edit.dstack.yml'));
    await c.open(u, 'type: task\nspot_policy: \nresources:\n  gpu: \n  \nregions:\n  - \n');
    const labels = async (line: number, character: number) => (await c.completion(u, { line, character })).map((i) => i.label);
    assert.deepEqual(await labels(1, 13), ['spot', 'on-demand', 'auto']);
    const gpus = await c.completion(u, { line: 3, character: 7 });
    const h200 = gpus.find((i) => i.label === 'H200');
    assert.equal(h200?.detail, '141 GB');
    assert.equal(h200?.insertText, 'H200:141GB');
    assert.ok(
      gpus.some((i) => i.label === 'ADA_24'),
      'the groups too',
    );
    await c.change(u, [{ text: 'type: task\nspot_policy:\n' }]);
    const glued = await c.completion(u, { line: 1, character: 12 });
    assert.equal(glued.find((i) => i.label === 'spot')?.insertText, ' spot', 'right after the colon, the value gets its space');
    await c.change(u, [{ text: 'type: task\nspot_policy: \nresources:\n  gpu: \n  \nregions:\n  - \n' }]);
    // gpu is written beside the line already: a second one would be a key set twice.
    assert.deepEqual((await labels(4, 2)).sort(), ['cpu', 'disk', 'memory', 'shm_size']);
    assert.ok(!(await labels(2, 0)).includes('type'), 'type is written at the top already');
    assert.ok((await labels(6, 4)).includes('EU-RO-1'));
    assert.ok((await labels(2, 0)).includes('volumes'));
    const task = uriOf(file('.dstack.yml'));
    await c.open(task, readFileSync(file('.dstack.yml'), 'utf8'));
    const hoverText = async (needle: string, delta: number) => {
      const h = await c.hover(task, c.position(task, needle, delta));
      return h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';
    };
    assert.match(await hoverText('spot_policy', 1), /spot instances/);
    assert.match(await hoverText('H100:80GB', 1), /NVIDIA H100 80GB HBM3\*\*: 80 GB/);
    assert.match(await hoverText('EU-RO-1', 1), /datacenter in Romania/);
    // Only where the key reads a GPU or a region: a name or a command that spells one is no such value.
    await c.change(u, [{ text: 'type: task\nname: H100\ncommands:\n  - echo gpu: H100 in eu-ro-1\n' }]);
    const at = async (line: number, character: number) => c.hover(u, { line, character });
    assert.equal(await at(1, 8), null);
    assert.equal(await at(3, 18), null);
    assert.equal(await at(3, 26), null);
    // A comment, and a block scalar of commands (a shell script, however it is indented), are text: no hover, no completion.
    await c.change(u, [
      {
        text: 'type: task\ncommands:\n  - |\n    gpu: A100\n    for x in a; do\n      echo gpu: A100\n    done\nresources:\n  gpu: H100  # or A100\n# gpu: H100\n',
      },
    ]);
    assert.equal(await at(3, 10), null, 'in the block scalar');
    assert.equal(await at(5, 16), null, 'deeper in the block scalar');
    assert.deepEqual(await labels(3, 9), [], 'no GPU names in the block scalar');
    assert.equal(await at(8, 20), null, 'in a trailing comment');
    assert.match(JSON.stringify(await at(8, 8)), /H100/, 'the value before the comment still has its hover');
    assert.deepEqual(await labels(9, 2), [], 'nothing in a comment line');
    assert.ok((await labels(7, 0)).length > 0, 'keys at the top level below the script');
  });

  it("completion offers no key written already in the line's mapping, within a list item its own keys only", async () => {
    const u = uriOf(file('.dstack/server/config.yml'));
    await c.open(u, 'projects:\n  - name: main\n    backends:\n      - type: strato\n        \n      - type: aws\n        creds: {}\n');
    const labels = (await c.completion(u, { line: 4, character: 8 })).map((i) => i.label);
    assert.ok(labels.includes('creds'), `the other item's creds is not this one's: ${labels.join(', ')}`);
    assert.ok(!labels.includes('type'), `type is this item's already: ${labels.join(', ')}`);
  });

  it('a quoted or commented volume type gets the volume keys in completion and hover, as the validator reads it', async () => {
    for (const type of ['"volume"', "'volume'", 'volume  # the data', '&t volume']) {
      const u = uriOf(file('infra/typed.dstack.yml'));
      await c.open(u, `type: ${type}\nname: data\nsize: 100GB\n\n`);
      const labels = (await c.completion(u, { line: 3, character: 0 })).map((i) => i.label);
      assert.ok(labels.includes('backend') && !labels.includes('commands'), `${type}: ${labels.join(', ')}`);
      const h = await c.hover(u, c.position(u, 'size', 1));
      assert.match(h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '', /Size of a new volume/, type);
      await c.close(u);
    }
  });

  it('lists document symbols', async () => {
    const u = uriOf(file('.dstack.yml'));
    await c.open(u, readFileSync(file('.dstack.yml'), 'utf8'));
    const symbols = await c.symbols(u);
    assert.ok(symbols.some((s) => s.name === 'name' && s.detail === 'train'));
    const resources = symbols.find((s) => s.name === 'resources');
    assert.deepEqual(
      resources?.children?.map((s) => s.name),
      ['gpu', 'cpu', 'memory', 'disk', 'shm_size'],
    );
  });

  it('survives random edits, and its diagnostics match a fresh analysis', async () => {
    const u = uriOf(file('infra/fuzz.dstack.yml'));
    const base = readFileSync(file('.dstack.yml'), 'utf8');
    await c.open(u, base);
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const snippets = ['gpu: ', 'H1', ':', '..', '\n  ', '- ', 'regions: [', 'type: volume\n', '"', '#', '  ', 'size: 10', '{', '\t', 'api_key: x\n'];
    for (let i = 0; i < 150; i++) {
      const text = c.text(u);
      const at = Math.floor(rnd() * (text.length + 1));
      const del = rnd() < 0.4 ? Math.floor(rnd() * 6) : 0;
      await c.replace(u, at, Math.min(text.length, at + del), rnd() < 0.7 ? snippets[Math.floor(rnd() * snippets.length)] : '');
      if (i % 10 === 0) {
        const d = await c.diagnostics(u);
        const own = analyzeDstack('infra/fuzz.dstack.yml', c.text(u)).sink.items;
        // Cross-file rules only add to the file's own diagnostics.
        for (const x of own)
          assert.ok(
            d.some((y) => y.code === x.code && y.message === x.message),
            `missing ${x.code} after edit ${i}`,
          );
        await c.completion(u, { line: Math.floor(rnd() * 10), character: Math.floor(rnd() * 10) });
        await c.hover(u, { line: Math.floor(rnd() * 10), character: Math.floor(rnd() * 10) });
        await c.symbols(u);
      }
    }
  });
});

describe('orchestration YAML with a push-only client', () => {
  it('pushes diagnostics of YAML files, and clears them when fixed', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'strato-lsp-yaml-'));
    cpSync(GOOD, root, { recursive: true });
    const c = TestClient.inMemory();
    try {
      await c.initialize({ folders: [root], pull: false });
      const u = uriOf(path.join(root, 'infra', 'cheap.dstack.yml'));
      await c.open(u, 'type: task\nspot_policy: spto\n');
      const p = await c.until(() => (c.published.get(u)?.diagnostics.length ? c.published.get(u) : undefined), 'push');
      assert.equal(p.diagnostics[0].code, 'invalid-value');
      await c.replace(u, 0, c.text(u).length, 'type: task\nspot_policy: spot\n');
      await c.until(() => c.published.get(u)?.diagnostics.length === 0, 'cleared');
      assert.deepEqual(c.errors(), []);
    } finally {
      await c.stop();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
