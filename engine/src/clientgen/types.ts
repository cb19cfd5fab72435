// Python type hints -> JSON types: the one mapping behind the typed TypeScript client and the OpenAPI documents
// (deployed and the dev server's /docs). A hint with no JSON form becomes `unknown` and a warning, never a failure.
import type { FileModel, ProjectModel, TypeDeclaration, TypeExpr } from '../project/model';
import { Declarations, type Found } from './declarations';
import { aliasGenerator, fieldKey } from './pydanticNames';

export interface JsonField {
  name: string;
  type: JsonType;
  /** The key may be left out (a parameter with a default, a TypedDict key that is not required). */
  optional: boolean;
  doc?: string;
  /** The Python default, as written. */
  default?: string;
}

export type JsonType =
  | { kind: 'string' | 'integer' | 'number' | 'boolean' | 'null' }
  /** `python`: the hint that has no JSON form (named in a comment); absent for `Any` or a missing hint. */
  | { kind: 'unknown'; python?: string }
  | { kind: 'array'; items: JsonType }
  | { kind: 'tuple'; items: JsonType[] }
  | { kind: 'record'; values: JsonType }
  | { kind: 'union'; options: JsonType[] }
  | { kind: 'literal'; value: string | number | boolean | null }
  /** An object written out in place (a function's arguments); `rest` types the keys of `**kwargs`. */
  | { kind: 'object'; fields: JsonField[]; rest?: JsonType }
  /** A TypedDict, dataclass or pydantic model: `name` is its unique name in the output (see TypeMapper.shapes). */
  | { kind: 'ref'; name: string };

/** A TypedDict, dataclass or pydantic model as the client declares it. */
export interface NamedShape {
  name: string;
  python: { name: string; kind: TypeDeclaration['kind']; file: string };
  fields: JsonField[];
  doc?: string;
}

export interface TypeWarning {
  /** Project-relative file and 0-based line. */
  file: string;
  line: number;
  message: string;
}

/** Where a hint sits, for warnings: `file:line`, and what it types ("parameter image of resize()"). */
export interface Place {
  file: string;
  line: number;
  what: string;
  /**
   * The hint types what a call sends to a route (a parameter the runtime builds by its annotation), not what it
   * answers: a pydantic model's fields with a default may be left out there, so a model with one (or a shape holding
   * one) is declared a second time for it (`ItemInput`).
   */
  input?: boolean;
}

export const UNKNOWN: JsonType = { kind: 'unknown' };

const PRIMITIVES: Record<string, JsonType['kind']> = { str: 'string', int: 'integer', float: 'number', bool: 'boolean', None: 'null', NoneType: 'null' };
const ARRAYS = new Set(['list', 'List', 'Sequence', 'MutableSequence', 'set', 'Set', 'frozenset', 'FrozenSet', 'AbstractSet', 'Iterable', 'Collection']);
const MAPPINGS = new Set(['dict', 'Dict', 'Mapping', 'MutableMapping', 'OrderedDict', 'defaultdict', 'DefaultDict']);
const TUPLES = new Set(['tuple', 'Tuple']);
/** Wrappers whose first argument is the type (`Annotated[int, "meta"]`, `Required[str]`). */
const TRANSPARENT = new Set(['Annotated', 'Required', 'NotRequired', 'ReadOnly', 'Final']);
/** What generators are annotated with: their first argument is the type of each yielded value. */
export const GENERATORS = new Set(['Iterator', 'Generator', 'AsyncIterator', 'AsyncGenerator', 'Iterable', 'AsyncIterable']);
const QUALIFIERS = /^(typing|typing_extensions|collections\.abc|collections|builtins|dataclasses)\./;

/** `typing.List` -> `List`; a name of another module (`np.ndarray`) stays whole. */
export function bareName(name: string): string {
  return name.replace(QUALIFIERS, '');
}

