// Static evaluation of decorator argument expressions: literals, catalog enum members and module-level
// constants bound to literals. Anything else is "dynamic" and reported where the build needs the value.
import type { SyntaxNode } from './parser';
import type { ConfigSource } from './model';
import { isExtra } from './syntax';
import { stringNodeValue } from './strings';
import { catalogConstants, enumClasses, gpuTypeAliases, valueClasses } from '../catalog';

export interface EvalScope {
  /** Module-level `NAME = <expr>` bindings (the last one wins, as at import time); a Map, or nodes read as they are used. */
  /** A module-level constant's value as Python has it at `row` (its last assignment above), when it is bound there. */
  constants: { get(name: string, row: number): SyntaxNode | undefined };
  /** Local alias -> enum class name (`from strato import GpuGroup as G` -> G: GpuGroup). */
  enumAliases: Map<string, string>;
  /** Local names bound to the `strato` module (`import strato`, `import strato as s`). */
  moduleAliases: Set<string>;
  /** Local alias -> value class or catalog constant imported from strato (`NetworkVolume`, `CPU_DATACENTERS`). */
  classAliases?: Map<string, string>;
}

/** `float`: a Python float is in the value (`3.0`, `1e3` are whole, yet no int: the runtime refuses them where an int is due). */
export type EvalResult =
  | { ok: true; value: unknown; source: ConfigSource; float?: boolean }
  | { ok: false; node: SyntaxNode; reason: 'dynamic' | 'unknown-enum'; enumClass?: string; member?: string };

const dynamic = (node: SyntaxNode): EvalResult => ({ ok: false, node, reason: 'dynamic' });

/** Deeper nesting (of brackets, operators or constants naming constants) is not evaluated: it would overflow the stack. */
const MAX_DEPTH = 100;
let depth = 0;

export function evaluate(node: SyntaxNode, scope: EvalScope, seen: Set<string> = new Set()): EvalResult {
  if (depth >= MAX_DEPTH) return dynamic(node);
  depth++;
  try {
    return evaluateNode(node, scope, seen);
  } finally {
    depth--;
  }
}

function evaluateNode(node: SyntaxNode, scope: EvalScope, seen: Set<string>): EvalResult {
  switch (node.type) {
    case 'string':
      return evalString(node);
    case 'concatenated_string': {
      let out = '';
      for (const part of node.namedChildren) {
        if (isExtra(part)) continue; // "a" \ (newline) "b", or a comment between the parts
        const r = part ? evalString(part) : undefined;
        if (!r || !r.ok) return dynamic(node);
        out += r.value as string;
      }
      return { ok: true, value: out, source: 'literal' };
    }
    case 'integer': {
      const text = node.text.replace(/_/g, '').toLowerCase();
      const v = text.startsWith('0x') || text.startsWith('0o') || text.startsWith('0b') ? Number(text) : Number.parseInt(text, 10);
      return Number.isFinite(v) ? { ok: true, value: v, source: 'literal' } : dynamic(node);
    }
    case 'float': {
      const v = Number(node.text.replace(/_/g, ''));
      return Number.isFinite(v) ? { ok: true, value: v, source: 'literal', float: true } : dynamic(node);
    }
    case 'true':
      return { ok: true, value: true, source: 'literal' };
    case 'false':
      return { ok: true, value: false, source: 'literal' };
    case 'none':
      return { ok: true, value: null, source: 'literal' };
    case 'parenthesized_expression': {
      const inner = node.namedChildren.find((c) => c && !isExtra(c));
      return inner ? evaluate(inner, scope, seen) : dynamic(node);
    }
    case 'unary_operator': {
      const arg = node.childForFieldName('argument');
      const op = node.childForFieldName('operator')?.text ?? node.child(0)?.text;
      if (!arg) return dynamic(node);
      const r = evaluate(arg, scope, seen);
      if (!r.ok || typeof r.value !== 'number') return r.ok ? dynamic(node) : r;
      return { ok: true, value: op === '-' ? -r.value : r.value, source: r.source, ...(r.float ? { float: true } : {}) };
    }
    case 'binary_operator':
      return evalArithmetic(node, scope, seen);
    case 'list':
    case 'tuple':
    case 'set':
      return evalSequence(node, scope, seen);
    case 'dictionary':
      return evalDict(node, scope, seen);
    case 'attribute':
      return evalEnumMember(node, scope);
    case 'call':
      return evalClassCall(node, scope, seen);
    case 'identifier': {
      const imported = scope.classAliases?.get(node.text);
      if (imported && imported in catalogConstants) return { ok: true, value: catalogConstants[imported], source: 'enum' };
      const bound = scope.constants.get(node.text, node.startPosition.row);
      if (!bound || seen.has(node.text)) return dynamic(node);
      seen.add(node.text);
      const r = evaluate(bound, scope, seen);
      seen.delete(node.text);
      return r.ok ? { ok: true, value: r.value, source: 'constant', ...(r.float ? { float: true } : {}) } : dynamic(node);
    }
    default:
      return dynamic(node);
  }
}

function evalString(node: SyntaxNode): EvalResult {
  const value = node.type === 'string' ? stringNodeValue(node) : undefined;
  return value === undefined ? dynamic(node) : { ok: true, value, source: 'literal' };
}

