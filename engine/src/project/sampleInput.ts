// Sample inputs of an endpoint's function, built from its parameters: defaults where given, a placeholder of the
// annotated type otherwise (lists get two elements of their element type, since an empty list is what a function most
// often refuses). The sample calls printed after a deploy, the extension's input boxes and the local test server's
// form (through the manifest) all start from it.
import type { FunctionInfo, ParamInfo } from './model';
import { namedParams } from './syntax';

export function placeholder(p: ParamInfo): unknown {
  if (p.default !== undefined) {
    try {
      return JSON.parse(
        p.default
          .replace(/^'(.*)'$/, '"$1"')
          .replace(/^True$/, 'true')
          .replace(/^False$/, 'false')
          .replace(/^None$/, 'null'),
      );
    } catch {
      // not a JSON-compatible literal: fall through to the type
    }
  }
  return ofType((p.annotation ?? '').replace(/\s+/g, '').toLowerCase(), p.name);
}

function ofType(t: string, name: string): unknown {
  if (t.startsWith('int')) return 1;
  if (t.startsWith('float')) return 1.5;
  if (t.startsWith('bool')) return true;
  if (/^(typing\.)?(list|tuple|sequence|set|frozenset)\b/.test(t)) {
    const inner = /^[a-z.]+\[([^,\]]+)/.exec(t)?.[1] ?? '';
    if (inner.startsWith('int') || inner === '' || inner === 'any') return [1, 2]; // an untyped list: numbers, most often
    if (inner.startsWith('float')) return [1.5, 2.5];
    return [ofType(inner, 'item'), ofType(inner, 'item')];
  }
  if (t.startsWith('dict') || t.startsWith('mapping')) return {};
  return name === 'prompt' || name === 'text' ? 'Hello' : 'value';
}

export function sampleArgs(fn: FunctionInfo | undefined): Record<string, unknown> {
  const params = fn?.isClass ? (fn.methods?.[0]?.params ?? []) : (fn?.params ?? []);
  const out: Record<string, unknown> = {};
  for (const p of namedParams(params)) out[p.name] = placeholder(p);
  if (fn?.isClass && (fn.methods?.length ?? 0) > 1) return { method: fn.methods![0].name, ...out };
  return out;
}
