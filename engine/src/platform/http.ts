// Small HTTP helpers shared by the platform's routes: bounded body reading, JSON answers, query parsing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PlatformError } from './errors';

/** A body that sends nothing for this long is given up (slow or unfinished requests must not pile up). */
export const BODY_IDLE_MS = 30_000;

/** Reads the whole body; rejects with 413 past `limit` bytes (and stops reading), closes a body that stalls. */
export function readBody(req: IncomingMessage, limit: number, what: string, idleMs = BODY_IDLE_MS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let idle: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        failed = true;
        reject(new PlatformError('BAD_REQUEST', `the request body stalled for ${idleMs / 1000} s; send it in one go`));
        req.destroy();
      }, idleMs);
      idle.unref();
    };
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(tooLarge(limit, what));
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    let failed = false;
    arm();
    req.on('data', (c: Buffer) => {
      if (failed) return;
      arm();
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(tooLarge(limit, what));
        return;
      }
      parts.push(c);
    });
    req.on('end', () => {
      clearTimeout(idle);
      if (!failed) resolve(parts.length === 1 ? parts[0] : Buffer.concat(parts, size));
    });
    req.on('error', (e) => {
      clearTimeout(idle);
      if (!failed) reject(e);
    });
    req.on('close', () => clearTimeout(idle));
  });
}

function tooLarge(limit: number, what: string): PlatformError {
  return new PlatformError(
    'TOO_LARGE',
    `the request body is larger than the ${limit / 1048576} MB limit of ${what}; send a smaller input or pass a reference to the data`,
  );
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendRaw(res, status, JSON.stringify(body));
}

/** Sends JSON text that is already encoded. */
export function sendRaw(res: ServerResponse, status: number, text: string, headers?: Record<string, string>): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** `{"error": message}`: the error body of the jobs API. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}

export function queryParams(url: string): URLSearchParams {
  const i = url.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : url.slice(i + 1));
}

export function pathOf(url: string): string {
  const i = url.indexOf('?');
  return i < 0 ? url : url.slice(0, i);
}
