// Where a position is, in Python terms, for hover and completion on half-typed code: the brackets and calls open
// around it, the keyword argument it is in, whether it is in a string or a comment. A small lexer over the
// current statement: the code being typed rarely parses, so the syntax tree only says where the statement starts.
import type { ModuleTree } from '../../engine/src/project';

export interface Frame {
  bracket: '(' | '[' | '{';
  /** The dotted name right before '(' (`Endpoint`, `strato.Endpoint`, `api.post`). */
  callee?: string;
  /** Offset of the bracket. */
  open: number;
  /** The keyword of the argument being written (`gpu` in `gpu=[...`). */
  keyword?: string;
  /** Keywords seen in this call so far. */
  keywords: string[];
  /** True right after '(' or ',' of a call: a keyword name may start here. */
  argStart: boolean;
}

export interface CursorContext {
  /** Outermost first. */
  frames: Frame[];
  /** Inside a string literal: where its content starts, its quote and prefix letters. */
  string?: { contentStart: number; quote: string; prefix: string };
  comment: boolean;
}

const IDENT_START = /[A-Za-z_\u00C0-\uFFFF]/;
const IDENT = /[A-Za-z0-9_\u00C0-\uFFFF]/;
const STRING_START = /([rRbBuUfF]{0,2})('''|"""|'|")/y;

/** The context at `to`, lexing from `from` (the start of the statement). */
export function cursorContext(text: string, from: number, to: number): CursorContext {
  return lex(text, from, Math.min(to, text.length));
}

/** Every keyword of the call whose '(' is at `open` (the whole call, also after the cursor). */
export function callKeywords(text: string, open: number, limit = 20_000): string[] {
  let closed: Frame | undefined;
  const ctx = lex(text, open, Math.min(text.length, open + limit), (frame, depth) => {
    if (depth === 0) closed = frame;
    return depth === 0;
  });
  // An unclosed call (still being typed) runs to the end of the text.
  return (closed ?? ctx.frames[0])?.keywords ?? [];
}

/**
 * The lexer. `onClose` sees every frame that closes, with its depth; returning true stops the lexer.
 * Strings and comments are skipped as units; a position inside one is reported as such.
 */
function lex(text: string, from: number, to: number, onClose?: (frame: Frame, depth: number) => boolean): CursorContext {
  const frames: Frame[] = [];
  let chain = '';
  let afterDot = false;
  const top = () => frames[frames.length - 1];
  const notArgStart = () => {
    const t = top();
    if (t) t.argStart = false;
  };
  let i = from;
  while (i < to) {
    const c = text[i];
    if (c === '#') {
      const nl = text.indexOf('\n', i);
      if (nl === -1 || nl >= to) return { frames, comment: true };
      i = nl;
      continue;
    }
    if (c === '\n' || c === '\r') {
      if (frames.length === 0) chain = '';
      i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\f' || c === '\\') {
      i++;
      continue;
    }
    STRING_START.lastIndex = i;
    const s = STRING_START.exec(text);
    if (s && (s[1] === '' || !IDENT.test(text[i - 1] ?? ''))) {
      const contentStart = i + s[0].length;
      if (contentStart > to) return { frames, comment: false }; // within the opening quotes themselves
      const end = stringEnd(text, contentStart, s[2], to);
      if (end === -1) return { frames, string: { contentStart, quote: s[2], prefix: s[1] }, comment: false };
      notArgStart();
      chain = '';
      afterDot = false;
      i = end;
      continue;
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < text.length && IDENT.test(text[j])) j++;
      const name = text.slice(i, j);
      const t = top();
      if (t?.bracket === '(' && t.argStart) {
        let k = j;
        while (k < to && (text[k] === ' ' || text[k] === '\t')) k++;
        if (k < to && text[k] === '=' && text[k + 1] !== '=') {
          t.keyword = name;
          t.keywords.push(name);
          t.argStart = false;
          chain = '';
          afterDot = false;
          i = k + 1;
          continue;
        }
      }
      notArgStart();
      chain = afterDot && chain ? `${chain}.${name}` : name;
      afterDot = false;
      i = j;
      continue;
    }
    if (c === '.' && chain && !afterDot) {
      afterDot = true;
      i++;
      continue;
    }
    if (c >= '0' && c <= '9') {
      let j = i + 1;
      while (j < to && /[0-9A-Za-z_.]/.test(text[j])) j++;
      notArgStart();
      chain = '';
      afterDot = false;
      i = j;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') {
      notArgStart();
      frames.push({ bracket: c, callee: c === '(' && chain && !afterDot ? chain : undefined, open: i, keywords: [], argStart: c === '(' });
    } else if (c === ')' || c === ']' || c === '}') {
      const want = c === ')' ? '(' : c === ']' ? '[' : '{';
      let at = frames.length - 1;
      while (at >= 0 && frames[at].bracket !== want) at--;
      if (at >= 0) {
        const closed = frames.splice(at);
        if (onClose?.(closed[0], at)) return { frames, comment: false };
      }
      notArgStart();
      i++;
      chain = '';
      afterDot = false;
      continue;
    } else if (c === ',') {
      const t = top();
      if (t) {
        t.keyword = undefined;
        t.argStart = t.bracket === '(';
      }
    } else {
      notArgStart();
    }
    chain = '';
    afterDot = false;
    i++;
  }
  return { frames, comment: false };
}

/** Index just past the closing quote, or -1 when `to` falls inside the string. Unterminated strings end at the line. */
function stringEnd(text: string, start: number, quote: string, to: number): number {
  const triple = quote.length === 3;
  let i = start;
  while (i < text.length) {
    if (i >= to) return -1;
    const c = text[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (!triple && c === '\n') break;
    if (text.startsWith(quote, i)) return to <= i ? -1 : i + quote.length;
    i++;
  }
  const end = Math.min(i, text.length);
  return to <= end ? -1 : end;
}

/** Where the top-level statement around `offset` starts (a decorated definition starts at its first decorator). */
export function statementStart(tree: ModuleTree, text: string, offset: number): number {
  let at = Math.min(offset, text.length) - 1;
  while (at > 0 && /\s/.test(text[at])) at--;
  if (at <= 0) return 0;
  // From the root down, never up through `parent`: each parent step costs the depth of the tree.
  const node = tree.statementAt(at);
  if (node && node.startIndex <= at) return Math.min(node.startIndex, offset);
  return text.lastIndexOf('\n', at) + 1;
}

/** The identifier around `offset` (for hover). */
export function identifierAt(text: string, offset: number): { start: number; end: number; text: string } | undefined {
  let start = offset;
  while (start > 0 && IDENT.test(text[start - 1])) start--;
  let end = offset;
  while (end < text.length && IDENT.test(text[end])) end++;
  if (start === end || !IDENT_START.test(text[start])) return undefined;
  return { start, end, text: text.slice(start, end) };
}

/** The dotted name around `offset` (`GpuGroup.ADA_24`, `strato.GpuGroup.ADA_24`), for hover. */
export function dottedAt(text: string, offset: number): { start: number; end: number; text: string } | undefined {
  let start = offset;
  while (start > 0 && /[\w.]/.test(text[start - 1])) start--;
  let end = offset;
  while (end < text.length && /\w/.test(text[end])) end++;
  const value = text.slice(start, end);
  return /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$/.test(value) ? { start, end, text: value } : undefined;
}

/** What is typed right before `offset`: identifier characters and dots (`GpuGroup.AD`, `gp`, ``). */
export function typedBefore(text: string, offset: number): string {
  let start = offset;
  while (start > 0 && offset - start < 200 && /[\w.]/.test(text[start - 1])) start--;
  return text.slice(start, offset);
}

/** The innermost call around the context when it is strato's `Endpoint(...)`; `nested` counts brackets inside it. */
export function endpointCall(ctx: CursorContext, isEndpoint: (callee: string) => boolean): { frame: Frame; nested: number } | undefined {
  for (let i = ctx.frames.length - 1; i >= 0; i--) {
    const f = ctx.frames[i];
    if (f.bracket === '(' && f.callee !== undefined) return isEndpoint(f.callee) ? { frame: f, nested: ctx.frames.length - 1 - i } : undefined;
  }
  return undefined;
}