function evalArithmetic(node: SyntaxNode, scope: EvalScope, seen: Set<string>): EvalResult {
  const left = node.childForFieldName('left');
  const right = node.childForFieldName('right');
  const op = node.childForFieldName('operator')?.text;
  if (!left || !right || !op) return dynamic(node);
  const a = evaluate(left, scope, seen);
  const b = evaluate(right, scope, seen);
  if (!a.ok || !b.ok) return dynamic(node);
  const source: ConfigSource = a.source === 'literal' && b.source === 'literal' ? 'literal' : 'constant';
  if (typeof a.value === 'string' && typeof b.value === 'string' && op === '+') return { ok: true, value: a.value + b.value, source };
  if (typeof a.value !== 'number' || typeof b.value !== 'number') return dynamic(node);
  const x = a.value;
  const y = b.value;
  const result = op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : op === '//' && y !== 0 ? Math.floor(x / y) : op === '**' ? x ** y : undefined;
  return result === undefined || !Number.isFinite(result) ? dynamic(node) : { ok: true, value: result, source, ...(a.float || b.float ? { float: true } : {}) };
}

function evalSequence(node: SyntaxNode, scope: EvalScope, seen: Set<string>): EvalResult {
  const out: unknown[] = [];
  let source: ConfigSource = 'literal';
  let float = false;
  for (const child of node.namedChildren) {
    if (!child || isExtra(child)) continue;
    const r = evaluate(child, scope, seen);
    if (!r.ok) return r.reason === 'unknown-enum' ? r : dynamic(node);
    if (r.source !== 'literal') source = r.source;
    float ||= !!r.float;
    out.push(r.value);
  }
  return { ok: true, value: out, source, ...(float ? { float: true } : {}) };
}

function evalDict(node: SyntaxNode, scope: EvalScope, seen: Set<string>): EvalResult {
  const out: Record<string, unknown> = {};
  let source: ConfigSource = 'literal';
  for (const pair of node.namedChildren) {
    if (!pair || isExtra(pair)) continue;
    if (pair.type !== 'pair') return dynamic(node);
    const k = pair.childForFieldName('key');
    const v = pair.childForFieldName('value');
    if (!k || !v) return dynamic(node);
    const kr = evaluate(k, scope, seen);
    const vr = evaluate(v, scope, seen);
    if (!kr.ok || !vr.ok) return dynamic(node);
    // Non-string keys are kept as their JSON text so that the env rule can name them.
    out[typeof kr.value === 'string' ? kr.value : `\u0000${JSON.stringify(kr.value)}`] = vr.value;
    if (kr.source !== 'literal' || vr.source !== 'literal') source = 'constant';
  }
  return { ok: true, value: out, source };
}

/** `GpuGroup.ADA_24`, `strato.GpuGroup.ADA_24`, `G.ADA_24` (alias), and `.value` of those. */
function evalEnumMember(node: SyntaxNode, scope: EvalScope): EvalResult {
  const parts = node.text.replace(/\s+/g, '').split('.');
  if (parts[parts.length - 1] === 'value') parts.pop();
  let cls: string | undefined;
  if (parts.length === 2) cls = scope.enumAliases.get(parts[0]);
  else if (parts.length === 3 && scope.moduleAliases.has(parts[0]) && parts[1] in enumClasses) cls = parts[1];
  if (!cls) return dynamic(node);
  const member = parts[parts.length - 1];
  const value = enumClasses[cls][member] ?? (cls === 'GpuType' && member in gpuTypeAliases ? enumClasses.GpuType[gpuTypeAliases[member]] : undefined);
  if (value === undefined) return { ok: false, node, reason: 'unknown-enum', enumClass: cls, member };
  return { ok: true, value, source: 'enum' };
}

/** The strato class a callee names (`NetworkVolume`, `V` after an alias, `strato.NetworkVolume`), if any. */
function classOf(fn: SyntaxNode | null, scope: EvalScope): string | undefined {
  if (!fn) return undefined;
  if (fn.type === 'identifier') return scope.classAliases?.get(fn.text);
  const parts = fn.type === 'attribute' ? fn.text.replace(/\s+/g, '').split('.') : [];
  return parts.length === 2 && scope.moduleAliases.has(parts[0]) && (valueClasses as readonly string[]).includes(parts[1]) ? parts[1] : undefined;
}

/** `NetworkVolume(name="models", size=50)` -> `{ $class: "NetworkVolume", name: "models", size: 50 }`; the first positional argument is `name`. */
function evalClassCall(node: SyntaxNode, scope: EvalScope, seen: Set<string>): EvalResult {
  const cls = classOf(node.childForFieldName('function'), scope);
  const args = node.childForFieldName('arguments');
  if (!cls || !(valueClasses as readonly string[]).includes(cls) || !args) return dynamic(node);
  const out: Record<string, unknown> = { $class: cls };
  let source: ConfigSource = 'literal';
  let positional = 0;
  for (const arg of args.namedChildren) {
    if (!arg || isExtra(arg)) continue;
    let key: string;
    let value: SyntaxNode | null;
    if (arg.type === 'keyword_argument') {
      key = arg.childForFieldName('name')?.text ?? '';
      value = arg.childForFieldName('value');
    } else if (positional++ === 0 && arg.type !== 'list_splat' && arg.type !== 'dictionary_splat') {
      key = 'name';
      value = arg;
    } else return dynamic(node);
    if (!value) return dynamic(node);
    const r = evaluate(value, scope, seen);
    if (!r.ok) return r.reason === 'unknown-enum' ? r : dynamic(node);
    if (r.source !== 'literal') source = 'constant';
    out[key] = r.value;
  }
  return { ok: true, value: out, source };
}
