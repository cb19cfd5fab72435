// How a worker process's end is told, in the platform's log, in a job's error and in an endpoint's health, and which
// part of that sentence is the worker's own error output. That part may hold secrets (an import error quoting an
// environment variable), so it is for keys that may read worker logs only (docs/security.md): a job's error, which
// every caller of the endpoint reads, and the health an invoke key reads say where it is instead.
import { isRuntimeProgress } from '../../protocol/logs';

const OUTPUT_MARK = '; its last error output: ';
/** A longer last line is cut here. */
const TAIL_CHARS = 500;

export function howItEnded(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `was killed by ${signal}` : `exited with code ${code}`;
}

/** The last line of a process's error output that is not the runtime's own progress log; '' when there is none. */
export function lastMeaningful(lines: string[]): string {
  const last =
    lines
      .filter((l) => l.trim() && !isRuntimeProgress(l))
      .pop()
      ?.trim() ?? '';
  return last.length > TAIL_CHARS ? `${last.slice(0, TAIL_CHARS)}...` : last;
}

/** `text` with the worker's error output after it (for the log and for keys that may read worker logs). */
export function withErrorOutput(text: string, tail: string): string {
  return tail ? `${text}${OUTPUT_MARK}${tail}` : text;
}

/** `text` without the worker's error output, saying where it is: `strato logs <endpoint>`. */
export function withoutErrorOutput(text: string, endpointName?: string): string {
  const at = text.indexOf(OUTPUT_MARK);
  if (at < 0) return text;
  return `${text.slice(0, at)}; its error output is in the endpoint's logs (${endpointName ? `strato logs ${endpointName}` : 'strato logs'})`;
}
