// An endpoint's worker log, logs/<endpoint_id>.log in the data dir: one record a line (`<ISO time> <worker> O|E|P
// <text>`), appended by the supervisor and read back by `GET /v2/<id>/logs` from a byte cursor or as a tail.
import fs from 'node:fs';
import { LOG_LIMITS, logLevelOf, type LogStream, type WorkerLogLine, type WorkerLogPage } from '../../protocol/logs';

/** O: the worker's stdout, E: its stderr, P: a note of the platform about it. */
export type LogRecordStream = 'O' | 'E' | 'P';

const STREAMS: Record<LogRecordStream, LogStream> = { O: 'out', E: 'err', P: 'platform' };

export function formatLogRecord(source: string, stream: LogRecordStream, text: string, time = new Date()): string {
  return `${time.toISOString()} ${source} ${stream} ${text}\n`;
}

/** One stored line as the API answers it; a line that is not a record (never written by this module) is kept as text. */
export function parseLogRecord(line: string): WorkerLogLine {
  const m = /^(\S+) (\S+) ([OEP]) (.*)$/s.exec(line);
  if (!m) return { time: '', worker: '', stream: 'out', level: 'info', text: line };
  const stream = STREAMS[m[3] as LogRecordStream];
  return { time: m[1], worker: m[2], stream, level: logLevelOf(stream, m[4]), text: m[4] };
}

/** Complete lines of `buf` (a partial last line is left for the next read), the bytes they took, and where each ends. */
function completeLines(buf: Buffer): { lines: string[]; used: number; ends: number[] } {
  const ends: number[] = [];
  for (let i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, i + 1)) ends.push(i + 1);
  if (ends.length === 0) return { lines: [], used: 0, ends };
  const used = ends[ends.length - 1];
  return {
    lines: buf
      .subarray(0, used - 1)
      .toString('utf8')
      .split('\n'),
    used,
    ends,
  };
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const n = fs.readSync(fd, buf, 0, length, position);
  return buf.subarray(0, n);
}

/**
 * A read of one log with what a cluster needs to merge it with other nodes' logs: where the read began (`from`), the
 * byte cursor after each line (`ends`, for a read after a cursor) and whether the file holds more after the page.
 */
export interface LogPart {
  page: WorkerLogPage;
  from: number;
  ends: number[];
  more: boolean;
}

/**
 * Lines after byte `since` (at most `pageBytes` of them: the cursor then points where the next read goes on), or the
 * last `tail` lines when `since` is undefined. A cursor past the end (a log replaced) starts again from the beginning.
 */
export function readLog(file: string, o: { since?: number; tail?: number; pageBytes?: number }): WorkerLogPage {
  return readLogPart(file, o).page;
}

export function readLogPart(file: string, o: { since?: number; tail?: number; pageBytes?: number }): LogPart {
  const pageBytes = o.pageBytes ?? LOG_LIMITS.pageBytes;
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return { page: { lines: [], cursor: String(o.since ?? 0), truncated: false }, from: o.since ?? 0, ends: [], more: false };
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (o.since !== undefined) {
      const from = o.since > size ? 0 : o.since;
      const buf = readAt(fd, from, Math.min(pageBytes, size - from));
      let { lines, used, ends } = completeLines(buf);
      // A single line longer than a page is cut rather than waited for forever.
      if (used === 0 && buf.length === pageBytes) ({ lines, used, ends } = { lines: [buf.toString('utf8')], used: buf.length, ends: [buf.length] });
      return {
        page: { lines: lines.map(parseLogRecord), cursor: String(from + used), truncated: o.since > size },
        from,
        ends: ends.map((e) => from + e),
        more: from + used < size,
      };
    }
    const tail = o.tail ?? LOG_LIMITS.defaultTail;
    // Back from the end, a page at a time, until enough lines (or the bound) are read.
    let start = size;
    let buf = Buffer.alloc(0);
    while (start > 0 && buf.length < pageBytes && tail > 0) {
      const n = Math.min(64 * 1024, start, pageBytes - buf.length);
      start -= n;
      buf = Buffer.concat([readAt(fd, start, n), buf]);
      if (countNewlines(buf) > tail) break;
    }
    const { lines: all, used } = completeLines(buf);
    // Unless the read began at the start of the file, its first line may be the end of an older one.
    const whole = start === 0 ? all : all.slice(1);
    const lines = tail === 0 ? [] : whole.slice(-tail);
    const page = { lines: lines.map(parseLogRecord), cursor: String(start + used), truncated: start > 0 || whole.length > lines.length };
    return { page, from: start + used, ends: [], more: false };
  } finally {
    fs.closeSync(fd);
  }
}

function countNewlines(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, i + 1)) n++;
  return n;
}
