// Worker logs as the platform serves them (`GET /v2/<endpoint_id>/logs`, docs/platform.md) and as the CLI and the
// extension read them: one record per line with its time, worker, stream and level, and the bounds of a request.

/** `out` and `err`: the worker's stdout and stderr; `platform`: a note the platform wrote about the worker. */
export type LogStream = 'out' | 'err' | 'platform';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface WorkerLogLine {
  /** ISO 8601, when the platform received the line. */
  time: string;
  /** The worker (or the endpoint's warm template) that wrote it. */
  worker: string;
  stream: LogStream;
  level: LogLevel;
  text: string;
}

export interface WorkerLogPage {
  lines: WorkerLogLine[];
  /**
   * Pass back as `since` to read what comes after these lines, through any node of the service. Opaque: one platform
   * answers a byte position, a cluster each node's position.
   */
  cursor: string;
  /** True when lines before these were left out: older than the tail asked for, or a cursor past a replaced log's end. */
  truncated: boolean;
  /**
   * A cluster only, when some live nodes did not answer in time: their workers' lines are missing from this answer
   * (the cursor keeps their place, so a later read gets them). Absent when every node answered.
   */
  partial?: LogNodeMissing[];
}

/** A node whose part of the logs an answer lacks, and why. */
export interface LogNodeMissing {
  node: string;
  url: string;
  error: string;
}

/**
 * Bounds of `GET /v2/<id>/logs`: `tail` lines without `since`, `wait` ms of long-poll, bytes read per answer; and the
 * characters of one line of a worker's output the log keeps (the rest of a longer line is said to be left out).
 */
export const LOG_LIMITS = {
  defaultTail: 100,
  maxTail: 10_000,
  maxWaitMs: 60_000,
  pageBytes: 1024 * 1024,
  lineChars: 64 * 1024,
} as const;

/** The Python package's runtime prefixes each line with `strato`, the level padded to 5 and a space (strato/_log.py). */
const RUNTIME_LINE = /^strato (DEBUG|INFO |WARN |ERROR) /;

/** The level of a line: the runtime's own prefix when it has one; other stderr output is a warning, stdout is info. */
export function logLevelOf(stream: LogStream, text: string): LogLevel {
  const m = RUNTIME_LINE.exec(text);
  if (m) return m[1].trim().toLowerCase() as LogLevel;
  return stream === 'err' ? 'warn' : 'info';
}

/** Whether a line is the runtime's own progress log (INFO or DEBUG), not output of the user's code. */
export function isRuntimeProgress(text: string): boolean {
  const m = RUNTIME_LINE.exec(text);
  return m !== null && (m[1] === 'INFO ' || m[1] === 'DEBUG');
}

/** The text of a line without the runtime's `strato LEVEL ` prefix. */
export function logMessage(text: string): string {
  return text.replace(RUNTIME_LINE, '');
}
