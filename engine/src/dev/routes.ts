// The development server's route table, derived from the project model: a queue function is served at
// POST /<module path>/runsync (or /<module path>/<function>/runsync when its file holds several), a
// load-balanced route at /<module path><route path>. The module path is the file path without `.py`.
import type { EndpointKind } from '../protocol/endpointKind';
import type { EndpointSpec, FunctionInfo, HttpMethod, ProjectModel } from '../project';

export interface DevRoute {
  method: HttpMethod;
  /** Path on the dev server; may hold `{param}` segments (load-balanced routes). */
  path: string;
  endpoint: EndpointSpec;
  function: FunctionInfo;
  kind: EndpointKind;
  /** Load-balanced: the route path on the endpoint. */
  routePath?: string;
  summary?: string;
}

export function modulePath(file: string): string {
  return file.replace(/\\/g, '/').replace(/\.py$/, '');
}

export function devRoutes(model: ProjectModel): DevRoute[] {
  const routes: DevRoute[] = [];
  const queueByFile = new Map<string, EndpointSpec[]>();
  for (const ep of model.endpoints) {
    if (ep.kind === 'QUEUE') queueByFile.set(ep.file, [...(queueByFile.get(ep.file) ?? []), ep]);
  }
  for (const ep of model.endpoints) {
    const prefix = `/${modulePath(ep.file)}`;
    if (ep.kind === 'QUEUE') {
      const fn = ep.functions[0];
      if (!fn) continue;
      const several = (queueByFile.get(ep.file)?.length ?? 0) > 1;
      routes.push({
        method: 'POST',
        path: several ? `${prefix}/${fn.name}/runsync` : `${prefix}/runsync`,
        endpoint: ep,
        function: fn,
        kind: 'QUEUE',
        summary: fn.summary,
      });
    } else {
      for (const r of ep.routes) {
        if (!r.path.startsWith('/')) continue;
        routes.push({
          method: r.method,
          path: `${prefix}${r.path === '/' ? '' : r.path}` || '/',
          endpoint: ep,
          function: r.function,
          kind: 'LOAD_BALANCED',
          routePath: r.path,
          summary: r.function.summary,
        });
      }
    }
  }
  return routes.sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
}

/**
 * Routes that share a method and path with one before them: a request reaches only the first (a file `w.py` with a
 * function `x` beside a file `w/x.py` both serve /w/x/runsync). One sentence each, naming both.
 */
export function routeCollisions(routes: readonly DevRoute[]): string[] {
  const first = new Map<string, DevRoute>();
  const out: string[] = [];
  const where = (r: DevRoute) => `${r.endpoint.file} (${r.function.name})`;
  for (const r of routes) {
    const key = `${r.method} ${r.path}`;
    const served = first.get(key);
    if (!served) first.set(key, r);
    else out.push(`${key} is served by ${where(served)}; ${where(r)} has the same path and cannot be reached: rename one of the files or functions`);
  }
  return out;
}

/** Matches a request against the table; returns the route and the path on the endpoint (parameters filled in). */
export function matchRoute(routes: readonly DevRoute[], method: string, pathname: string): { route?: DevRoute; pathMatched: boolean; endpointPath?: string } {
  let pathMatched = false;
  for (const r of routes) {
    const params = matchPath(r.path, pathname);
    if (!params) continue;
    pathMatched = true;
    if (r.method !== method) continue;
    const prefixLength = r.path.length - (r.routePath && r.routePath !== '/' ? r.routePath.length : 0);
    // By segments: the request's are %-encoded, the route's (a file's path: spaces, non-ASCII letters) are not.
    const prefixSegments = r.path.slice(0, prefixLength).split('/').length;
    const endpointPath = r.kind === 'LOAD_BALANCED' ? `/${pathname.replace(/\/+$/, '').split('/').slice(prefixSegments).join('/')}` : undefined;
    return { route: r, pathMatched, endpointPath };
  }
  return { pathMatched };
}

/** A path segment %-decoded, or null when its escapes are malformed. */
function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function matchPath(pattern: string, pathname: string): Record<string, string> | undefined {
  const a = pattern.split('/');
  const b = pathname.replace(/\/+$/, '').split('/');
  if (a.length !== b.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < a.length; i++) {
    const m = /^\{([^}]+)\}$/.exec(a[i]);
    if (m) {
      if (!b[i]) return undefined;
      const value = decoded(b[i]);
      if (value === null) return undefined;
      params[m[1]] = value;
    } else if (a[i] !== b[i] && a[i] !== decoded(b[i])) return undefined;
  }
  return params;
}
