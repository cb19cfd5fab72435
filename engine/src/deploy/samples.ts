// Sample calls printed after a deploy: a curl command per endpoint with the Bearer header and a body built from the
// function's parameters (project/sampleInput.ts).
import type { Endpoint } from '../api/controlPlane';
import type { EndpointSpec } from '../project';
import { placeholder, sampleArgs } from '../project/sampleInput';

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
  // A path parameter travels in the path only: the body holds the other arguments.
  const inPath = new Set([...route.path.matchAll(/\{([^}:]+)[^}]*\}/g)].map((m) => m[1]));
  const body = Object.fromEntries(Object.entries(sampleArgs(route.function)).filter(([k]) => !inPath.has(k)));
  return `curl -X ${route.method} ${url} ${auth} -H 'Content-Type: application/json' -d ${quote(JSON.stringify(body))}`;
}