/** The hint as Python source, for comments and warnings. */
export function pythonText(t: TypeExpr): string {
  switch (t.kind) {
    case 'name':
      return t.name;
    case 'generic':
      return `${t.name}[${t.args.map(pythonText).join(', ')}]`;
    case 'union':
      return t.options.map(pythonText).join(' | ');
    case 'string':
      return JSON.stringify(t.value);
    case 'value':
      return t.value === null ? 'None' : typeof t.value === 'boolean' ? (t.value ? 'True' : 'False') : String(t.value);
    case 'ellipsis':
      return '...';
    case 'list':
      return `[${t.items.map(pythonText).join(', ')}]`;
    case 'other':
      return t.text;
  }
}

export function union(options: JsonType[]): JsonType {
  const flat: JsonType[] = [];
  const seen = new Set<string>();
  for (const o of options.flatMap((x) => (x.kind === 'union' ? x.options : [x]))) {
    const key = JSON.stringify(o);
    if (seen.has(key)) continue;
    flat.push(o);
    seen.add(key);
  }
  if (flat.some((o) => o.kind === 'unknown')) return flat.find((o) => o.kind === 'unknown')!;
  // `int | float` is a number: every int is one.
  if (flat.some((o) => o.kind === 'number')) flat.splice(0, flat.length, ...flat.filter((o) => o.kind !== 'integer'));
  return flat.length === 1 ? flat[0] : { kind: 'union', options: flat };
}

/** Allocates names that are unique in the generated module. */
export class Names {
  private readonly taken = new Set<string>();
  constructor(reserved: Iterable<string> = []) {
    for (const r of reserved) this.taken.add(r);
  }
  /** The first free name among `wanted`, else the first with a number appended. */
  take(...wanted: string[]): string {
    for (const w of wanted) if (!this.taken.has(w)) return this.claim(w);
    for (let n = 2; ; n++) if (!this.taken.has(`${wanted[0]}${n}`)) return this.claim(`${wanted[0]}${n}`);
  }
  private claim(name: string): string {
    this.taken.add(name);
    return name;
  }
}

/**
 * Maps the hints of one project, a class name to the declaration its file means (declarations.ts). Each TypedDict,
 * dataclass or pydantic model used becomes one NamedShape, in the order of first use (a model that takes defaults a
 * second one for inputs: Place.input).
 */
export class TypeMapper {
  readonly warnings: TypeWarning[] = [];
  readonly shapes: NamedShape[] = [];
  private readonly byKey = new Map<string, NamedShape>();
  private readonly declared: Declarations;
  private readonly differs = new Map<string, boolean>();

  constructor(
    model: ProjectModel,
    readonly names: Names,
  ) {
    this.declared = new Declarations(model);
  }

  map(t: TypeExpr | undefined, at: Place): JsonType {
    return t ? this.convert(t, at) : UNKNOWN;
  }

  private convert(t: TypeExpr, at: Place): JsonType {
    switch (t.kind) {
      case 'name':
        return this.named(t.name, at) ?? this.unmapped(t, at);
      case 'generic':
        return this.generic(t, at);
      case 'union':
        return union(t.options.map((o) => this.convert(o, at)));
      case 'string':
        // A quoted hint is a forward reference: `"Point"`, or a whole hint in quotes.
        return /^[A-Za-z_][\w.]*$/.test(t.value) ? (this.named(t.value, at) ?? this.unmapped(t, at)) : this.unmapped(t, at);
      case 'value':
        return t.value === null ? { kind: 'null' } : this.unmapped(t, at);
      default:
        return this.unmapped(t, at);
    }
  }

  private named(name: string, at: Place): JsonType | undefined {
    const bare = bareName(name);
    const primitive = PRIMITIVES[bare];
    if (primitive) return { kind: primitive } as JsonType;
    if (bare === 'Any' || bare === 'object') return UNKNOWN;
    if (ARRAYS.has(bare) || TUPLES.has(bare)) return { kind: 'array', items: UNKNOWN };
    if (MAPPINGS.has(bare)) return { kind: 'record', values: UNKNOWN };
    const found = this.declared.resolve(name, at.file);
    return found ? this.refTo(found, at) : undefined;
  }

