// JSON schemas of the orchestration YAML files, generated from the rule table (so that other YAML tooling
// sees the same keys, types, values and docs); scripts/gen-schemas.ts writes them to syntaxes/schemas/.
import { datacenters, gpuNames } from '../catalog';
import { SERVER, TASK, VOLUME, type KeySpec } from './rules';

type Schema = Record<string, unknown>;

function specSchema(spec: KeySpec, key?: string): Schema {
  const out: Schema = { description: spec.doc };
  switch (spec.type) {
    case 'string':
      out.type = 'string';
      break;
    case 'integer':
      out.type = 'integer';
      break;
    case 'number':
      out.type = 'number';
      break;
    case 'string-or-integer':
      out.type = ['string', 'integer'];
      break;
    case 'list':
      out.type = 'array';
      break;
    case 'map':
      out.type = 'object';
      break;
    case 'map-or-list':
      out.type = ['object', 'array'];
      break;
    case 'scalar':
      out.type = ['string', 'number', 'boolean', 'null'];
      break;
    case 'any':
      break;
  }
  if (spec.values) out.enum = [...spec.values];
  if (key === 'region' || key === 'regions') out.examples = datacenters.map((d) => d.id);
  if (key === 'gpu') out.examples = gpuNames();
  if (spec.item) out.items = specSchema(spec.item, key);
  if (spec.open && spec.keys) {
    // Other backend types keep their own keys: only a strato backend's keys are checked.
    const strato = specSchema({ ...spec, open: false });
    return {
      ...out,
      required: ['type'],
      properties: { type: strato.properties && (strato.properties as Record<string, Schema>).type },
      if: { properties: { type: { const: 'strato' } } },
      then: strato,
    };
  }
  if (spec.keys && spec.type !== 'any') {
    out.properties = Object.fromEntries(Object.entries(spec.keys).map(([k, s]) => [k, specSchema(s, k)]));
    const required = Object.entries(spec.keys)
      .filter(([, s]) => s.required)
      .map(([k]) => k);
    if (required.length) out.required = required;
    out.additionalProperties = false;
  }
  return out;
}

function fileSchema(title: string, table: Record<string, KeySpec>, fixedType?: string): Schema {
  const root = specSchema({ doc: title, type: 'map', keys: table });
  if (fixedType) (root.properties as Record<string, Schema>).type = { const: fixedType, description: 'Configuration type.' };
  return { $schema: 'http://json-schema.org/draft-07/schema#', title, ...root };
}

/** File name -> schema. */
export function orchestrationSchemas(): Record<string, Schema> {
  const config = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Orchestration tool configuration (.dstack.yml): a task or a volume',
    oneOf: [
      { $ref: 'dstack-task.schema.json' },
      { $ref: 'dstack-volume.schema.json' },
      { type: 'object', properties: { type: { enum: ['service', 'dev-environment', 'fleet', 'gateway'] } }, required: ['type'] },
    ],
  };
  return {
    'dstack-task.schema.json': fileSchema('Orchestration tool task (type: task)', TASK, 'task'),
    'dstack-volume.schema.json': fileSchema('Orchestration tool volume (type: volume)', VOLUME, 'volume'),
    'dstack-config.schema.json': config,
    'dstack-server.schema.json': fileSchema('Orchestration tool server configuration (.dstack/server/config.yml)', SERVER),
  };
}
