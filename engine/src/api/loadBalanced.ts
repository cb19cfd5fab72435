// Client of load-balanced endpoints: a route of `{base_url}/lb/<endpoint_id>` called with a direct JSON body
// (no `input` wrapper); errors are the endpoint's `{error, detail}` bodies.
import { UserError } from '../util/errors';
import { errorText, send, type ApiTarget } from './http';

export class RouteError extends UserError {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly detail: string,
  ) {
    super(`${error}${detail ? `: ${detail}` : ''} (HTTP ${status})`);
    this.name = 'RouteError';
  }
}

/** Calls `METHOD path` of the endpoint; GET/DELETE arguments go in the query string. */
export async function callRoute<T = unknown>(
  target: ApiTarget,
  endpointId: string,
  method: string,
  path: string,
  args?: Record<string, unknown>,
  timeoutMs = 60_000,
): Promise<T> {
  const m = method.toUpperCase();
  const hasBody = m === 'POST' || m === 'PUT' || m === 'PATCH';
  let p = path.startsWith('/') ? path : `/${path}`;
  if (!hasBody && args && Object.keys(args).length > 0) {
    const q = new URLSearchParams(Object.entries(args).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    p += `${p.includes('?') ? '&' : '?'}${q}`;
  }
  const r = await send(target, m, `/lb/${encodeURIComponent(endpointId)}${p}`, {
    body: hasBody ? (args ?? {}) : undefined,
    timeoutMs,
  });
  if (r.status >= 400) {
    const b = (r.body ?? {}) as { error?: unknown; detail?: unknown };
    throw new RouteError(r.status, typeof b.error === 'string' ? b.error : errorText(r.body), typeof b.detail === 'string' ? b.detail : '');
  }
  return r.body as T;
}
