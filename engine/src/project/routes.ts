// Routes of load-balanced endpoints: `@api.post("/path")` decorators on functions, and the rules over an endpoint's
// routes (at least one, no duplicates).
import type { EndpointSpec, HttpMethod, RouteInfo } from './model';
import type { SyntaxNode } from './parser';
import type { DiagnosticSink } from './rules';
import { children, functionInfo, isExtra, rangeOf } from './syntax';
import { evaluate } from './values';
import { didYouMean, HTTP_METHODS } from '../catalog';
import { parameterMessage } from '../catalog/parameterRules';

/** A route decorator on an endpoint variable: the route, when it is a valid one. */
export interface RouteTarget {
  variable: string;
  route?: RouteInfo;
}

/** Reads `@api.<method>("/path")` when `api` is one of the file's load-balanced endpoint variables. */
export function readRoute(
  call: SyntaxNode,
  dec: SyntaxNode,
  def: SyntaxNode,
  stmt: SyntaxNode,
  lbVars: ReadonlyMap<string, unknown>,
  sink: DiagnosticSink,
): RouteTarget | undefined {
  const fn = call.childForFieldName('function');
  if (fn?.type !== 'attribute') return undefined;
  const obj = fn.childForFieldName('object');
  const attr = fn.childForFieldName('attribute');
  if (obj?.type !== 'identifier' || !attr) return undefined;
  if (!lbVars.has(obj.text)) return undefined;
  const variable = obj.text;
  const method = attr.text.toUpperCase();
  const args = call.childForFieldName('arguments');
  const pathNode = args
    ? (children(args).find((c) => !isExtra(c) && c.type !== 'keyword_argument') ??
      children(args)
        .find((c) => c.type === 'keyword_argument' && c.childForFieldName('name')?.text === 'path')
        ?.childForFieldName('value') ??
      null)
    : null;
  if (!(HTTP_METHODS as readonly string[]).includes(method) || attr.text !== attr.text.toLowerCase()) {
    const guess = didYouMean(
      attr.text.toLowerCase(),
      HTTP_METHODS.map((m) => m.toLowerCase()),
    );
    sink.add(
      'unknown-method',
      `${obj.text}.${attr.text} is not a route method: use ` +
        `${HTTP_METHODS.map((m) => `.${m.toLowerCase()}`).join(', ')}${guess ? ` (did you mean .${guess}?)` : ''}.`,
      rangeOf(attr),
      {
        fix: guess ? { kind: 'replace-value', range: rangeOf(attr), replacement: guess } : undefined,
      },
    );
    return { variable };
  }
  const route: RouteInfo = {
    method: method as HttpMethod,
    path: '',
    pathRange: pathNode ? rangeOf(pathNode) : rangeOf(call),
    range: rangeOf(dec),
    function: functionInfo(def, stmt),
  };
  const r = pathNode?.type === 'string' ? evaluate(pathNode, { constants: new Map(), enumAliases: new Map(), moduleAliases: new Set() }) : undefined;
  if (!r || !r.ok || typeof r.value !== 'string') {
    sink.add('not-literal', `the route path must be a string literal such as "/process".`, route.pathRange);
    return { variable };
  }
  route.path = r.value;
  if (!route.path.startsWith('/')) {
    sink.add('route-path-slash', `path must start with '/', got: ${route.path}; write "/${route.path}".`, route.pathRange, {
      fix: { kind: 'add-slash', range: route.pathRange, replacement: JSON.stringify('/' + route.path) },
    });
  } else if (route.path === '/ping' || route.path === '/ping/') {
    sink.add('route-path-reserved', `path '/ping' is reserved for the platform's health check: choose another path, e.g. "/health".`, route.pathRange);
  }
  const bad = pathParamProblem(route.path);
  if (bad) sink.add('route-path-param', bad, route.pathRange);
  return { variable, route };
}

/**
 * Why a route's path parameter cannot be one, else null: each `{...}` names a parameter of the function, a Python
 * identifier matching one path segment. FastAPI's convertors (`{path:path}`, `{id:int}`) are not taken: the workers
 * refuse the route at import (engine/python/strato/endpoint.py, the same message).
 */
export function pathParamProblem(path: string): string | null {
  for (const [, param] of path.matchAll(/\{([^{}]*)\}/g)) {
    if (/^[\p{L}_][\p{L}\p{N}_]*$/u.test(param)) continue; // str.isidentifier(), near enough
    const convertor = /^([A-Za-z_]\w*):(\w+)$/.exec(param);
    return parameterMessage('route-path-param', {
      param: `{${param}}`,
      path,
      convertor: convertor ? `; a convertor (:${convertor[2]}) is not taken: write {${convertor[1]}}, which matches one path segment` : '',
    });
  }
  return null;
}

export function checkRoutes(ep: EndpointSpec, attempted: boolean, sink: DiagnosticSink): void {
  if (ep.routes.length === 0 && !attempted) {
    sink.add(
      'lb-no-routes',
      `load-balanced endpoint "${ep.name}" has no routes: add one with @${ep.variable}.post("/path") (or .get, .put, .patch, .delete) on a function.`,
      ep.callRange,
    );
    return;
  }
  const seen = new Map<string, RouteInfo>();
  for (const r of ep.routes) {
    if (!r.path) continue;
    const key = `${r.method} ${r.path}`;
    const first = seen.get(key);
    if (first) {
      sink.add('duplicate-route', `duplicate route: ${key} (already registered to '${first.function.name}'); change the path or the method.`, r.pathRange, {
        related: [{ file: sink.file, range: first.pathRange, message: `${key} is first declared here` }],
      });
    } else seen.set(key, r);
  }
}
