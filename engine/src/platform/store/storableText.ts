// Text the database accepts: PostgreSQL refuses NUL characters and unpaired UTF-16 surrogates in text and JSON.
// A handler may produce either (an exception message, an output string): each becomes U+FFFD, the rest is kept. A NUL
// that comes in a request (an id, a name, a filter) is the client's error (refusedText).
import { PlatformError } from '../errors';

// eslint-disable-next-line no-control-regex -- NUL is exactly what the database refuses
const REFUSED = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  if (text === null) return null;
  REFUSED.lastIndex = 0;
  return REFUSED.test(text) ? text.replace(REFUSED, '\ufffd') : text;
}

/**
 * The database's refusal of a NUL in a statement's text (SQLSTATE 22021: a job id, a name or a filter from a request),
 * as the client's error rather than the platform's failure; null for any other error.
 */
export function refusedText(e: unknown): PlatformError | null {
  if ((e as { code?: unknown } | null)?.code !== '22021') return null;
  return new PlatformError('BAD_REQUEST', 'the request holds a NUL character (\\u0000), which no id, name or text here can contain; remove it');
}