  private generic(t: Extract<TypeExpr, { kind: 'generic' }>, at: Place): JsonType {
    const bare = bareName(t.name);
    const arg = (i: number) => (t.args[i] ? this.convert(t.args[i], at) : UNKNOWN);
    if (bare === 'Optional') return union([arg(0), { kind: 'null' }]);
    if (bare === 'Union') return union(t.args.map((a) => this.convert(a, at)));
    if (bare === 'Literal') return this.literal(t, at);
    if (TRANSPARENT.has(bare)) return arg(0);
    if (ARRAYS.has(bare)) return { kind: 'array', items: arg(0) };
    if (MAPPINGS.has(bare)) return { kind: 'record', values: arg(1) };
    if (TUPLES.has(bare)) {
      if (t.args.length === 2 && t.args[1].kind === 'ellipsis') return { kind: 'array', items: arg(0) };
      // `tuple[()]` is the empty tuple.
      if (t.args.length === 1 && t.args[0].kind === 'other' && t.args[0].text.replace(/\s/g, '') === '()') return { kind: 'tuple', items: [] };
      return { kind: 'tuple', items: t.args.map((a) => this.convert(a, at)) };
    }
    // A generic TypedDict, dataclass or model (`Page[Item]`): its shape, the parameters left out.
    const found = this.declared.resolve(t.name, at.file);
    if (found) return this.refTo(found, at);
    return this.unmapped(t, at);
  }

  private literal(t: Extract<TypeExpr, { kind: 'generic' }>, at: Place): JsonType {
    const options: JsonType[] = [];
    for (const a of t.args) {
      if (a.kind === 'string' || a.kind === 'value') options.push({ kind: 'literal', value: a.value });
      else if (a.kind === 'generic' && bareName(a.name) === 'Literal') options.push(this.literal(a, at));
      else return this.unmapped(t, at);
    }
    return options.length ? union(options) : this.unmapped(t, at);
  }

  private unmapped(t: TypeExpr, at: Place): JsonType {
    const python = pythonText(t);
    const message =
      `${at.what}: the Python type ${python} has no JSON form the client knows, so it is typed unknown; use str, int, float, bool, ` +
      'list, dict, tuple, Optional, Literal, a TypedDict, a dataclass or a pydantic model to type it.';
    // Once: a model's fields are mapped twice where it is declared for inputs too.
    if (!this.warnings.some((w) => w.file === at.file && w.line === at.line && w.message === message))
      this.warnings.push({ file: at.file, line: at.line, message });
    return { kind: 'unknown', python };
  }

  /** The shape a hint names: a second one for inputs where a field with a default may be left out (Place.input). */
  private refTo(found: Found, at: Place): JsonType {
    const input = at.input === true && this.takesDefaults(found);
    return { kind: 'ref', name: this.shapeOf(found.file, found.decl, input).name };
  }

  /** Whether a pydantic model with a default is this shape, a base of it or in one of its fields (at any depth). */
  private takesDefaults(start: Found): boolean {
    const startKey = keyOf(start);
    const known = this.differs.get(startKey);
    if (known !== undefined) return known;
    const seen = new Set<string>([startKey]);
    const stack = [start];
    let out = false;
    const visit = (name: string, from: string) => {
      const found = this.declared.resolve(name, from);
      if (found && !seen.has(keyOf(found))) {
        seen.add(keyOf(found));
        stack.push(found);
      }
    };
    while (stack.length && !out) {
      const { file, decl } = stack.pop()!;
      // A default may be left out of a call; an alias of one way only, or a field never answered, differs too.
      if (decl.kind === 'BaseModel' && decl.fields.some((f) => f.default !== undefined || f.excluded || f.validationAlias || f.serializationAlias)) out = true;
      for (const base of decl.bases) visit(base, file.file);
      for (const f of decl.fields) for (const name of namesIn(f.type)) visit(name, file.file);
    }
    this.differs.set(startKey, out);
    return out;
  }

