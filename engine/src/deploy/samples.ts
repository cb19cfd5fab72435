// Sample calls printed after a deploy: a curl command per endpoint with the Bearer header and a body built
// from the function's parameters (defaults where given, a placeholder of the annotated type otherwise; lists get
// two elements of their element type, since an empty list is what a function most often refuses).
import type { Endpoint } from '../api/controlPlane';
import type { EndpointSpec, FunctionInfo, ParamInfo } from '../project';
import { namedParams } from '../project/syntax';

function placeholder(p: ParamInfo): unknown {
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

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function sampleCall(ep: Endpoint, spec: EndpointSpec | undefined): string {
  const auth = `-H "Authorization: Bearer $STRATO_API_KEY"`;
  if (ep.type === 'QUEUE') {
    const body = JSON.stringify({ input: sampleArgs(spec?.functions[0]) });
    return `curl -X POST ${ep.url}/runsync ${auth} -H 'Content-Type: application/json' -d ${quote(body)}`;
  }
  const route = spec?.routes.find((r) => r.method === 'POST') ?? spec?.routes[0];
  if (!route) return `curl ${ep.url}/ping ${auth}`;
  // A path parameter is a value of its annotated type (/items/1 for item_id: int), else example-<name>.
  const pathParam = (name: string) => {
    const p = route.function.params.find((x) => x.name === name);
    const value = p?.annotation ? placeholder({ ...p, default: undefined }) : undefined;
    return typeof value === 'number' || (typeof value === 'string' && value !== 'value') ? String(value) : `example-${name}`;
  };
  const url = `${ep.url}${route.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathParam(name)))}`;
  if (route.method === 'GET' || route.method === 'DELETE') return `curl -X ${route.method} ${url} ${auth}`;
  return `curl -X ${route.method} ${url} ${auth} -H 'Content-Type: application/json' -d ${quote(JSON.stringify(sampleArgs(route.function)))}`;
}
