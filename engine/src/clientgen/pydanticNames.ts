// The JSON keys of a pydantic model's fields, as the model reads them (validation) and answers them (serialisation,
// by alias: what the worker runtime sends): `validation_alias`, `serialization_alias`, `alias`, else the model's
// alias generator applied to the field's name. pydantic's own generators are followed exactly (their code ported from
// pydantic.alias_generators); another one cannot be read without running it.
import type { TypeField } from '../project/model';

/** pydantic.alias_generators, by name. */
const GENERATORS: Record<string, (name: string) => string> = { to_camel: toCamel, to_pascal: toPascal, to_snake: toSnake };

/** The generator a model's `alias_generator` names (undefined: none given); null for one that cannot be followed. */
export function aliasGenerator(written: string | undefined): ((name: string) => string) | undefined | null {
  if (written === undefined) return undefined;
  return GENERATORS[written.slice(written.lastIndexOf('.') + 1)] ?? null;
}

/** The field's key where the model reads it (`input`), or answers it; undefined: it is never answered (exclude=True). */
export function fieldKey(f: TypeField, generate: ((name: string) => string) | undefined | null, input: boolean): string | undefined {
  if (!input && f.excluded) return undefined;
  const alias = (input ? f.validationAlias : f.serializationAlias) ?? f.alias;
  return alias ?? (generate ? generate(f.name) : f.name);
}

/** Python's str.title(): each run of letters capitalised, the rest of it lower-cased. */
const title = (s: string) => s.replace(/[A-Za-z]+/g, (w) => w[0].toUpperCase() + w.slice(1).toLowerCase());

function toPascal(snake: string): string {
  return title(snake).replace(/([0-9A-Za-z])_(?=[0-9A-Z])/g, '$1');
}

function toCamel(snake: string): string {
  if (/^[a-z]+[A-Za-z0-9]*$/.test(snake) && !/\d[a-z]/.test(snake)) return snake;
  return toPascal(snake).replace(/^(_*[A-Z])/, (m) => m.toLowerCase());
}

function toSnake(camel: string): string {
  return camel
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .replace(/([0-9])([A-Z])/g, '$1_$2')
    .replace(/([a-z])([0-9])/g, '$1_$2')
    .replace(/-/g, '_')
    .toLowerCase();
}
