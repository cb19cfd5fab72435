// The OpenAPI 3 documents: the dev server's /docs (queue functions at /<module>/runsync, routes under their module)
// and a deployed environment's (`strato client --lang openapi`: every jobs API call and route at its URL). One
// generator: both take their schemas from the same signatures, and TypedDicts and dataclasses become components.
import { limits } from '../catalog';
import type { EnvironmentSummary } from '../deploy/environments';
import { kindLabel, type EndpointKind } from '../protocol/endpointKind';
import type { EndpointSpec, FunctionInfo, HttpMethod, ProjectModel } from '../project/model';
import { pythonStringLiteral } from '../project/strings';
import { queueSignature, routeSignature, type Signature } from './signatures';
import { clientSurface, type Doc } from './surface';
import { Names, TypeMapper, type JsonField, type JsonType, type NamedShape } from './types';

type Schema = Record<string, unknown>;
type Operation = Record<string, unknown>;

/** Component names of the document itself; the project's types take others. */
const OWN_SCHEMAS = ['Error', 'RouteError', 'RouteValidationError', 'JobStatus', 'JobAccepted'];

/** A Python default as a JSON value, when it is a plain literal. */
export function defaultValue(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  const d = text.trim();
  if (d === 'None') return null;
  if (d === 'True' || d === 'False') return d === 'True';
  if (/^-?\d+(\.\d+)?$/.test(d)) return Number(d);
  return pythonStringLiteral(d);
}

/**
 * Only null, in OpenAPI 3.0: `nullable` adds null to the schema's `type` and means nothing without one (3.0.3;
 * validators such as Ajv refuse it there), and the enum keeps every other value of that type out.
 */
const nullSchema = (): Schema => ({ type: 'object', nullable: true, enum: [null] });

/** The JSON schema (OpenAPI 3.0 dialect: `nullable` beside a `type`) of a JSON type. */
export function jsonSchema(t: JsonType): Schema {
  switch (t.kind) {
    case 'string':
    case 'integer':
    case 'number':
    case 'boolean':
      return { type: t.kind };
    case 'null':
      return nullSchema();
    case 'unknown':
      return t.python ? { description: `Python type ${t.python}` } : {};
    case 'array':
      return { type: 'array', items: jsonSchema(t.items) };
    case 'tuple': {
      const items = t.items.map(jsonSchema);
      return { type: 'array', items: items.length === 1 ? items[0] : items.length ? { anyOf: items } : {}, minItems: items.length, maxItems: items.length };
    }
    case 'record':
      return t.values.kind === 'unknown' ? { type: 'object' } : { type: 'object', additionalProperties: jsonSchema(t.values) };
    case 'literal':
      return t.value === null ? nullSchema() : { type: typeof t.value === 'string' ? 'string' : typeof t.value, enum: [t.value] };
    case 'object':
      return objectSchema(t.fields, t.rest);
    case 'ref':
      return { $ref: `#/components/schemas/${t.name}` };
    case 'union':
      return unionSchema(t.options);
  }
}

function unionSchema(options: JsonType[]): Schema {
  const nullable = options.some((o) => o.kind === 'null' || (o.kind === 'literal' && o.value === null));
  const rest = options.filter((o) => o.kind !== 'null' && !(o.kind === 'literal' && o.value === null));
  const literals = rest.every((o) => o.kind === 'literal') ? (rest as Array<Extract<JsonType, { kind: 'literal' }>>) : undefined;
  let schema: Schema;
  if (literals && new Set(literals.map((l) => typeof l.value)).size === 1) {
    schema = { type: typeof literals[0].value === 'string' ? 'string' : typeof literals[0].value, enum: literals.map((l) => l.value) };
    if (nullable) (schema.enum as unknown[]).push(null);
  } else if (rest.length === 1) schema = jsonSchema(rest[0]);
  else schema = { anyOf: rest.map(jsonSchema) };
  if (!nullable) return schema;
  if (schema.type) return { ...schema, nullable: true };
  // No type for `nullable` to widen (a $ref, an anyOf, an unknown): null is one more member of anyOf.
  return { anyOf: [...((schema.anyOf as Schema[] | undefined) ?? [schema]), nullSchema()] };
}

