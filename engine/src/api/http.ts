// The HTTP layer under every client of engine/src/api: node:http(s) with one keep-alive agent per scheme (it loads
// in a few ms, where an HTTP library costs a command 150 ms of start-up), JSON bodies, and failures turned into
// UserErrors that say what failed and what to do (platform unreachable, key refused).
import http from 'node:http';
import type { Readable } from 'node:stream';
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
  /** The body as it came (a proxy passes it on byte for byte: 2.0 stays 2.0, big integers keep their digits). */
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

const httpAgent = new http.Agent({ keepAlive: true, keepAliveMsecs: 30_000, maxSockets: 64 });
/** TLS loads only for an https:// platform: most commands talk to the local one, and TLS costs start-up time. */
let tls: Promise<{ lib: typeof import('node:https'); agent: import('node:https').Agent }> | undefined;
function httpsClient() {
  tls ??= import('node:https').then((lib) => ({ lib, agent: new lib.Agent({ keepAlive: true, keepAliveMsecs: 30_000, maxSockets: 64 }) }));
  return tls;
}

export interface SendOptions {
  body?: unknown;
  /** Raw body (upload); sent as is. */
  raw?: Readable | Buffer | string;
  headers?: Record<string, string>;
  /** Whole request, headers and body; 0 waits forever. */
  timeoutMs?: number;
}

class TimeoutError extends Error {
  readonly code = 'TIMEOUT';
}

/** A reused keep-alive connection turned out closed before any answer came (its `cause`: the socket's error). */
class StaleConnection extends Error {}

const STALE_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

export async function send(target: ApiTarget, method: string, path: string, o: SendOptions = {}): Promise<HttpResult> {
  const url = new URL(`${target.baseUrl}${path}`);
  const headers: Record<string, string> = { authorization: `Bearer ${target.apiKey}`, ...o.headers };
  let body = o.raw;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] = 'application/json';
  }
  if (typeof body === 'string' || Buffer.isBuffer(body)) headers['content-length'] = String(Buffer.byteLength(body));
  const timeout = o.timeoutMs ?? 60_000;
  let res: { status: number; text: string; headers: http.IncomingHttpHeaders };
  try {
    const client = url.protocol === 'https:' ? await httpsClient() : { lib: http, agent: httpAgent };
    // A kept-alive connection the server (or a proxy before it) closed while idle fails as it is reused, before the
    // request reached anyone: it is sent again on another (node's documented remedy; a body that streams cannot be).
    for (let attempt = 1; ; attempt++) {
      try {
        res = await exchange(client, url, method, headers, body, timeout);
        break;
      } catch (e) {
        if (!(e instanceof StaleConnection) || attempt >= 5 || !(body === undefined || typeof body === 'string' || Buffer.isBuffer(body)))
          throw e instanceof StaleConnection ? e.cause : e;
      }
    }
  } catch (e) {
    throw networkError(target.baseUrl, e, timeout);
  }
  let parsed: unknown = null;
  if (res.text) {
    try {
      parsed = JSON.parse(res.text);
    } catch {
      parsed = res.text;
    }
  }
  if (res.status === 401) {
    // The platform's own sentence says more when it has more to say (a revoked key names itself and when).
    const said = platformMessage(parsed);
    throw new UserError(
      `the Strato platform at ${target.baseUrl} refused the API key (401); check STRATO_API_KEY (environment or .env; in VS Code also Strato: Set API Key)${said ? `. The platform says: ${said}` : ''}`,
    );
  }
  return { status: res.status, body: parsed, text: res.text, headers: res.headers };
}

/** One request and its whole answer; rejects on a network error or when `timeoutMs` passes (0: never). */
function exchange(
  client: { lib: Pick<typeof http, 'request'>; agent: http.Agent },
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: SendOptions['raw'],
  timeoutMs: number,
) {
  return new Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    let answered = false;
    const req = client.lib.request(url, { method, headers, agent: client.agent }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers });
      });
      res.on('error', fail);
    });
    const timer = timeoutMs > 0 ? setTimeout(() => req.destroy(new TimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs) : undefined;
    function fail(e: Error) {
      clearTimeout(timer);
      reject(e);
    }
    req.on('error', (e: NodeJS.ErrnoException) =>
      fail(req.reusedSocket && !answered && STALE_CODES.has(e.code ?? '') ? new StaleConnection(e.message, { cause: e }) : e),
    );
    if (body === undefined) req.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
    else {
      body.on('error', (e) => req.destroy(e));
      body.pipe(req);
    }
  });
}

/** An answer that is not a platform's, in a few words: "an HTML page", or the start of its text quoted. */
export function describeAnswer(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  return /^\s*</.test(text) ? 'an HTML page' : `"${text.replace(/\s+/g, ' ').slice(0, 120)}"`;
}

export function networkError(baseUrl: string, e: unknown, timeoutMs: number): UserError {
  const err = e as { code?: string; message?: string; cause?: { code?: string } };
  const code = err.code ?? err.cause?.code ?? '';
  if (code === 'TIMEOUT') {
    return new UserError(
      `the Strato platform at ${baseUrl} did not answer within ${Math.round(timeoutMs / 1000)} s; check that STRATO_API_URL is a Strato platform and that it runs (strato platform status), then try again`,
    );
  }
  return new UserError(
    `could not reach the Strato platform at ${baseUrl} (${code || err.message || String(e)}); ` +
      'start the local one with `strato platform start`, or check STRATO_API_URL',
  );
}

/** The sentence of a refusal: `{"error": ...}` (jobs API, routes) or the first GraphQL error. */
function platformMessage(body: unknown): string | undefined {
  const b = (body ?? {}) as { error?: unknown; detail?: unknown; errors?: Array<{ message?: unknown }> };
  const m = typeof b.detail === 'string' ? b.detail : typeof b.error === 'string' ? b.error : b.errors?.[0]?.message;
  return typeof m === 'string' ? m.slice(0, 500) : undefined;
}

/** The `error` text of an error body (`{"error": ...}` or `{"error", "detail"}`), else the raw body. */
export function errorText(body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as { error?: unknown; detail?: unknown };
    if (typeof b.error === 'string') return typeof b.detail === 'string' ? `${b.error}: ${b.detail}` : b.error;
  }
  return typeof body === 'string' ? body.slice(0, 500) : JSON.stringify(body);
}
