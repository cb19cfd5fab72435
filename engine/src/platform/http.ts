// Small HTTP helpers shared by the platform's routes: bounded body reading, JSON answers, query parsing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PlatformError } from './errors';

/** A body that sends nothing for this long is given up (slow or unfinished requests must not pile up). */
export const BODY_IDLE_MS = 30_000;

/** A body being read, for the sweep that gives up on stalled ones. */
interface BodyRead {
  lastAt: number;
  idleMs: number;
  stalled(): void;
}
const reading = new Set<BodyRead>();
let sweep: { timer: NodeJS.Timeout; everyMs: number } | null = null;

/**
 * Watches a body read for stalls. One timer looks at every read in progress, rather than a timer armed and re-armed per
 * request and per chunk: on a warm `/runsync` those timers were a measurable part of the platform's time.
 */
function watchStall(r: BodyRead): void {
  reading.add(r);
  const everyMs = Math.max(10, Math.min(1000, Math.floor(r.idleMs / 4)));
  if (sweep && sweep.everyMs <= everyMs) return;
  if (sweep) clearInterval(sweep.timer);
  const timer = setInterval(() => {
    const now = Date.now();
    for (const read of reading) {
      if (now - read.lastAt < read.idleMs) continue;
      reading.delete(read);
      read.stalled();
    }
    if (reading.size === 0 && sweep?.timer === timer) {
      clearInterval(timer);
      sweep = null;
    }
  }, everyMs);
  timer.unref();
  sweep = { timer, everyMs };
}

/** The sentence of a body given up after `idleMs` without a byte. */
export const stalledMessage = (idleMs: number) => `the request body stalled for ${idleMs / 1000} s; send it in one go`;

/** How long a request whose body stalled stays open after it, so that the answer saying so reaches the client. */
const STALLED_CLOSE_MS = 1000;

/**
 * Watches a body that streams elsewhere (a load-balanced route's, piped to its worker) for stalls: `onStall` runs once
 * when no byte came for `idleMs` before its end; the request is closed STALLED_CLOSE_MS later.
 */
export function watchBodyIdle(req: IncomingMessage, onStall: () => void, idleMs = BODY_IDLE_MS): void {
  if (req.readableEnded) return;
  const read: BodyRead = {
    lastAt: Date.now(),
    idleMs,
    stalled() {
      onStall();
      setTimeout(() => req.destroy(), STALLED_CLOSE_MS).unref();
    },
  };
  watchStall(read);
  req.on('data', () => (read.lastAt = Date.now()));
  const done = () => reading.delete(read);
  req.on('end', done);
  req.on('close', done);
}

/**
 * Reads the whole body; rejects with 413 past `limit` bytes (and stops reading), closes a body that stalls. A body
 * whose declared length has arrived is whole: it resolves then, not a turn later at 'end' (a warm `/runsync` waits on it).
 */
export function readBody(req: IncomingMessage, limit: number, what: string, idleMs = BODY_IDLE_MS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      reject(tooLarge(limit, what));
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    /** Answered: refused, or whole (then any later event changes nothing). */
    let settled = false;
    const read: BodyRead = {
      lastAt: Date.now(),
      idleMs,
      stalled() {
        settled = true;
        reject(new PlatformError('BAD_REQUEST', stalledMessage(idleMs)));
        setTimeout(() => req.destroy(), STALLED_CLOSE_MS).unref(); // the answer first
      },
    };
    watchStall(read);
    const done = () => reading.delete(read);
    const whole = () => {
      settled = true;
      done();
      resolve(parts.length === 1 ? parts[0] : Buffer.concat(parts, size));
    };
    req.on('data', (c: Buffer) => {
      if (settled) return;
      read.lastAt = Date.now();
      size += c.length;
      if (size > limit) {
        settled = true; // still watched: the request is closed idleMs after the last chunk read
        reject(tooLarge(limit, what));
        return;
      }
      parts.push(c);
      if (size === declared) whole();
    });
    req.on('end', () => {
      if (settled) return done();
      whole();
    });
    req.on('error', (e) => {
      done();
      if (!settled) reject(e);
    });
    req.on('close', done);
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

/** A known path asked with a method it does not take: 405, naming the ones it takes (`allow`: "GET" or "GET, POST"). */
export function sendNotAllowed(res: ServerResponse, allow: string, message: string): void {
  sendRaw(res, 405, JSON.stringify({ error: message }), { allow });
}

export function queryParams(url: string): URLSearchParams {
  const i = url.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : url.slice(i + 1));
}

export function pathOf(url: string): string {
  const i = url.indexOf('?');
  return i < 0 ? url : url.slice(0, i);
}
