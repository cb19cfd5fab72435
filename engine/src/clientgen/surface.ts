// What a client of one deployed environment offers: its endpoints as the control plane lists them (URLs, routes,
// time-outs), each typed from the code in this folder. Both the TypeScript client and the OpenAPI document use it.
import type { EnvironmentSummary, EndpointSummary } from '../deploy/environments';
import { limits } from '../catalog';
import type { EndpointSpec, FunctionInfo, ProjectModel } from '../project/model';
import { queueSignature, routeSignature, UNTYPED, type Signature } from './signatures';
import { Names, TypeMapper, type NamedShape } from './types';

export interface Doc {
  docstring?: string;
  /** `gpu_worker.py:12`, where the function is declared. */
  source?: string;
  python?: string;
}

export interface QueueEntry {
  kind: 'QUEUE';
  endpoint: string;
  id: string;
  /** `{base}/v2/<id>`: /run, /runsync, /status/<job> and the rest are under it. */
  url: string;
  /** The client's /runsync time-out: the endpoint's execution_timeout_ms, else the default. */
  timeoutMs: number;
  /** The client's member: the function's name in camelCase, else (a name other endpoints claim too) the endpoint's. */
  member: string;
  signature: Signature;
  doc: Doc;
}

export interface RouteEntry {
  method: string;
  path: string;
  /** `{name}` segments of the path, filled from the arguments of the same name. */
  pathParams: string[];
  member: string;
  signature: Signature;
  doc: Doc;
}

export interface LoadBalancedEntry {
  kind: 'LOAD_BALANCED';
  endpoint: string;
  id: string;
  url: string;
  /** The client's time-out of each route call. */
  timeoutMs: number;
  member: string;
  routes: RouteEntry[];
}

export type Entry = QueueEntry | LoadBalancedEntry;

export interface ClientSurface {
  app: string;
  environment: string;
  endpoints: Entry[];
  shapes: NamedShape[];
  /** Names already used in the generated module (shapes included); the emitters take theirs from it. */
  names: Names;
  /** One line each, `file:line: ...` where there is a source: types left unknown, code and environment out of step. */
  warnings: string[];
}

/** `gpu_hello` / `lb-api` -> `gpuHello` / `lbApi`: a member name. */
export function camelCase(name: string): string {
  const words = name.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const out = words.map((w, i) => (i === 0 ? w[0].toLowerCase() + w.slice(1) : w[0].toUpperCase() + w.slice(1))).join('');
  return /^[A-Za-z_$]/.test(out) ? out : `_${out}`;
}

/** `gpu_hello` -> `GpuHello`: a type name; `2fast` -> `_2fast` (an identifier cannot start with a digit). */
export function pascalCase(name: string): string {
  const c = camelCase(name);
  const bare = c.replace(/^_/, '');
  if (!bare) return 'Endpoint';
  return /^[A-Za-z]/.test(bare) ? bare[0].toUpperCase() + bare.slice(1) : c;
}

export function docOf(ep: EndpointSpec, fn: FunctionInfo): Doc {
  return { docstring: fn.docstring, source: `${ep.file}:${fn.nameRange.start.line + 1}`, python: `${fn.name}()` };
}

/** Binds the environment's endpoints to the code's declarations. */
export function clientSurface(model: ProjectModel, env: EnvironmentSummary, reserved: Iterable<string>): ClientSurface {
  const names = new Names(reserved);
  const mapper = new TypeMapper(model, names);
  const warnings: string[] = [];
  const specs = new Map(model.endpoints.map((e) => [e.name, e]));
  const members = new Names();
  const endpoints: Entry[] = [];
  const where = `${env.app}/${env.environment}`;

  const bound = [...env.endpoints]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((d) => {
      let spec = specs.get(d.name);
      if (!spec) warnings.push(`endpoint ${d.name} is deployed in ${where} but not declared in this folder's code: its calls are untyped (unknown).`);
      else if (spec.kind !== d.type) {
        warnings.push(`${spec.file}: endpoint ${d.name} is ${spec.kind} in the code but ${d.type} in ${where}: deploy again; its calls are untyped.`);
        spec = undefined;
      }
      return { d, spec };
    });
  const byFunction = functionMembers(bound);
  const byName = nameMembers(
    bound.map(({ d }) => d.name),
    warnings,
  );
  for (const { d, spec } of bound) {
    if (d.type === 'QUEUE') endpoints.push(queueEntry(d, spec, mapper, members, byFunction.get(d.name), byName.get(d.name)!));
    else endpoints.push(loadBalancedEntry(d, spec, mapper, members, byName.get(d.name)!, warnings, where));
  }
  const deployed = new Set(env.endpoints.map((e) => e.name));
  for (const spec of model.endpoints) {
    if (!deployed.has(spec.name))
      warnings.push(
        `${spec.file}:${spec.nameRange.start.line + 1}: endpoint ${spec.name} is not deployed in ${where}, so the client leaves it out: run ` +
          `strato deploy --env ${env.environment} and generate again.`,
      );
  }
  warnings.push(...mapper.warnings.map((w) => `${w.file}:${w.line + 1}: ${w.message}`));
  return { app: env.app, environment: env.environment, endpoints, shapes: mapper.shapes, names, warnings };
}

/** The function of a queue-based endpoint as the code declares it. */
const queueFunctionOf = (d: EndpointSummary, spec: EndpointSpec | undefined) => (d.type === 'QUEUE' ? spec?.functions[0] : undefined);

/**
 * The queue-based endpoints whose member is their function's name (`strato.handler`): only where no other endpoint
 * of the environment claims that name, as its function's or as its own. Otherwise which one got it would depend on
 * how the names sort, and deploying `alpha` beside `zeta` (both `def handler`) would move `strato.handler` to alpha
 * without a word: both take their endpoint's name instead, and the code that used `handler` stops compiling.
 */
