// Small HTTP helpers shared by the platform's routes: bounded body reading, JSON answers, query parsing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PlatformError } from './errors';

/** Reads the whole body; rejects with 413 past `limit` bytes (and stops reading). */
export function readBody(req: IncomingMessage, limit: number, what: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(tooLarge(limit, what));
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(tooLarge(limit, what));
        return;
      }
      parts.push(c);
    });
    req.on('end', () => {
      if (!failed) resolve(parts.length === 1 ? parts[0] : Buffer.concat(parts, size));
    });
    req.on('error', (e) => {
      if (!failed) reject(e);
    });
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
