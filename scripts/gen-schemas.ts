// Writes the JSON schemas of the orchestration YAML files (syntaxes/schemas/) from the engine's rule table.
// Usage: node --import tsx scripts/gen-schemas.ts   (test/grammar/schemas.test.ts fails when they are stale)
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { orchestrationSchemas } from '../engine/src/orchestration/schema';

const dir = path.resolve(__dirname, '..', 'syntaxes', 'schemas');
for (const [name, schema] of Object.entries(orchestrationSchemas())) writeFileSync(path.join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
