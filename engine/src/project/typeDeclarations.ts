// The type declarations a hint may name, read from a class statement: TypedDicts (total, Required, NotRequired),
// dataclasses and pydantic models (defaults, Field(...) aliases and exclusions, the model's alias generator), with
// their fields' hints. The typed clients and the manifest's shapes read them (clientgen/types.ts).
import type { SyntaxNode } from './parser';
import type { TypeDeclaration, TypeField } from './model';
import { stringNodeValue } from './strings';
import { children, docstringOf, isExtra, lastSegment, rangeOf, typeExprOf } from './syntax';

/**
 * A module-level TypedDict, dataclass or pydantic model, or undefined for any other class. `typedDicts` and `models`
 * name the TypedDicts and models declared above it in the same file (a class extending one is one too).
 */
export function typeDeclarationOf(
  def: SyntaxNode,
  outer: SyntaxNode,
  typedDicts: ReadonlySet<string>,
  models: ReadonlySet<string> = new Set(),
): TypeDeclaration | undefined {
  const nameNode = def.childForFieldName('name');
  const body = def.childForFieldName('body');
  if (!nameNode || !body) return undefined;
  const bases: string[] = [];
  let total = true;
  let typedDict = false;
  let model = false;
  const superclasses = def.childForFieldName('superclasses');
  for (const arg of superclasses ? children(superclasses) : []) {
    if (arg.type === 'keyword_argument') {
      if (arg.childForFieldName('name')?.text === 'total') total = arg.childForFieldName('value')?.type !== 'false';
    } else if (arg.type === 'identifier' || arg.type === 'attribute') {
      const base = arg.text.replace(/\s+/g, '');
      if (lastSegment(base) === 'TypedDict') typedDict = true;
      else if (lastSegment(base) === 'BaseModel') model = true;
      else {
        bases.push(base);
        if (typedDicts.has(base)) typedDict = true;
        if (models.has(base)) model = true;
      }
    }
  }
  const decorators = outer === def ? [] : children(outer).filter((c) => c.type === 'decorator');
  const isDataclass = decorators.some((d) => {
    const expr = d.namedChildren.find((c) => c && !isExtra(c));
    const callee = expr?.type === 'call' ? expr.childForFieldName('function') : expr;
    return !!callee && (callee.type === 'identifier' || callee.type === 'attribute') && lastSegment(callee.text) === 'dataclass';
  });
  if (!typedDict && !isDataclass && !model) return undefined;
  model &&= !typedDict;
  const fields: TypeField[] = [];
  let aliasGenerator: string | undefined;
  for (const stmt of children(body)) {
    if (model && stmt.type === 'class_definition' && stmt.childForFieldName('name')?.text === 'Config') {
      aliasGenerator = configAliasGenerator(stmt.childForFieldName('body')) ?? aliasGenerator;
      continue;
    }
    const assign = stmt.type === 'expression_statement' ? stmt.namedChildren[0] : null;
    const left = assign?.type === 'assignment' ? assign.childForFieldName('left') : null;
    const typeNode = assign?.childForFieldName('type');
    if (model && left?.text === 'model_config') {
      aliasGenerator = modelConfigAliasGenerator(assign?.childForFieldName('right')) ?? aliasGenerator;
      continue;
    }
    if (!left || left.type !== 'identifier' || !typeNode) continue;
    // A model's `_name` is a private attribute, not a field.
    if (model && left.text.startsWith('_')) continue;
    let type = typeExprOf(typeNode);
    let optional = typedDict && !total;
    const wrapper = type.kind === 'generic' ? lastSegment(type.name) : type.kind === 'name' ? lastSegment(type.name) : '';
    // Class-level constants and dataclass markers are not fields of the JSON object.
    if (wrapper === 'ClassVar' || wrapper === 'InitVar' || wrapper === 'KW_ONLY') continue;
    if (typedDict && type.kind === 'generic' && (wrapper === 'NotRequired' || wrapper === 'Required') && type.args.length === 1) {
      optional = wrapper === 'NotRequired';
      type = type.args[0];
    }
    const value = assign?.childForFieldName('right');
    const given = value && model ? modelDefault(value) : { ...(value ? { default: value.text } : {}) };
    fields.push({ name: left.text, annotation: typeNode.text, type, optional, ...given, line: stmt.startPosition.row });
  }
  const kind = typedDict ? 'TypedDict' : model ? 'BaseModel' : 'dataclass';
  return {
    name: nameNode.text,
    kind,
    bases,
    fields,
    docstring: docstringOf(body),
    nameRange: rangeOf(nameNode),
    ...(aliasGenerator ? { aliasGenerator } : {}),
  };
}

/** `model_config = ConfigDict(alias_generator=to_camel)` (or a dict of it): the generator as written. */
function modelConfigAliasGenerator(value: SyntaxNode | null | undefined): string | undefined {
  if (value?.type === 'call') {
    const args = value.childForFieldName('arguments');
    for (const a of args ? children(args) : [])
      if (a.type === 'keyword_argument' && a.childForFieldName('name')?.text === 'alias_generator') return a.childForFieldName('value')?.text;
  } else if (value?.type === 'dictionary') {
    for (const pair of children(value)) {
      const key = pair.type === 'pair' ? pair.childForFieldName('key') : null;
      if (key?.type === 'string' && stringNodeValue(key) === 'alias_generator') return pair.childForFieldName('value')?.text;
    }
  }
  return undefined;
}

/** pydantic v1's `class Config: alias_generator = to_camel`, still read by v2. */
function configAliasGenerator(body: SyntaxNode | null): string | undefined {
  for (const stmt of body ? children(body) : []) {
    const assign = stmt.type === 'expression_statement' ? stmt.namedChildren[0] : null;
    if (assign?.type === 'assignment' && assign.childForFieldName('left')?.text === 'alias_generator') return assign.childForFieldName('right')?.text;
  }
  return undefined;
}

type FieldOptions = Pick<TypeField, 'default' | 'alias' | 'validationAlias' | 'serializationAlias' | 'excluded'>;

/**
 * A pydantic field's default and aliases: `= value`, or `= Field(...)` whose `default=` (or first argument) is the
 * default, `...` none (required), a `default_factory=` the call itself; `alias=`, `validation_alias=`,
 * `serialization_alias=` (as strings) and `exclude=True`.
 */
function modelDefault(value: SyntaxNode): FieldOptions {
  const callee = value.type === 'call' ? value.childForFieldName('function') : null;
  const args = value.childForFieldName('arguments');
  if (!callee || !args || lastSegment(callee.text) !== 'Field') return { default: value.text };
  const out: FieldOptions = {};
  const names = { alias: 'alias', validation_alias: 'validationAlias', serialization_alias: 'serializationAlias' } as const;
  const given = (node: SyntaxNode | null | undefined) => {
    if (node && node.type !== 'ellipsis' && node.text !== 'Ellipsis') out.default = node.text;
  };
  const list = children(args).filter((a) => !isExtra(a));
  if (list[0] && list[0].type !== 'keyword_argument') given(list[0]);
  for (const a of list) {
    if (a.type !== 'keyword_argument') continue;
    const key = a.childForFieldName('name')?.text;
    const v = a.childForFieldName('value');
    if (key === 'default') given(v);
    else if (key === 'default_factory') out.default = value.text;
    else if (key && Object.hasOwn(names, key) && v?.type === 'string') {
      const alias = stringNodeValue(v);
      if (alias !== undefined) out[names[key as keyof typeof names]] = alias;
    } else if (key === 'exclude' && v?.type === 'true') out.excluded = true;
  }
  return out;
}
