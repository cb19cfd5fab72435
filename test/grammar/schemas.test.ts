// The JSON schemas contributed to VS Code: the orchestration ones are what the rule table generates (never
// stale), accept the valid set and reject bad files; the manifest schema accepts a manifest the build makes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { createManifest } from '../../engine/src/build/manifest';
import { loadProject } from '../../engine/src/project';
import { orchestrationSchemas } from '../../engine/src/orchestration/schema';

const REPO = path.resolve(__dirname, '../..');
const SCHEMAS = path.join(REPO, 'syntaxes', 'schemas');
const GOOD = path.join(REPO, 'test', 'fixtures', 'dstack', 'good');
const read = (f: string): unknown => JSON.parse(readFileSync(path.join(SCHEMAS, f), 'utf8'));

function validator() {
  const ajv = new Ajv({ allErrors: true, strict: false });
  for (const name of Object.keys(orchestrationSchemas())) ajv.addSchema(read(name) as object, name);
  return (name: string, data: unknown) => {
    const ok = ajv.validate(name, data);
    return { ok, errors: JSON.stringify(ajv.errors) };
  };
}

describe('JSON schemas', () => {
  it('syntaxes/schemas match the rule table (run scripts/gen-schemas.ts after changing it)', () => {
    for (const [name, schema] of Object.entries(orchestrationSchemas())) assert.deepEqual(read(name), JSON.parse(JSON.stringify(schema)), name);
  });

  it('accept every file of the valid set', () => {
    const v = validator();
    const cases: Array<[string, string]> = [
      ['.dstack.yml', 'dstack-config.schema.json'],
      ['infra/data.dstack.yml', 'dstack-config.schema.json'],
      ['infra/other.dstack.yml', 'dstack-config.schema.json'],
      ['infra/aws.dstack.yml', 'dstack-volume.schema.json'],
      ['.dstack/server/config.yml', 'dstack-server.schema.json'],
    ];
    for (const [file, schema] of cases) {
      const r = v(schema, parse(readFileSync(path.join(GOOD, file), 'utf8')));
      assert.ok(r.ok, `${file}: ${r.errors}`);
    }
  });

  it('reject unknown keys, wrong enums and a strato backend without creds; other backends pass', () => {
    const v = validator();
    assert.equal(v('dstack-task.schema.json', { type: 'task', comands: ['ls'] }).ok, false);
    assert.equal(v('dstack-task.schema.json', { type: 'task', spot_policy: 'spto' }).ok, false);
    assert.equal(v('dstack-volume.schema.json', { type: 'volume', name: 'v', backend: 'strato' }).ok, false);
    assert.equal(v('dstack-server.schema.json', { projects: [{ name: 'm', backends: [{ type: 'strato' }] }] }).ok, false);
    assert.equal(v('dstack-server.schema.json', { projects: [{ name: 'm', backends: [{ type: 'aws', creds: { type: 'default' }, anything: 1 }] }] }).ok, true);
  });

  it('the manifest schema accepts a manifest built from a real project and rejects a broken one', async () => {
    const model = await loadProject(path.join(REPO, 'test', 'fixtures', 'lsp', 'workspace'));
    assert.ok(model.endpoints.length > 0);
    const manifest = createManifest(model, 'demo', 'a'.repeat(64));
    const ajv = new Ajv({ allErrors: true, strict: false });
    const schema = read('strato-manifest.schema.json') as object;
    assert.ok(ajv.validate(schema, JSON.parse(JSON.stringify(manifest))), JSON.stringify(ajv.errors));
    assert.equal(ajv.validate(schema, { ...manifest, version: 2 }), false);
    const first = Object.keys(manifest.resources)[0];
    assert.equal(ajv.validate(schema, { ...manifest, resources: { [first]: { ...manifest.resources[first], workersMax: 'many' } } }), false);
  });
});
