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
    const text = isString ? (output as string) : JSON.stringify(output);
    const pieces = splitText(text, maxBytes - Buffer.byteLength(JSON.stringify(metrics)) - 200);
    pieces.forEach((piece, part) => {
      const m: Record<string, unknown> = { ...metrics, stream_index: nextIndex++, part, parts: pieces.length };
      if (!isString) m.json = true;
      out.push(JSON.stringify({ output: piece, metrics: m }));
    });
  }
  return out;
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