function withDefault(f: JsonField): Schema {
  const s = jsonSchema(f.type);
  const d = defaultValue(f.default);
  return { ...s, ...(d !== undefined ? { default: d } : {}), ...(f.doc ? { description: f.doc } : {}) };
}

function objectSchema(fields: JsonField[], rest?: JsonType): Schema {
  const properties: Record<string, Schema> = {};
  for (const f of fields) properties[f.name] = withDefault(f);
  const required = fields.filter((f) => !f.optional).map((f) => f.name);
  return { type: 'object', properties, ...(required.length ? { required } : {}), ...(rest ? { additionalProperties: jsonSchema(rest) } : {}) };
}

function components(shapes: readonly NamedShape[]): Record<string, Schema> {
  const schemas: Record<string, Schema> = {
    Error: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
    RouteError: { type: 'object', required: ['error', 'detail'], properties: { error: { type: 'string' }, detail: { type: 'string' } } },
    RouteValidationError: {
      type: 'object',
      required: ['error', 'detail', 'errors'],
      properties: {
        error: { type: 'string' },
        detail: { type: 'string' },
        errors: {
          type: 'array',
          description: 'One item per problem, as FastAPI lists them in its detail.',
          items: {
            type: 'object',
            required: ['type', 'loc', 'msg'],
            properties: {
              type: { type: 'string' },
              loc: {
                type: 'array',
                items: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
                description: '"body", the argument, then the place in its value',
              },
              msg: { type: 'string' },
              input: { description: 'The value refused' },
            },
          },
        },
      },
    },
    JobStatus: { type: 'string', enum: ['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'] },
    JobAccepted: { type: 'object', required: ['id', 'status'], properties: { id: { type: 'string' }, status: { $ref: '#/components/schemas/JobStatus' } } },
  };
  for (const s of shapes)
    schemas[s.name] = {
      ...objectSchema(s.fields),
      description: [s.doc, `Python ${s.python.kind} ${s.python.name} (${s.python.file})`].filter(Boolean).join('\n\n'),
    };
  return schemas;
}

const json = (schema: Schema, description: string) => ({ description, content: { 'application/json': { schema } } });
const ERROR = { $ref: '#/components/schemas/Error' };

function jobSchema(output: JsonType): Schema {
  return {
    type: 'object',
    required: ['id', 'status'],
    properties: {
      id: { type: 'string' },
      status: { $ref: '#/components/schemas/JobStatus' },
      output: jsonSchema(output),
      error: { type: 'string', description: 'The error the function raised (FAILED).' },
      delayTime: { type: 'integer', description: 'ms in the queue' },
      executionTime: { type: 'integer', description: 'ms executing' },
    },
  };
}

