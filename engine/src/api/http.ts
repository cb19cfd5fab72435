// The HTTP layer under every client of engine/src/api: undici with one keep-alive agent, JSON bodies, and
// failures turned into UserErrors that say what failed and what to do (platform unreachable, key refused).
import { Agent, request, type Dispatcher } from 'undici';
import { UserError } from '../util/errors';

/** Where a client talks to: a platform's base URL and the account key. */
export interface ApiTarget {
  baseUrl: string;
  apiKey: string;
}

export interface HttpResult {
  status: number;
  /** Parsed JSON, or the text when the body is not JSON, or null when empty. */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64, pipelining: 1 });

export interface SendOptions {
  body?: unknown;
  /** Raw body (upload); sent as is. */
  raw?: Dispatcher.DispatchOptions['body'];
  headers?: Record<string, string>;
  /** Whole request, headers and body; 0 waits forever. */
  timeoutMs?: number;
}

export async function send(target: ApiTarget, method: string, path: string, o: SendOptions = {}): Promise<HttpResult> {
  const url = `${target.baseUrl}${path}`;
  const headers: Record<string, string> = { authorization: `Bearer ${target.apiKey}`, ...o.headers };
  let body: Dispatcher.DispatchOptions['body'] = o.raw;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] = 'application/json';
  }
  const timeout = o.timeoutMs ?? 60_000;
  let res: Dispatcher.ResponseData;
  try {
    res = await request(url, {
      method: method as Dispatcher.HttpMethod,
      headers,
      body,
      dispatcher: agent,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
  } catch (e) {
    throw networkError(target.baseUrl, e, timeout);
  }
  let text: string;
  try {
    text = await res.body.text();
  } catch (e) {
    throw networkError(target.baseUrl, e, timeout);
  }
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (res.statusCode === 401) {
    throw new UserError(
      `the Strato platform at ${target.baseUrl} refused the API key (401); check STRATO_API_KEY (environment or .env)`,
    );
  }
  return { status: res.statusCode, body: parsed, headers: res.headers };
}

export function networkError(baseUrl: string, e: unknown, timeoutMs: number): UserError {
  const err = e as { code?: string; message?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return new UserError(`the Strato platform at ${baseUrl} did not answer within ${Math.round(timeoutMs / 1000)} s; try again or raise the timeout`);
  }
  return new UserError(
    `could not reach the Strato platform at ${baseUrl} (${code || err.message || String(e)}); ` +
      'start the local one with `strato platform start`, or check STRATO_API_URL',
  );
}

/** The `error` text of an error body (`{"error": ...}` or `{"error", "detail"}`), else the raw body. */
export function errorText(body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as { error?: unknown; detail?: unknown };
    if (typeof b.error === 'string') return typeof b.detail === 'string' ? `${b.error}: ${b.detail}` : b.error;
  }
  return typeof body === 'string' ? body.slice(0, 500) : JSON.stringify(body);
}
