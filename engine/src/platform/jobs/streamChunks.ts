// Stream chunks as `/stream` returns them: `{"output": <value>, "metrics": {..., "stream_index": n}}`, each at
// most 1 MB. A bigger chunk is split into consecutive chunks whose outputs are pieces of the string (or of
// the JSON text of a non-string value); their metrics carry `part`, `parts` and, for JSON text, `json: true`.
import { limits } from '../options';
import { isJsonText } from '../../util/jsonText';
import { PlatformError } from '../errors';

export interface RawChunk {
  /** The value's own JSON text, kept byte for byte as a job's output is (12345678901234567891 stays whole, 2.0 stays 2.0). */
  outputJson?: unknown;
  /** The value, parsed: the older form of the protocol. */
  output?: unknown;
  metrics?: unknown;
}

/** Serialises the worker's chunks, numbering them from `nextIndex`. */
export function normaliseChunks(raw: RawChunk[], nextIndex: number, maxBytes = limits.streamChunkBytes): string[] {
  const out: string[] = [];
  for (const c of raw) {
    const metrics = c.metrics && typeof c.metrics === 'object' && !Array.isArray(c.metrics) ? { ...(c.metrics as Record<string, unknown>) } : {};
    if (typeof c.outputJson === 'string') {
      if (!isJsonText(c.outputJson)) throw new PlatformError('BAD_REQUEST', 'the worker sent a streamed value that is not JSON text');
      const parts = fromText(c.outputJson, metrics, nextIndex, maxBytes);
      out.push(...parts);
      nextIndex += parts.length;
      continue;
    }
    const output = c.output === undefined ? null : c.output;
    const whole = JSON.stringify({ output, metrics: { ...metrics, stream_index: nextIndex } });
    if (Buffer.byteLength(whole) <= maxBytes) {
      out.push(whole);
      nextIndex++;
      continue;
    }
    const isString = typeof output === 'string';
    const parts = pieces(isString ? (output as string) : JSON.stringify(output), !isString, metrics, nextIndex, maxBytes);
    out.push(...parts);
    nextIndex += parts.length;
  }
  return out;
}

/**
 * The chunks of a handler that does not stream: its whole output, from its JSON text as the handler wrote it (a piece
 * of a split output that is not a string is a piece of that text, never of a re-encoding).
 */
export function outputChunks(outputJson: string, maxBytes = limits.streamChunkBytes): string[] {
  return fromText(outputJson, {}, 0, maxBytes);
}

/** A value's chunk (or chunks, when too big) from its JSON text, never re-encoded. */
function fromText(json: string, metrics: Record<string, unknown>, index: number, maxBytes: number): string[] {
  const direct = `{"output":${json},"metrics":${JSON.stringify({ ...metrics, stream_index: index })}}`;
  if (Buffer.byteLength(direct) <= maxBytes) return [direct];
  const isString = /^\s*"/.test(json);
  return pieces(isString ? (JSON.parse(json) as string) : json, !isString, metrics, index, maxBytes);
}

/** One output too big for a chunk, as consecutive chunks of pieces of `text` (`json`: the text is JSON, not a string). */
function pieces(text: string, json: boolean, metrics: Record<string, unknown>, nextIndex: number, maxBytes: number): string[] {
  const parts = splitText(text, maxBytes - Buffer.byteLength(JSON.stringify(metrics)) - 200);
  return parts.map((piece, part) => {
    const m: Record<string, unknown> = { ...metrics, stream_index: nextIndex + part, part, parts: parts.length };
    if (json) m.json = true;
    return JSON.stringify({ output: piece, metrics: m });
  });
}

/** Splits a string into pieces whose JSON encoding fits in `maxBytes`, never inside a surrogate pair. */
export function splitText(text: string, maxBytes: number): string[] {
  const budget = Math.max(1024, maxBytes);
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let len = Math.min(text.length - start, budget);
    for (;;) {
      let end = start + len;
      const code = text.charCodeAt(end - 1);
      if (end < text.length && code >= 0xd800 && code <= 0xdbff) end--; // keep the pair together
      const piece = text.slice(start, end);
      const bytes = Buffer.byteLength(JSON.stringify(piece));
      if (bytes <= budget || len <= 1) {
        pieces.push(piece);
        start = end;
        break;
      }
      len = Math.max(1, Math.min(len - 1, Math.floor((len * budget) / bytes)));
    }
  }
  return pieces;
}