function describe(doc: Doc, line: string): string {
  return [doc.docstring, `${line}${doc.source ? `, \`${doc.python}\` in \`${doc.source}\`` : ''}.`].filter(Boolean).join('\n\n');
}

const summaryOf = (doc: Doc, fallback: string) => doc.docstring?.split('\n')[0].trim() || fallback;

interface FunctionCall {
  method: HttpMethod | string;
  path: string;
  kind: EndpointKind;
  endpoint: string;
  signature: Signature;
  doc: Doc;
  operationId: string;
  /** Load-balanced: `{name}` segments of the path. */
  pathParams: string[];
  /** The deployed jobs API answers 401 and 429 too. */
  deployed: boolean;
}

/** The operation that calls a function: /runsync with the `input` wrapper, or a route with its body or query. */
function callOperation(c: FunctionCall): Operation {
  const op: Operation = {
    operationId: c.operationId.replace(/[^A-Za-z0-9_.]/g, '_'),
    summary: summaryOf(c.doc, c.doc.python?.replace(/\(\)$/, '') ?? c.endpoint),
    description: describe(c.doc, `Endpoint \`${c.endpoint}\` (${kindLabel(c.kind)})`),
    tags: [c.endpoint],
  };
  const responses: Record<string, unknown> = {};
  if (c.kind === 'QUEUE') {
    op.requestBody = {
      required: true,
      content: { 'application/json': { schema: { type: 'object', required: ['input'], properties: { input: jsonSchema(c.signature.input) } } } },
    };
    responses['200'] = json(jobSchema(c.signature.output), 'The job: COMPLETED with its output, FAILED with its error, or still running when wait passed');
    responses['400'] = json(ERROR, 'The body is not {"input": {...}}');
  } else {
    const input = c.signature.input;
    const fields = input.kind === 'object' ? input.fields : [];
    const parameters: unknown[] = c.pathParams.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: jsonSchema(fields.find((f) => f.name === name)?.type ?? { kind: 'string' }),
    }));
    const others = fields.filter((f) => !c.pathParams.includes(f.name));
    if (c.method === 'GET' || c.method === 'DELETE') {
      for (const f of others) parameters.push({ name: f.name, in: 'query', required: !f.optional, schema: withDefault(f) });
    } else if (others.length || (input.kind === 'object' && input.rest)) {
      op.requestBody = {
        required: others.some((f) => !f.optional),
        content: { 'application/json': { schema: input.kind === 'object' ? objectSchema(others, input.rest) : jsonSchema(input) } },
      };
    }
    if (parameters.length) op.parameters = parameters;
    responses['200'] = json(jsonSchema(c.signature.output), "The function's result");
    responses['400'] = json({ $ref: '#/components/schemas/RouteError' }, 'A body that is not JSON or not an object, or a field the function does not take');
    // A missing argument, a body field its annotation refuses, a path or query value that does not convert
    // (docs/worker-protocol.md).
    if (fields.length || (input.kind === 'object' && input.rest))
      responses['422'] = json(
        { $ref: '#/components/schemas/RouteValidationError' },
        'A missing argument, or a value its annotation refuses (errors: each problem, as FastAPI lists it)',
      );
    responses['500'] = json({ $ref: '#/components/schemas/RouteError' }, 'The function raised an exception (detail holds its text)');
  }
  if (c.deployed) {
    responses['401'] = json(ERROR, 'Missing or invalid API key');
    responses['429'] = json(ERROR, 'The platform sheds load: retry later');
  }
  op.responses = responses;
  return op;
}

/** The functions the dev server serves, as its route table lists them (dev/routes.ts). */
export interface ServedFunction {
  method: HttpMethod;
  path: string;
  kind: EndpointKind;
  endpoint: EndpointSpec;
  function: FunctionInfo;
}

/** The dev server's document: its own paths, no key. */
export function devOpenApiDocument(title: string, model: ProjectModel, routes: readonly ServedFunction[]): Record<string, unknown> {
  const mapper = new TypeMapper(model, new Names(OWN_SCHEMAS));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const fn = r.function;
    (paths[r.path] ??= {})[r.method.toLowerCase()] = callOperation({
      method: r.method,
      path: r.path,
      kind: r.kind,
      endpoint: r.endpoint.name,
      signature: r.kind === 'QUEUE' ? queueSignature(r.endpoint, fn, mapper) : routeSignature(r.endpoint, fn, mapper),
      doc: { docstring: fn.docstring, source: `${r.endpoint.file}:${fn.nameRange.start.line + 1}`, python: `${fn.name}()` },
      operationId: `${r.endpoint.name}.${fn.name}`,
      pathParams: [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
      deployed: false,
    });
  }
  return {
    openapi: '3.0.3',
    info: { title: `${title} (strato dev)`, version: 'dev', description: 'Every call runs on a live- endpoint of the Strato platform.' },
    paths,
    components: { schemas: components(mapper.shapes) },
  };
}

export interface EnvironmentDocument {
  document: Record<string, unknown>;
  warnings: string[];
}

