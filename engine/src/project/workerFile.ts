// What can be a worker file: text of at most 2 MiB with no NUL byte. Larger or binary files are generated code or
// data; the build, the dev server and the language server skip them by this one rule.
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
    return buf.toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * A warning for a Python file the analysis does not read (over the limit, or binary) that mentions Endpoint: the
 * functions it declares would otherwise be left out of the deploy without a word. Undefined for other files.
 */
export function unreadFileWarning(rel: string, file: string): Diagnostic | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch {
    return undefined;
  }
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
