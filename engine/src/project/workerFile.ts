// What can be a worker file: text of at most 2 MiB with no NUL byte. Larger or binary files are generated code or
// data; the build, the dev server and the language server skip them by this one rule.
import { readFileSync } from 'node:fs';

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
