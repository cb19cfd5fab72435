// A function's JSON signature: the object its arguments travel in (a queue job's `input`, a route's body or
// query), the type of its result, and the type of each value it streams. From the project model's hints.
import type { EndpointSpec, FunctionInfo, ParamInfo } from '../project/model';
import { bareName, GENERATORS, UNKNOWN, union, type JsonField, type JsonType, type TypeMapper } from './types';

export interface Signature {
  /** Always an object type (or a union of them, for a class endpoint with several methods). */
  input: JsonType;
  output: JsonType;
  /** Each streamed value: what a generator yields; a function that does not stream sends its whole output once. */
  chunk: JsonType;
  streams: boolean;
}

/** The arguments a call can name: positional and keyword ones (`*args` cannot travel in a JSON object). */
export function callableParams(fn: FunctionInfo): ParamInfo[] {
  return fn.params.filter((p) => p.kind === 'positional' || p.kind === 'keyword-only');
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

export function argumentsOf(fn: FunctionInfo, mapper: TypeMapper, file: string, skip: ReadonlySet<string> = new Set()): Extract<JsonType, { kind: 'object' }> {
  const docs = parameterDocs(fn.docstring);
  const line = fn.nameRange.start.line;
  const fields: JsonField[] = [];
  for (const p of callableParams(fn)) {
    if (skip.has(p.name)) continue;
    const type = p.type ? mapper.map(p.type, { file, line, what: `parameter ${p.name} of ${fn.name}()` }) : typeOfDefault(p.default);
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

export function routeSignature(ep: EndpointSpec, fn: FunctionInfo, mapper: TypeMapper): Signature {
  return { input: argumentsOf(fn, mapper, ep.file), ...resultOf(fn, mapper, ep.file), streams: false };
}

/** A signature for what the code in this folder does not describe (deployed from other code). */
export const UNTYPED: Signature = { input: { kind: 'object', fields: [], rest: UNKNOWN }, output: UNKNOWN, chunk: UNKNOWN, streams: false };
