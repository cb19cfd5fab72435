// Python string literals as Python reads them: the one decoder of escapes for the analysis (endpoint arguments,
// Literal types) and the clients (string defaults in the OpenAPI documents).
import type { SyntaxNode } from './parser';

const SIMPLE_ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v' };

/** One escape sequence (`\n`, `\x41`, `\u00e9`, `\101`, a backslash-newline) as its text; an unknown one keeps its backslash, as in Python. */
export function unescape(seq: string): string {
  const body = seq.slice(1);
  if (body.length === 1 && body in SIMPLE_ESCAPES) return SIMPLE_ESCAPES[body];
  if (/^(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})$/.test(body)) return String.fromCodePoint(parseInt(body.slice(1), 16));
  if (/^[0-7]{1,3}$/.test(body)) return String.fromCodePoint(parseInt(body, 8));
  if (body === '\n' || body === '\r\n') return '';
  return seq;
}

/**
 * The value of a `string` node: its escapes decoded unless it is a raw string. Undefined for an f-string, a bytes
 * literal and a `\N{...}` escape (a name this side does not know).
 */
export function stringNodeValue(node: SyntaxNode): string | undefined {
  const prefix = (node.children.find((c) => c?.type === 'string_start')?.text ?? '"').replace(/['"]/g, '').toLowerCase();
  if (prefix.includes('f') || prefix.includes('b')) return undefined;
  const raw = prefix.includes('r');
  let out = '';
  for (const c of node.children) {
    if (!c) continue;
    if (c.type === 'interpolation') return undefined;
    // The grammar puts escape sequences inside string_content (and may give one on its own).
    if (c.type !== 'string_content' && c.type !== 'escape_sequence') continue;
    const text = raw ? c.text : decodeEscapes(c.text);
    if (text === undefined) return undefined;
    out += text;
  }
  return out;
}

/** Text with its escapes decoded; undefined when it holds a `\N{...}` escape (a character name this side does not know). */
function decodeEscapes(text: string): string | undefined {
  let named = false;
  const out = text.replace(/\\(x[\da-fA-F]{2}|u[\da-fA-F]{4}|U[\da-fA-F]{8}|[0-7]{1,3}|N\{[^}]*\}|\r\n|[\s\S])/g, (all: string) => {
    if (all.startsWith('\\N{')) named = true;
    return unescape(all);
  });
  return named ? undefined : out;
}

/**
 * The value of one Python string literal written as `text` (`"a\\tb"`, `r'C:\x'`, `"""..."""`), for a default kept
 * as source text. Undefined for what is not one plain literal (bytes, f-strings, `"a" "b"`, `\N{...}`).
 */
export function pythonStringLiteral(text: string): string | undefined {
  const m = /^([rRuU]?)('''|"""|'|")([\s\S]*)\2$/.exec(text);
  if (!m) return undefined;
  const [, prefix, quote, body] = m;
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\') i++;
    else if (body.startsWith(quote, i)) return undefined; // the literal ended before: `"a" "b"`
  }
  return /r/i.test(prefix) ? body : decodeEscapes(body);
}
