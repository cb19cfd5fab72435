// The OpenAPI 3 document behind /docs, generated from the functions' signatures and type hints: queue
// functions take {input: {...}}, load-balanced routes take their parameters as the body (or query for
// GET/DELETE) and path. Each operation's summary is the docstring's first line.
import { kindLabel } from '../protocol/endpointKind';
import type { FunctionInfo, ParamInfo } from '../project';
import type { DevRoute } from './routes';

type Schema = Record<string, unknown>;

export function schemaOf(annotation: string | undefined): Schema {
  if (!annotation) return {};
  const t = annotation.replace(/\s+/g, '');
  const optional = /^Optional\[(.+)\]$/.exec(t) ?? /^(.+)\|None$/.exec(t) ?? /^None\|(.+)$/.exec(t);
  if (optional) return { ...schemaOf(optional[1]), nullable: true };
  const generic = /^([A-Za-z_.]+)\[(.+)\]$/.exec(t);
  const base = (generic ? generic[1] : t).replace(/^typing\./, '').toLowerCase();
  switch (base) {
    case 'str':
      return { type: 'string' };
    case 'int':
      return { type: 'integer' };
    case 'float':
      return { type: 'number' };
    case 'bool':
      return { type: 'boolean' };
    case 'list':
    case 'sequence':
    case 'tuple':
    case 'set':
      return { type: 'array', items: generic ? schemaOf(generic[2].split(',')[0]) : {} };
    case 'dict':
    case 'mapping':
      return { type: 'object' };
    case 'bytes':
      return { type: 'string', format: 'byte' };
    default:
      return {};
  }
}

function defaultOf(p: ParamInfo): unknown {
  if (p.default === undefined) return undefined;
  const d = p.default.trim();
  if (d === 'None') return null;
  if (d === 'True' || d === 'False') return d === 'True';
  if (/^-?\d+(\.\d+)?$/.test(d)) return Number(d);
  const s = /^(['"])(.*)\1$/.exec(d);
  return s ? s[2] : undefined;
}

function paramsOf(fn: FunctionInfo): ParamInfo[] {
  const params = fn.isClass ? (fn.methods?.[0]?.params ?? []) : fn.params;
  return params.filter((p) => p.kind === 'positional' || p.kind === 'keyword-only');
}

function objectSchema(params: ParamInfo[]): Schema {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const p of params) {
    const s = schemaOf(p.annotation);
    const d = defaultOf(p);
    properties[p.name] = d === undefined ? s : { ...s, default: d };
    if (p.default === undefined) required.push(p.name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

export function openApiDocument(title: string, routes: readonly DevRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const fn = r.function;
    const params = paramsOf(fn);
    const pathParams = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    const op: Record<string, unknown> = {
      operationId: `${r.endpoint.name}.${fn.name}`.replace(/[^A-Za-z0-9_.]/g, '_'),
      summary: fn.summary ?? fn.name,
      description: [fn.docstring, `Endpoint \`${r.endpoint.name}\` (${kindLabel(r.kind)}), function \`${fn.name}\` in \`${r.endpoint.file}\`.`]
        .filter(Boolean)
        .join('\n\n'),
      tags: [r.endpoint.name],
      responses: {
        '200': {
          description: r.kind === 'QUEUE' ? 'The job: id, status, output, delayTime, executionTime' : "The function's response",
          content: { 'application/json': { schema: {} } },
        },
        '400': { description: 'Invalid input, or the code has an error (reported with file:line)' },
      },
    };
    const parameters: unknown[] = pathParams.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: schemaOf(params.find((p) => p.name === name)?.annotation),
    }));
    const bodyParams = params.filter((p) => !pathParams.includes(p.name));
    if (r.kind === 'QUEUE') {
      op.requestBody = {
        required: true,
        content: { 'application/json': { schema: { type: 'object', required: ['input'], properties: { input: objectSchema(bodyParams) } } } },
      };
    } else if (r.method === 'GET' || r.method === 'DELETE') {
      for (const p of bodyParams) parameters.push({ name: p.name, in: 'query', required: p.default === undefined, schema: schemaOf(p.annotation) });
    } else if (bodyParams.length) {
      op.requestBody = { required: bodyParams.some((p) => p.default === undefined), content: { 'application/json': { schema: objectSchema(bodyParams) } } };
    }
    if (parameters.length) op.parameters = parameters;
    (paths[r.path] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.0.3',
    info: { title: `${title} (strato dev)`, version: 'dev', description: 'Every call runs on a live- endpoint of the Strato platform.' },
    paths,
  };
}
