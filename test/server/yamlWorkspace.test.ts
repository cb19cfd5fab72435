// The language server's cache of the orchestration YAML files: an edit redoes its own file and the cross-file
// rules, not the walk of the folder's tree (counted, not timed); a file event on disk lists the folder again.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { listOrchestrationFiles } from '../../engine/src/orchestration';
import { YamlWorkspace } from '../../server/src/dstack/yamlWorkspace';

const GOOD = path.resolve(__dirname, '../fixtures/dstack/good');
const uriOf = (file: string): string => pathToFileURL(file).href;

describe('the YAML workspace cache', () => {
  let root: string;
  let listings: number;
  let ws: YamlWorkspace;
  const file = (rel: string) => path.join(root, ...rel.split('/'));
  const codes = (uri: string) => ws.diagnostics(uri).map((d) => d.code);

  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'strato-yaml-ws-'));
    cpSync(GOOD, root, { recursive: true });
    listings = 0;
    ws = new YamlWorkspace((r) => {
      listings++;
      return listOrchestrationFiles(r);
    });
    ws.addFolder(uriOf(root));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('edits to open documents do not list the folder again, and the cross-file rules still see them', () => {
    const task = uriOf(file('.dstack.yml'));
    const volume = uriOf(file('infra/data.dstack.yml'));
    const taskText = readFileSync(file('.dstack.yml'), 'utf8');
    ws.open(task, taskText, 1);
    assert.deepEqual(codes(task), []);
    ws.change(task, [{ text: taskText.replace('spot_policy: auto', 'spot_policy: spto') }], 2);
    assert.deepEqual(codes(task), ['invalid-value']);
    ws.change(task, [{ text: taskText }], 3);
    assert.deepEqual(codes(task), []);
    // Another file's edit reaches the task through the cross-file rules.
    ws.open(volume, readFileSync(file('infra/data.dstack.yml'), 'utf8').replace('EU-RO-1', 'EUR-NO-1'), 1);
    assert.ok(codes(task).includes('region-conflict'));
    ws.close(volume);
    assert.deepEqual(codes(task), []);
    ws.all();
    assert.equal(listings, 1);
  });

  it('a file event on disk lists the folder again', () => {
    const task = uriOf(file('.dstack.yml'));
    ws.open(task, readFileSync(file('.dstack.yml'), 'utf8').replace('- data:/data', '- fresh:/fresh'), 1);
    assert.deepEqual(codes(task), ['unknown-volume']);
    writeFileSync(file('infra/fresh.dstack.yml'), 'type: volume\nname: fresh\nbackend: strato\nregion: EU-RO-1\n');
    ws.invalidate();
    assert.deepEqual(codes(task), []);
    assert.equal(listings, 2);
  });
});
