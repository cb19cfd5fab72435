// What can be a worker file: text of at most 2 MiB with no NUL byte. Larger or binary files are generated code or
// data; the build, the dev server and the language server skip them by this one rule.
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import type { Diagnostic } from './model';

export const MAX_WORKER_FILE_BYTES = 2 * 1024 * 1024;

/** True when this text (an editor buffer, a file's content) can be a worker file. */
export function isWorkerText(text: string): boolean {
  if (text.length > MAX_WORKER_FILE_BYTES || text.includes('\u0000')) return false;
  return text.length * 3 <= MAX_WORKER_FILE_BYTES || Buffer.byteLength(text, 'utf8') <= MAX_WORKER_FILE_BYTES;
}

/** A file's text, or undefined when it is missing, binary or too large to be a worker file. */
export function readWorkerFile(file: string): string | undefined {
  try {
    const buf = readFileSync(file);
    if (buf.length > MAX_WORKER_FILE_BYTES || buf.includes(0)) return undefined;
    // A byte order mark is no text, for Python (utf-8-sig) as for editors, which leave it out of their columns: kept,
    // every position on the first line was one character to the right of the editor's.
    const text = buf.toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch {
    return undefined;
  }
}

/**
 * A warning for a Python file the analysis does not read (over the limit, or binary) that mentions Endpoint: the
 * functions it declares would otherwise be left out of the deploy without a word. Undefined for other files.
 */
export function unreadFileWarning(rel: string, file: string): Diagnostic | undefined {
  const buf = bytesOf(file);
  if (!buf) return undefined;
  return buf.includes('Endpoint') ? unreadWarning(rel, buf.includes(0), buf.length) : undefined;
}

/** The same warning for an editor buffer that is no worker text (isWorkerText false). */
export function unreadTextWarning(rel: string, text: string): Diagnostic | undefined {
  return text.includes('Endpoint') ? unreadWarning(rel, text.includes('\u0000'), Buffer.byteLength(text)) : undefined;
}

function unreadWarning(rel: string, binary: boolean, bytes: number): Diagnostic {
  const why = binary
    ? 'it holds a NUL byte, so it is read as binary'
    : `it is ${(bytes / 1024 / 1024).toFixed(1)} MiB, over the ${MAX_WORKER_FILE_BYTES / 1024 / 1024} MiB a worker file may have`;
  return {
    code: 'unread-file',
    severity: 'warning',
    message:
      `${rel} is not read for endpoints: ${why}. Any @Endpoint in it is not deployed (the file is still packaged); keep the ` +
      'endpoints in a file of their own and move the data or generated code into a module they import.',
    file: rel,
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
  };
}

/** PEP 263: a source file may declare its encoding in a comment on its first or second line. */
const CODING_COOKIE = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/;

/**
 * An error for a worker file whose bytes are not UTF-8 and that declares no other encoding: Python refuses to import
 * it (its workers would fail to start), though the analysis read it. Checked where the decoded text holds U+FFFD.
 */
/**
 * The error of a worker file read from disk as `text` that is not UTF-8 (a text with replacement characters), if it is
 * not: what `strato check`, the build and the language server say of a closed file alike.
 */
export function diskTextProblem(rel: string, file: string, text: string): Diagnostic | undefined {
  return text.includes('\uFFFD') ? sourceEncodingError(rel, file) : undefined;
}

export function sourceEncodingError(rel: string, file: string): Diagnostic | undefined {
  const buf = bytesOf(file);
  if (!buf) return undefined;
  const firstLines = buf
    .subarray(0, 400)
    .toString('latin1')
    .split(/\r?\n|\r/)
    .slice(0, 2);
  if (firstLines.some((l) => CODING_COOKIE.test(l))) return undefined;
  if (isUtf8(buf)) return undefined;
  const end = firstNonUtf8(buf);
  const line = buf.subarray(0, end).toString('utf8').split('\n').length - 1;
  return {
    code: 'syntax-error',
    severity: 'error',
    message:
      `${rel} is not UTF-8 (byte 0x${buf[end].toString(16)} on line ${line + 1}): Python reads a source file as UTF-8 unless its first or ` +
      'second line declares another encoding (# -*- coding: latin-1 -*-), so its workers could not import it; save it as UTF-8',
    file: rel,
    range: { start: { line, character: 0 }, end: { line, character: 0 } },
  };
}

/** Where the first byte sequence that is not UTF-8 starts (by its lead and continuation bytes). */
function firstNonUtf8(b: Buffer): number {
  for (let i = 0; i < b.length;) {
    const c = b[i];
    const n = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
    if (n === 0 || i + n > b.length) return i;
    for (let k = 1; k < n; k++) if ((b[i + k] & 0xc0) !== 0x80) return i;
    i += n;
  }
  return 0;
}

/** A file's bytes, or undefined when it cannot be read (gone meanwhile: nothing to say of it). */
function bytesOf(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}
