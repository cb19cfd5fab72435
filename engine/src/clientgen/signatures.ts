// A function's JSON signature: the object its arguments travel in (a queue job's `input`, a route's body or
// query), the type of its result, and the type of each value it streams. From the project model's hints.
import type { EndpointSpec, FunctionInfo, ParamInfo } from '../project/model';
import { namedParams } from '../project/syntax';
import { bareName, GENERATORS, UNKNOWN, union, type JsonField, type JsonType, type TypeMapper } from './types';

export interface Signature {
  /** Always an object type (or a union of them, for a class endpoint with several methods). */
  input: JsonType;
  output: JsonType;
  /** Each streamed value: what a generator yields; a function that does not stream sends its whole output once. */
  chunk: JsonType;
  streams: boolean;
  /**
   * A route's arguments whose annotation the runtime checks a body value against (pydantic, or the lax int, float,
   * bool and str rules): a value it refuses is a 422. All annotated ones but `Any` and `object`.
   */
  checked?: string[];
}

/** A parameter before `/` (`def f(a, /, b)`): Python refuses it by name, so no JSON input can carry it. */
const isPositionalOnly = (p: ParamInfo): boolean => p.positionalOnly === true;

/**
 * The arguments a call can name: positional and keyword ones. A call's input arrives by name (`f(**input)`), so
 * `*args` and the parameters before `/` cannot be passed.
 */
export function callableParams(fn: FunctionInfo): ParamInfo[] {
  return namedParams(fn.params);
}

