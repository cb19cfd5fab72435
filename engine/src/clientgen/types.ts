// Python type hints -> JSON types: the one mapping behind the typed TypeScript client and the OpenAPI documents
// (deployed and the dev server's /docs). A hint with no JSON form becomes `unknown` and a warning, never a failure.
import type { FileModel, ProjectModel, TypeDeclaration, TypeExpr } from '../project/model';
import { resolveModule } from '../project/analyze';

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
  /** A TypedDict or dataclass: `name` is its unique name in the output (see TypeMapper.shapes). */
  | { kind: 'ref'; name: string };

/** A TypedDict or dataclass as the client declares it. */
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
 * Maps the hints of one project: declarations are looked up in the hint's own file, then by name across the project
 * (the file's `from ... import` settles a name declared in several modules). Each TypedDict or dataclass used becomes
 * one NamedShape, in the order of first use.
 */
export class TypeMapper {
  readonly warnings: TypeWarning[] = [];
  readonly shapes: NamedShape[] = [];
  private readonly byKey = new Map<string, NamedShape>();
  private readonly declarations = new Map<string, Array<{ file: FileModel; decl: TypeDeclaration }>>();

  constructor(
    private readonly model: ProjectModel,
    readonly names: Names,
  ) {
    for (const file of model.files) {
      for (const decl of file.types ?? []) {
        const list = this.declarations.get(decl.name) ?? [];
        list.push({ file, decl });
        this.declarations.set(decl.name, list);
      }
    }
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
    const found = this.resolve(name, at.file);
    return found ? { kind: 'ref', name: this.shapeOf(found.file, found.decl).name } : undefined;
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
    // A generic TypedDict or dataclass (`Page[Item]`): its shape, the parameters left out.
    const found = this.resolve(t.name, at.file);
    if (found) return { kind: 'ref', name: this.shapeOf(found.file, found.decl).name };
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
    this.warnings.push({
      file: at.file,
      line: at.line,
      message:
        `${at.what}: the Python type ${python} has no JSON form the client knows, so it is typed unknown; use str, int, float, bool, ` +
        'list, dict, tuple, Optional, Literal, a TypedDict or a dataclass to type it.',
    });
    return { kind: 'unknown', python };
  }

  /** The declaration a name in `fromFile` refers to. */
  private resolve(name: string, fromFile: string): { file: FileModel; decl: TypeDeclaration } | undefined {
    const simple = name.slice(name.lastIndexOf('.') + 1);
    const candidates = this.declarations.get(simple);
    if (!candidates?.length) return undefined;
    const own = candidates.find((c) => c.file.file === fromFile);
    if (own || candidates.length === 1) return own ?? candidates[0];
    const from = this.model.files.find((f) => f.file === fromFile);
    for (const imp of from?.imports ?? []) {
      if (!imp.names.includes(simple) && !name.startsWith(`${imp.names[0]}.`)) continue;
      const module = from ? resolveModule(from.module, imp.module) : imp.module;
      const hit = candidates.find((c) => c.file.module === module || name === `${module}.${simple}`);
      if (hit) return hit;
    }
    return undefined;
  }

  private shapeOf(file: FileModel, decl: TypeDeclaration): NamedShape {
    const key = `${file.file}:${decl.name}`;
    const known = this.byKey.get(key);
    if (known) return known;
    const shape: NamedShape = {
      name: this.names.take(decl.name, `${decl.name}Type`),
      python: { name: decl.name, kind: decl.kind, file: file.file },
      fields: [],
      doc: decl.docstring,
    };
    // Registered before its fields are mapped, so that a shape that refers to itself (a tree) ends.
    this.byKey.set(key, shape);
    this.shapes.push(shape);
    shape.fields = this.fieldsOf(file, decl, new Set([key]));
    return shape;
  }

  /** Fields of the bases first (TypedDicts and dataclasses both inherit), then the class's own. */
  private fieldsOf(file: FileModel, decl: TypeDeclaration, seen: Set<string>): JsonField[] {
    const out = new Map<string, JsonField>();
    for (const base of decl.bases) {
      const found = this.resolve(base, file.file);
      const key = found && `${found.file.file}:${found.decl.name}`;
      if (!found || !key || seen.has(key) || found.decl.kind !== decl.kind) continue;
      seen.add(key);
      for (const f of this.fieldsOf(found.file, found.decl, seen)) out.set(f.name, f);
    }
    for (const f of decl.fields) {
      const at = { file: file.file, line: f.line, what: `field ${f.name} of ${decl.name}` };
      out.set(f.name, { name: f.name, type: this.map(f.type, at), optional: f.optional, ...(f.default !== undefined ? { default: f.default } : {}) });
    }
    return [...out.values()];
  }
}
