// The agent's HTTP connection to its platform: node:http(s) with a keep-alive pool the agent owns, so that closing
// it lets the process end at once (a refused agent exits in milliseconds, not when idle sockets time out).
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';

export interface JsonReply {
  status: number;
  /** Parsed JSON, or the text when the body is not JSON. */
  body: unknown;
}

export class PlatformLink {
  private readonly agent: http.Agent;
  private readonly lib: typeof http | typeof https;

  constructor(
    readonly base: URL,
    private readonly key: string,
  ) {
    this.lib = base.protocol === 'https:' ? https : http;
    this.agent = new this.lib.Agent({ keepAlive: true, maxSockets: 16 });
  }

  /** Sends a request; resolves with the response (body unread) or rejects on a network error or after `timeoutMs`. */
  request(method: string, path: string, body: unknown, timeoutMs: number): Promise<IncomingMessage> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { authorization: `Bearer ${this.key}` };
    if (text !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) });
    return new Promise((resolve, reject) => {
      const url = new URL(this.base.pathname.replace(/\/+$/, '') + path, this.base);
      const req = this.lib.request(url, { method, headers, agent: this.agent }, (res) => {
        clearTimeout(timer);
        resolve(res);
      });
      const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'TIMEOUT' })), timeoutMs);
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.end(text);
    });
  }

  /** A request whose answer is read whole (and parsed when it is JSON). */
  async json(method: string, path: string, body: unknown, timeoutMs: number): Promise<JsonReply> {
    const res = await this.request(method, path, body, timeoutMs);
    const chunks: Buffer[] = [];
    for await (const c of res) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    try {
      return { status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null };
    } catch {
      return { status: res.statusCode ?? 0, body: text };
    }
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The platform's sentence in an error body (`{"error": ...}`), or the text. */
export function errorOf(body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') return (body as { error: string }).error;
  return typeof body === 'string' ? body.slice(0, 300) : JSON.stringify(body);
}
