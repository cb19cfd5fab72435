// JSON text kept as written: the span of a top-level member's value in a document that JSON.parse accepted, so
// that a value travels byte for byte (12345678901234567890 stays 12345678901234567890, 2.0 stays 2.0).

/**
 * The exact text of `key`'s value in the top-level object `text` (the last occurrence, as JSON.parse keeps),
 * or undefined when the member is absent. `text` must already be valid JSON: this scans, it does not validate.
 */
export function memberText(text: string, key: string): string | undefined {
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return undefined;
  i++;
  let found: string | undefined;
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] === '}' || i >= text.length) return found;
    const keyEnd = stringEnd(text, i);
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd);
    i = skipSpace(text, i + 1); // the colon
    const end = valueEnd(text, i);
    if (name === key) found = text.slice(i, end);
    i = skipSpace(text, end);
    if (text[i] === ',') i++;
  }
}

/** The most digits of an integer (a number with no fraction or exponent) in a valid JSON text; strings do not count. */
export function longestInteger(text: string): number {
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) i = stringEnd(text, i) - 1;
    else if ((c >= 48 && c <= 57) || c === 45 /* - */) {
      let digits = 0;
      let whole = true;
      for (; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d >= 48 && d <= 57) digits++;
        else if (d === 46 || d === 101 || d === 69 || d === 43 || d === 45)
          whole &&= d === 45 && digits === 0; // . e E + -
        else break;
      }
      i--;
      if (whole) max = Math.max(max, digits);
    }
  }
  return max;
}

/** How deep the arrays and objects of a valid JSON text nest (brackets inside strings do not count). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = stringEnd(text, i) - 1;
    else if (c === '[' || c === '{') max = Math.max(max, ++depth);
    else if (c === ']' || c === '}') depth--;
  }
  return max;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  return i;
}

/** The index just after the string that starts at `i` (a `"`). */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return text.length;
}

/** The index just after the value that starts at `i`. */
function valueEnd(text: string, i: number): number {
  if (text[i] === '"') return stringEnd(text, i);
  if (text[i] === '{' || text[i] === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (c === '"') j = stringEnd(text, j) - 1;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return text.length;
  }
  let j = i;
  while (j < text.length && !/[\s,}\]]/.test(text[j])) j++;
  return j;
}

/** Whether `text` is one JSON value (what JSON.parse accepts). */
export function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
