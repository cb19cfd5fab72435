// Text the database accepts: PostgreSQL refuses NUL characters and unpaired UTF-16 surrogates in text and JSON.
// A handler may produce either (an exception message, an output string): each becomes U+FFFD, the rest is kept.
// eslint-disable-next-line no-control-regex -- NUL is exactly what the database refuses
const REFUSED = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  if (text === null) return null;
  REFUSED.lastIndex = 0;
  return REFUSED.test(text) ? text.replace(REFUSED, '\ufffd') : text;
}