/** A deployed environment's document: the jobs API of each queue-based endpoint and every route, at their URLs. */
export function environmentOpenApiDocument(model: ProjectModel, env: EnvironmentSummary): EnvironmentDocument {
  const s = clientSurface(model, env, OWN_SCHEMAS);
  const origins = new Set(s.endpoints.map((e) => new URL(e.url).origin));
  const shared = origins.size === 1 ? [...origins][0] : undefined;
  const paths: Record<string, Record<string, unknown>> = {};
  const at = (url: string, suffix: string, method: string, op: Operation) => {
    const u = new URL(url);
    const key = `${u.pathname.replace(/\/+$/, '')}${suffix}` || '/';
    const item = (paths[key] ??= shared ? {} : { servers: [{ url: u.origin }] });
    item[method.toLowerCase()] = op;
  };
  const jobParam = [{ name: 'jobId', in: 'path', required: true, schema: { type: 'string' } }];
  const jobCall = (id: string, tag: string, summary: string, response: unknown, extra: Operation = {}): Operation => ({
    operationId: id.replace(/[^A-Za-z0-9_.]/g, '_'),
    summary,
    tags: [tag],
    parameters: jobParam,
    responses: { '200': response, '401': json(ERROR, 'Missing or invalid API key'), '404': json(ERROR, 'Unknown job, or its results expired') },
    ...extra,
  });
  for (const e of s.endpoints) {
    if (e.kind === 'QUEUE') {
      const base = { kind: e.kind, endpoint: e.endpoint, signature: e.signature, doc: e.doc, pathParams: [], deployed: true };
      const runsync = callOperation({ ...base, method: 'POST', path: '/runsync', operationId: e.member });
      runsync.parameters = [{ name: 'wait', in: 'query', required: false, schema: { type: 'integer', minimum: limits.waitMinMs, maximum: limits.waitMaxMs } }];
      at(e.url, '/runsync', 'POST', runsync);
      const run = callOperation({ ...base, method: 'POST', path: '/run', operationId: `${e.member}.run` });
      run.summary = `Queue a job of ${e.endpoint}`;
      (run.responses as Record<string, unknown>)['200'] = json({ $ref: '#/components/schemas/JobAccepted' }, 'The job, IN_QUEUE');
      at(e.url, '/run', 'POST', run);
      at(
        e.url,
        '/status/{jobId}',
        'GET',
        jobCall(`${e.member}.status`, e.endpoint, `A job of ${e.endpoint} as it is now`, json(jobSchema(e.signature.output), 'The job')),
      );
      const chunk = {
        type: 'object',
        properties: {
          output: jsonSchema(e.signature.chunk),
          // A value over 1 MB comes in parts: part i of parts, its text (json: parse the joined text as JSON).
          metrics: {
            type: 'object',
            properties: { stream_index: { type: 'integer' }, part: { type: 'integer' }, parts: { type: 'integer' }, json: { type: 'boolean' } },
          },
        },
      };
      at(
        e.url,
        '/stream/{jobId}',
        'GET',
        jobCall(
          `${e.member}.stream`,
          e.endpoint,
          `What a job of ${e.endpoint} streamed since the last call`,
          json({ type: 'array', items: chunk }, 'New chunks; [] once the job ended'),
        ),
      );
      at(
        e.url,
        '/cancel/{jobId}',
        'POST',
        jobCall(`${e.member}.cancel`, e.endpoint, `Cancel a job of ${e.endpoint}`, json({ $ref: '#/components/schemas/JobAccepted' }, 'The job, CANCELLED')),
      );
    } else {
      for (const r of e.routes) {
        const op = callOperation({
          method: r.method,
          path: r.path,
          kind: e.kind,
          endpoint: e.endpoint,
          signature: r.signature,
          doc: r.doc,
          operationId: `${e.member}.${r.member}`,
          pathParams: r.pathParams,
          deployed: true,
        });
        at(e.url, r.path === '/' ? '' : r.path, r.method, op);
      }
    }
  }
  return {
    document: {
      openapi: '3.0.3',
      info: {
        title: `${s.app} (${s.environment})`,
        version: env.buildId ?? 'not deployed',
        description: `The endpoints of the Strato environment ${s.app}/${s.environment}, typed from the code's type hints.`,
      },
      ...(shared ? { servers: [{ url: shared }] } : {}),
      security: [{ apiKey: [] }],
      paths,
      components: { schemas: components(s.shapes), securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'STRATO_API_KEY' } } },
    },
    warnings: s.warnings,
  };
}