/** What a default value says about an unannotated parameter (`n=2` is an int). */
function typeOfDefault(text: string | undefined): JsonType {
  const d = (text ?? '').trim();
  if (/^-?\d+$/.test(d)) return { kind: 'integer' };
  if (/^-?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)$/.test(d)) return { kind: 'number' };
  if (d === 'True' || d === 'False') return { kind: 'boolean' };
  if (/^[rbuf]?(['"]).*\1$/is.test(d) && !/^[bf]/i.test(d)) return { kind: 'string' };
  return UNKNOWN;
}

/** `name: description` lines of a docstring's Args section (Google style) or `:param name: description` (Sphinx). */
export function parameterDocs(docstring: string | undefined): Map<string, string> {
  const docs = new Map<string, string>();
  if (!docstring) return docs;
  for (const m of docstring.matchAll(/^\s*:param\s+(?:[\w.[\], |]+\s+)?(\w+):\s*(.+)$/gm)) docs.set(m[1], m[2].trim());
  const lines = docstring.split('\n');
  const start = lines.findIndex((l) => /^\s*(Args|Arguments|Parameters|Params):\s*$/.test(l));
  if (start >= 0) {
    const indent = (l: string) => l.length - l.trimStart().length;
    let current: string | undefined;
    let itemIndent = -1;
    for (const line of lines.slice(start + 1)) {
      if (!line.trim()) continue;
      if (indent(line) <= indent(lines[start])) break;
      const m = /^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$/.exec(line);
      if (m && (itemIndent < 0 || indent(line) === itemIndent)) {
        itemIndent = indent(line);
        current = m[1].replace(/^\*+/, '');
        docs.set(current, m[2].trim());
      } else if (current) docs.set(current, `${docs.get(current)} ${line.trim()}`.trim());
    }
  }
  return docs;
}

/**
 * The object a call's arguments travel in. `validated`: the runtime builds each named argument from what is sent by
 * its annotation (a route's: docs/worker-protocol.md), so a pydantic model's defaults fill the fields a call leaves
 * out; a queue-based function (and `**kwargs`) receives the JSON as sent (a model parameter as a dict), so it must
 * hold every field.
 */
export function argumentsOf(
  fn: FunctionInfo,
  mapper: TypeMapper,
  file: string,
  skip: ReadonlySet<string> = new Set(),
  validated = false,
): Extract<JsonType, { kind: 'object' }> {
  const docs = parameterDocs(fn.docstring);
  const line = fn.nameRange.start.line;
  const unnamed = fn.params.filter(isPositionalOnly);
  if (unnamed.length) {
    // Left out of the input; one without a default fails every call ("positional-only arguments passed as keyword
    // arguments"), whatever the input: the function stays untyped rather than typed with an argument it cannot take.
    const required = unnamed.some((p) => p.default === undefined);
    mapper.warnings.push({
      file,
      line,
      message:
        `${fn.name}(): parameter${unnamed.length === 1 ? '' : 's'} ${unnamed.map((p) => p.name).join(', ')} ${unnamed.length === 1 ? 'is' : 'are'} ` +
        'positional-only (before "/") and a call passes its input by name, so ' +
        (required
          ? 'every call fails: its input is untyped (unknown); remove the "/" to type it.'
          : `the client leaves ${unnamed.length === 1 ? 'it' : 'them'} out; remove the "/" to pass ${unnamed.length === 1 ? 'it' : 'them'}.`),
    });
    if (required) return UNTYPED_INPUT;
  }
  const star = fn.params.find((p) => p.kind === 'var-positional');
  if (star)
    mapper.warnings.push({
      file,
      line,
      message:
        `${fn.name}(): *${star.name} always receives nothing, since a call passes its input by name: the client has no field for it; ` +
        `take a list instead (${star.name}: list[...]) to pass several values.`,
    });
  const fields: JsonField[] = [];
  for (const p of callableParams(fn)) {
    if (skip.has(p.name)) continue;
    const type = p.type ? mapper.map(p.type, { file, line, what: `parameter ${p.name} of ${fn.name}()`, input: validated }) : typeOfDefault(p.default);
    fields.push({ name: p.name, type, optional: p.default !== undefined, doc: docs.get(p.name), default: p.default });
  }
  const kwargs = fn.params.find((p) => p.kind === 'var-keyword');
  const rest = kwargs ? mapper.map(kwargs.type, { file, line, what: `**${kwargs.name} of ${fn.name}()` }) : undefined;
  return { kind: 'object', fields, ...(rest ? { rest } : {}) };
}

/** Result and streamed value of one function: a generator's output is the list of what it yields. */
function resultOf(fn: FunctionInfo, mapper: TypeMapper, file: string): { output: JsonType; chunk: JsonType } {
  const at = { file, line: fn.nameRange.start.line, what: `the result of ${fn.name}()` };
  const r = fn.returns;
  if (fn.isGenerator) {
    const yields = r?.kind === 'generic' && GENERATORS.has(bareName(r.name)) ? mapper.map(r.args[0], at) : r ? mapper.map(r, at) : UNKNOWN;
    return { output: { kind: 'array', items: yields }, chunk: yields };
  }
  const output = mapper.map(r, at);
  return { output, chunk: output };
}

/** The signature of a queue-based endpoint's function or class (a class takes `method` to pick one of several). */
export function queueSignature(ep: EndpointSpec, fn: FunctionInfo, mapper: TypeMapper): Signature {
  if (!fn.isClass) return { input: argumentsOf(fn, mapper, ep.file), ...resultOf(fn, mapper, ep.file), streams: fn.isGenerator };
  const methods = fn.methods ?? [];
  const inputs: JsonType[] = [];
  const outputs: JsonType[] = [];
  const chunks: JsonType[] = [];
  for (const m of methods) {
    const args = argumentsOf(m, mapper, ep.file, new Set(['method']));
    const method: JsonField = {
      name: 'method',
      type: { kind: 'literal', value: m.name },
      optional: methods.length === 1,
      doc: `Calls ${fn.name}.${m.name}().`,
    };
    inputs.push({ ...args, fields: [method, ...args.fields] });
    const r = resultOf(m, mapper, ep.file);
    outputs.push(r.output);
    chunks.push(r.chunk);
  }
  return {
    input: inputs.length ? union(inputs) : { kind: 'object', fields: [] },
    output: outputs.length ? union(outputs) : UNKNOWN,
    chunk: chunks.length ? union(chunks) : UNKNOWN,
    streams: methods.some((m) => m.isGenerator),
  };
}

/** A status code: what `(body, status)` ends with (the runtime takes an int there, not a bool). */
function isStatus(t: JsonType): boolean {
  if (t.kind === 'union') return t.options.every(isStatus);
  return t.kind === 'integer' || (t.kind === 'literal' && typeof t.value === 'number' && Number.isInteger(t.value));
}

/** A route that returns `(body, status)` answers the body with that status (docs/worker-protocol.md): its caller receives the body. */
function routeBody(t: JsonType): JsonType {
  if (t.kind === 'tuple' && t.items.length === 2 && isStatus(t.items[1])) return t.items[0];
  if (t.kind === 'union') return union(t.options.map(routeBody));
  return t;
}

export function routeSignature(ep: EndpointSpec, fn: FunctionInfo, mapper: TypeMapper): Signature {
  const output = routeBody(resultOf(fn, mapper, ep.file).output);
  const checked = callableParams(fn)
    .filter((p) => p.type && !(p.type.kind === 'name' && (bareName(p.type.name) === 'Any' || bareName(p.type.name) === 'object')))
    .map((p) => p.name);
  return { input: argumentsOf(fn, mapper, ep.file, new Set(), true), output, chunk: output, streams: false, ...(checked.length ? { checked } : {}) };
}

/** The input of a function the client cannot type: any object. */
const UNTYPED_INPUT: Extract<JsonType, { kind: 'object' }> = { kind: 'object', fields: [], rest: UNKNOWN };

/** A signature for what the code in this folder does not describe (deployed from other code). */
export const UNTYPED: Signature = { input: UNTYPED_INPUT, output: UNKNOWN, chunk: UNKNOWN, streams: false };