  private shapeOf(file: FileModel, decl: TypeDeclaration, input = false): NamedShape {
    const key = `${keyOf({ file, decl })}${input ? ':input' : ''}`;
    const known = this.byKey.get(key);
    if (known) return known;
    const shape: NamedShape = {
      name: input ? this.names.take(`${decl.name}Input`, `${decl.name}InputType`) : this.names.take(decl.name, `${decl.name}Type`),
      python: { name: decl.name, kind: decl.kind, file: file.file },
      fields: [],
      doc: input ? [decl.docstring, 'As a call sends it: a field with a default may be left out.'].filter(Boolean).join('\n\n') : decl.docstring,
    };
    // Registered before its fields are mapped, so that a shape that refers to itself (a tree) ends.
    this.byKey.set(key, shape);
    this.shapes.push(shape);
    shape.fields = this.fieldsOf(file, decl, new Set([keyOf({ file, decl })]), input, this.generatorOf({ file, decl }));
    return shape;
  }

  /**
   * A model's alias generator: its own, else the nearest base's (pydantic merges the config, and applies it to the
   * inherited fields too). One the client cannot follow is a warning, and the fields keep their names.
   */
  private generatorOf(start: Found): ((name: string) => string) | undefined {
    const seen = new Set<string>();
    const visit = (f: Found): string | undefined => {
      if (seen.has(keyOf(f))) return undefined;
      seen.add(keyOf(f));
      if (f.decl.aliasGenerator) return f.decl.aliasGenerator;
      for (const base of f.decl.bases) {
        const found = this.declared.resolve(base, f.file.file);
        const got = found && found.decl.kind === 'BaseModel' ? visit(found) : undefined;
        if (got) return got;
      }
      return undefined;
    };
    const written = start.decl.kind === 'BaseModel' ? visit(start) : undefined;
    const generate = aliasGenerator(written);
    if (generate !== null) return generate;
    const message =
      `model ${start.decl.name}: its alias_generator ${written} is not one the client can follow (pydantic's to_camel, to_pascal, ` +
      "to_snake), so its fields are typed under their names, which the model's JSON may not use; give the fields alias= instead.";
    const line = start.decl.nameRange.start.line;
    if (!this.warnings.some((w) => w.file === start.file.file && w.line === line && w.message === message))
      this.warnings.push({ file: start.file.file, line, message });
    return undefined;
  }

  /**
   * Fields of the bases first (TypedDicts, dataclasses and models all inherit), then the class's own. A model's field
   * is under the key the model reads (`input`) or answers (pydanticNames.ts: aliases, the alias generator, exclude);
   * one with a default may be left out of an input.
   */
  private fieldsOf(file: FileModel, decl: TypeDeclaration, seen: Set<string>, input: boolean, generate: ((name: string) => string) | undefined): JsonField[] {
    const out = new Map<string, JsonField>();
    for (const base of decl.bases) {
      const found = this.declared.resolve(base, file.file);
      const key = found && keyOf(found);
      if (!found || !key || seen.has(key) || found.decl.kind !== decl.kind) continue;
      seen.add(key);
      for (const f of this.fieldsOf(found.file, found.decl, seen, input, generate)) out.set(f.name, f);
    }
    for (const f of decl.fields) {
      const at = { file: file.file, line: f.line, what: `field ${f.name} of ${decl.name}`, ...(input ? { input } : {}) };
      const name = decl.kind === 'BaseModel' ? fieldKey(f, generate, input) : f.name;
      if (name === undefined) continue; // exclude=True: never in an answer
      const optional = decl.kind === 'BaseModel' ? input && f.default !== undefined : f.optional;
      out.set(name, { name, type: this.map(f.type, at), optional, ...(f.default !== undefined ? { default: f.default } : {}) });
    }
    return [...out.values()];
  }
}

const keyOf = (f: Found) => `${f.file.file}:${f.decl.name}`;

/** The names a hint mentions (`dict[str, list[Item]]`: dict, str, list, Item), forward references included. */
function namesIn(t: TypeExpr | undefined): string[] {
  if (!t) return [];
  switch (t.kind) {
    case 'name':
      return [t.name];
    case 'generic':
      return bareName(t.name) === 'Literal' ? [] : [t.name, ...t.args.flatMap(namesIn)];
    case 'union':
      return t.options.flatMap(namesIn);
    case 'list':
      return t.items.flatMap(namesIn);
    case 'string':
      return /^[A-Za-z_][\w.]*$/.test(t.value) ? [t.value] : [];
    default:
      return [];
  }
}