function functionMembers(bound: ReadonlyArray<{ d: EndpointSummary; spec: EndpointSpec | undefined }>): Map<string, string> {
  const claims = new Map<string, Set<string>>();
  const claim = (member: string, endpoint: string) => claims.set(member, (claims.get(member) ?? new Set()).add(endpoint));
  for (const { d, spec } of bound) {
    claim(camelCase(d.name), d.name);
    const fn = queueFunctionOf(d, spec);
    if (fn) claim(camelCase(fn.name), d.name);
  }
  const out = new Map<string, string>();
  for (const { d, spec } of bound) {
    const fn = queueFunctionOf(d, spec);
    if (fn && claims.get(camelCase(fn.name))!.size === 1) out.set(d.name, camelCase(fn.name));
  }
  return out;
}

/**
 * The member each endpoint's name makes: its name in camelCase (`lb-api` -> `lbApi`), unless another endpoint's name
 * makes the same (`lb-api`, `lb_api`, `LbApi`, `lbApi`): then none takes it, by the rule of functionMembers, and each
 * spells out what camelCase drops: its separators and the capitals its words start with (`lbDashApi`,
 * `lbUnderscoreApi`, `upperLbApi`); the one that has neither (`lbApi` itself) becomes `lbApiEndpoint`. So code that
 * used `lbApi` stops compiling rather than calls another endpoint, whatever the names and however they sort.
 */
const SEPARATOR_WORDS: Record<string, string> = { '-': ' dash ', '.': ' dot ', _: ' underscore ' };

function spelledOut(name: string, member: string): string {
  const spelled = camelCase(name.replace(/(^|[-._])([A-Z])/g, '$1 upper $2').replace(/[-._]/g, (c) => SEPARATOR_WORDS[c]));
  return spelled === member ? `${member}Endpoint` : spelled;
}

function nameMembers(endpoints: readonly string[], warnings: string[]): Map<string, string> {
  const claims = new Map<string, string[]>();
  for (const e of endpoints) claims.set(camelCase(e), [...(claims.get(camelCase(e)) ?? []), e]);
  const out = new Map<string, string>();
  for (const [member, names] of claims) {
    if (names.length === 1) {
      out.set(names[0], member);
      continue;
    }
    names.sort(); // by code point: the warning reads the same whatever the locale
    const spelled = names.map((e) => spelledOut(e, member));
    names.forEach((e, i) => out.set(e, spelled[i]));
    warnings.push(
      `endpoints ${names.join(' and ')} have one name in camelCase (${member}): the client names them ${spelled.join(' and ')}; ` +
        'rename one of them for a member of its own.',
    );
  }
  return out;
}

function queueEntry(
  d: EndpointSummary,
  spec: EndpointSpec | undefined,
  mapper: TypeMapper,
  members: Names,
  byFunction: string | undefined,
  byName: string,
): QueueEntry {
  const fn = queueFunctionOf(d, spec);
  return {
    kind: 'QUEUE',
    endpoint: d.name,
    id: d.id,
    url: d.url,
    timeoutMs: d.executionTimeoutMs ?? limits.defaultClientTimeoutMs,
    member: members.take(...(byFunction ? [byFunction] : []), byName),
    signature: spec && fn ? queueSignature(spec, fn, mapper) : UNTYPED,
    doc: spec && fn ? docOf(spec, fn) : {},
  };
}

function loadBalancedEntry(
  d: EndpointSummary,
  spec: EndpointSpec | undefined,
  mapper: TypeMapper,
  members: Names,
  byName: string,
  warnings: string[],
  where: string,
): LoadBalancedEntry {
  const routeMembers = new Names();
  const routes: RouteEntry[] = [];
  for (const r of d.routes) {
    const local = spec?.routes.find((x) => x.method === r.method && x.path === r.path);
    if (spec && !local) warnings.push(`${spec.file}: route ${r.method} ${r.path} of ${d.name} is deployed in ${where} but not in the code: it is untyped.`);
    const fnName = local?.function.name ?? r.function;
    const pathParams = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    let signature = spec && local ? routeSignature(spec, local.function, mapper) : UNTYPED;
    // A path parameter the function does not take (`/kw/{class}`) is still part of the URL: the call must give it.
    const { input } = signature;
    const untaken = input.kind === 'object' ? pathParams.filter((p) => !input.fields.some((f) => f.name === p)) : [];
    if (input.kind === 'object' && untaken.length) {
      const extra = untaken.map((p) => ({ name: p, type: { kind: 'string' as const }, optional: false, doc: `The {${p}} of the path.` }));
      signature = { ...signature, input: { ...input, fields: [...input.fields, ...extra] } };
    }
    routes.push({
      method: r.method,
      path: r.path,
      pathParams,
      member: routeMembers.take(camelCase(fnName), camelCase(`${fnName}_${r.method.toLowerCase()}`)),
      signature,
      doc: spec && local ? docOf(spec, local.function) : {},
    });
  }
  for (const local of spec?.routes ?? []) {
    if (!d.routes.some((r) => r.method === local.method && r.path === local.path))
      warnings.push(
        `${spec!.file}:${local.range.start.line + 1}: route ${local.method} ${local.path} of ${d.name} is not deployed in ${where}, so the client ` +
          'leaves it out: deploy again and generate again.',
      );
  }
  return {
    kind: 'LOAD_BALANCED',
    endpoint: d.name,
    id: d.id,
    url: d.url,
    timeoutMs: d.executionTimeoutMs ?? limits.defaultClientTimeoutMs,
    member: members.take(byName, `${byName}Api`),
    routes,
  };
}
