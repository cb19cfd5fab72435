// Stream chunks as `/stream` returns them: `{"output": <value>, "metrics": {..., "stream_index": n}}`, each at
// most 1 MB. A bigger chunk is split into consecutive chunks whose outputs are pieces of the string (or of
// the JSON text of a non-string value); their metrics carry `part`, `parts` and, for JSON text, `json: true`.
import { limits } from '../options';

export interface RawChunk {
  output?: unknown;
  metrics?: unknown;
}

/** Serialises the worker's chunks, numbering them from `nextIndex`. */
export function normaliseChunks(raw: RawChunk[], nextIndex: number, maxBytes = limits.streamChunkBytes): string[] {
  const out: string[] = [];
  for (const c of raw) {
    const metrics = c.metrics && typeof c.metrics === 'object' && !Array.isArray(c.metrics) ? { ...(c.metrics as Record<string, unknown>) } : {};
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
  const direct = `{"output":${outputJson},"metrics":{"stream_index":0}}`;
  if (Buffer.byteLength(direct) <= maxBytes) return [direct];
  const isString = /^\s*"/.test(outputJson);
  return pieces(isString ? (JSON.parse(outputJson) as string) : outputJson, !isString, {}, 0, maxBytes);
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
