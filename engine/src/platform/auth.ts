// API key checks. Accepted forms (decisions.md): `Authorization: Bearer <key>` and the bare key as the whole
// header value. Keys are compared in constant time over their SHA-256 digests, so neither content nor length
// leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** The key a request presents, or null when it has no usable Authorization header. */
export function presentedKey(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return null;
  const v = h.trim();
  if (!v) return null;
  const m = /^Bearer\s+(\S+)$/i.exec(v);
  if (m) return m[1];
  return /\s/.test(v) ? null : v;
}

export class KeyChecker {
  private readonly expected: Buffer;

  constructor(key: string) {
    this.expected = digest(key);
  }

  matches(candidate: string | null): boolean {
    if (candidate === null) return false;
    return timingSafeEqual(digest(candidate), this.expected);
  }

  check(req: IncomingMessage): boolean {
    return this.matches(presentedKey(req));
  }
}

export const UNAUTHORIZED_MESSAGE = 'missing or invalid API key: send "Authorization: Bearer <key>" with the key of this platform (STRATO_API_KEY)';
