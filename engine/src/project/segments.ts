// A Python file parsed as its top-level statements: each statement (with its decorators, its else/elif/except/finally
// clauses and the blank lines and comments after it) is parsed on its own over the file's text (tree-sitter included
// ranges, so nodes keep their file positions). An edit then re-parses only the statements it touches, and a broken
// statement's error recovery stays inside it: over a whole file, tree-sitter-python re-parses from the edit to the end
// of the file after most edits that touch indentation or break a statement, as slow as a parse from scratch.
import type { Edit, Parser, Point, SyntaxNode, Tree } from './parser';
import { children } from './syntax';

export interface ParseOptions {
  /** performance.now() after which the parse is abandoned (then null / false is returned). */
  deadline?: number;
  /**
   * The tree will be edited (an open document): parse by statement from the start. Otherwise a file is parsed whole
   * first, which is as fast and gives the same statements when it has no syntax error (each parse has a fixed cost:
   * indexing a workspace of small files pays it once per file instead of once per statement).
   */
  editable?: boolean;
}

interface Segment {
  start: number;
  end: number;
  /** Row of `start` (tree-sitter rows: only '\n' ends one). */
  row: number;
  tree: Tree;
  /** Data derived from the segment's statements (statementFacts()); dropped when the segment moves to other rows. */
  derived?: Map<string, unknown[]>;
  hasError?: boolean;
  /** The statement nodes, while the tree is not edited (nodes hold their start: an edit before them moves it). */
  nodes?: SyntaxNode[];
}

/** Derived data kept per segment: an entry per purpose (by statement), a few keys in turn at most. */
const MAX_DERIVED = 16;

/** The text the trees read (node.text) and, while one segment parses, the end of what the parser may see. */
interface Source {
  text: string;
  limit: number;
}

export class ModuleTree {
  private readonly source: Source;
  /** The callback every tree reads its text through: the trees outlive the text of the parse that made them. */
  private readonly read: (index: number) => string;
  private segments: Segment[] = [];
  /**
   * Segments the last re-parse ran over (an opened string or bracket made them part of a longer statement), kept
   * until the next one: when the edit that caused it is undone, they come back without a parse.
   */
  private overrun: Segment[] = [];

  /** Whether derived data is kept between analyses: only for a tree that will be edited. */
  private readonly keeps: boolean;

  private constructor(text: string, editable: boolean) {
    this.keeps = editable;
    const source: Source = { text, limit: text.length };
    this.source = source;
    this.read = (index) => (index < source.limit ? source.text.slice(index, source.limit) : '');
  }

  /** Parses the whole text; null when the deadline passed first. */
  static parse(parser: Parser, text: string, options: ParseOptions = {}): ModuleTree | null {
    const tree = new ModuleTree(text, options.editable === true);
    if (!options.editable) {
      const whole = tree.parseSegment(parser, text, 0, text.length, 0, countRows(text, 0, text.length), progressOf(options));
      if (!whole) return null;
      if (!whole.rootNode.hasError) {
        tree.segments = [{ start: 0, end: text.length, row: 0, tree: whole }];
        return tree;
      }
      whole.delete();
    }
    if (tree.reparse(parser, text, options)) return tree;
    tree.delete();
    return null;
  }

  /** The module node of each segment, in order. */
  roots(): SyntaxNode[] {
    return this.segments.map((s) => s.tree.rootNode);
  }

  /** The top-level statements (and comments) of the file, in order. */
  statements(): SyntaxNode[] {
    return this.segments.flatMap(nodesOf);
  }

  get hasError(): boolean {
    return this.segments.some(hasError);
  }

  /** The top-level node that contains or follows `index`, within the statement segment around it. */
  statementAt(index: number): SyntaxNode | null {
    const s = this.segmentAt(index);
    return s ? s.tree.rootNode.firstChildForIndex(index) : null;
  }

  /** The module nodes of the segments with a syntax error. */
  errorRoots(): SyntaxNode[] {
    return this.segments.filter(hasError).map((s) => s.tree.rootNode);
  }

  /**
   * Each top-level statement with facts about it, computed by `compute` from its node once while the statement's
   * segment is neither re-parsed nor moved to other rows: an edit reads the nodes of the statements it touched only.
   * Facts must be plain data holding rows and columns, never offsets (which move with every edit before the statement);
   * they are frozen, being shared by every analysis until then. A tree that is not edited keeps nothing.
   */
  statementFacts<T>(key: string, compute: (statement: SyntaxNode) => T): Array<Statement<T>> {
    const out: Array<Statement<T>> = [];
    for (const s of this.segments) {
      let facts = s.derived?.get(key) as T[] | undefined;
      if (!facts && !this.keeps) facts = nodesOf(s).map(compute);
      else if (!facts) {
        facts = nodesOf(s).map((node) => deepFreeze(compute(node)));
        remember(s, key, facts);
      }
      for (let i = 0; i < facts.length; i++) out.push(new Statement(s, i, facts[i], this.keeps));
    }
    return out;
  }

  /**
   * Records an edit of the text (tree-sitter's edit, in the text as left by the previous edits): the statements it
   * touches, and the one before (whose end may move), are dropped; those after it move.
   */
  edit(e: Edit): void {
    const delta = e.newEndIndex - e.oldEndIndex;
    const rows = e.newEndPosition.row - e.oldEndPosition.row;
    this.overrun = this.overrun.filter((s) => {
      if (s.end < e.startIndex) return true;
      if (s.start <= e.oldEndIndex) {
        s.tree.delete();
        return false;
      }
      shift(s, e, delta, rows);
      return true;
    });
    let first = this.segments.findIndex((s) => s.end >= e.startIndex);
    if (first === -1) first = this.segments.length;
    let after = first;
    while (after < this.segments.length && this.segments[after].start <= e.oldEndIndex) after++;
    // Whether a line starts a statement is read from the statement before it.
    if (first > 0) first--;
    for (let i = first; i < after; i++) this.segments[i].tree.delete();
    for (let i = after; i < this.segments.length; i++) shift(this.segments[i], e, delta, rows);
    this.segments.splice(first, after - first);
  }

  /**
   * Parses the statements dropped by edits in `text` (the text after them); the segmentation is scanned from the
   * last kept statement before each gap until it meets a kept one again. False when the deadline passed first.
   */
  reparse(parser: Parser, text: string, options: ParseOptions = {}): boolean {
    this.source.text = text;
    const progressCallback = progressOf(options);
    const out: Segment[] = [];
    const overrun: Segment[] = [];
    const back = new Map(this.overrun.map((s) => [s.start, s]));
    let i = 0;
    let at = 0;
    let row = 0;
    try {
      for (;;) {
        // Kept segments that start where the scan is: taken as they are.
        while (i < this.segments.length && this.segments[i].start === at) {
          const s = this.segments[i++];
          out.push(s);
          at = s.end;
          const next = this.segments[i];
          row = next?.start === at ? next.row : s.row + countRows(text, s.start, s.end);
        }
        if (at >= text.length && !(out.length === 0 && i === this.segments.length)) break;
        const next = nextStatementStart(text, at);
        // Kept segments the new segment runs over are not statements of their own any more.
        while (i < this.segments.length && this.segments[i].start < next) overrun.push(this.segments[i++]);
        const endRow = row + countRows(text, at, next);
        const before = back.get(at);
        if (before?.end === next && before.row === row) {
          back.delete(at);
          out.push(before);
        } else {
          const tree = this.parseSegment(parser, text, at, next, row, endRow, progressCallback);
          if (!tree) return false;
          out.push({ start: at, end: next, row, tree });
        }
        at = next;
        row = endRow;
        if (at >= text.length) break;
      }
      return true;
    } finally {
      // What was not reached (all of it but on a passed deadline) is gone.
      for (; i < this.segments.length; i++) this.segments[i].tree.delete();
      this.source.limit = text.length;
      this.segments = out;
      for (const s of back.values()) s.tree.delete();
      this.overrun = overrun;
    }
  }

  delete(): void {
    for (const s of [...this.segments, ...this.overrun]) s.tree.delete();
    this.segments = [];
    this.overrun = [];
  }

  private segmentAt(index: number): Segment | undefined {
    let lo = 0;
    let hi = this.segments.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.segments[mid].start <= index) lo = mid;
      else hi = mid - 1;
    }
    return this.segments[lo];
  }

  private parseSegment(
    parser: Parser,
    text: string,
    start: number,
    end: number,
    row: number,
    endRow: number,
    progressCallback: (() => void) | undefined,
  ): Tree | null {
    this.source.limit = end;
    const endColumn = end - (text.lastIndexOf('\n', end - 1) + 1);
    const range = { startIndex: start, endIndex: end, startPosition: { row, column: 0 }, endPosition: { row: endRow, column: endColumn } };
    const tree = parser.parse(this.read, null, { includedRanges: [range], progressCallback });
    if (!tree) parser.reset(); // cancelled: the next parse must not resume this one
    return tree;
  }
}

/** A top-level statement of a ModuleTree, as statementFacts() gives it. */
export class Statement<T> {
  constructor(
    private readonly segment: Segment,
    private readonly index: number,
    readonly facts: T,
    private readonly keeps: boolean,
  ) {}

  /** Its node (a read through WebAssembly: for what the facts do not hold). */
  node(): SyntaxNode {
    return nodesOf(this.segment)[this.index];
  }

  /**
   * Data derived from the statement, kept as its facts are; `key` names what else the data depends on. What is kept is
   * frozen: every analysis that replays it shares it (models hold it as it is).
   */
  derived<U>(key: string, compute: () => U): U {
    if (!this.keeps) return compute();
    // By key, then by statement: a key is one string for a whole analysis, hashed once.
    let byStatement = this.segment.derived?.get(key);
    if (!byStatement) {
      byStatement = [];
      remember(this.segment, key, byStatement);
    }
    if (this.index in byStatement) return byStatement[this.index] as U;
    const value = deepFreeze(compute());
    byStatement[this.index] = value;
    return value;
  }
}

/** Moves a segment after an edit before it: its tree and the nodes it holds (their start moves), its rows. */
function shift(s: Segment, e: Edit, delta: number, rows: number): void {
  s.start += delta;
  s.end += delta;
  s.row += rows;
  s.tree.edit(e);
  s.nodes = undefined;
  if (rows !== 0) s.derived = undefined;
}

function remember(s: Segment, key: string, value: unknown[]): void {
  if (!s.derived || s.derived.size >= MAX_DERIVED) s.derived = new Map();
  s.derived.set(key, value);
}

function nodesOf(s: Segment): SyntaxNode[] {
  s.nodes ??= children(s.tree.rootNode);
  return s.nodes;
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}

function hasError(s: Segment): boolean {
  s.hasError ??= s.tree.rootNode.hasError;
  return s.hasError;
}

function progressOf({ deadline }: ParseOptions): (() => void) | undefined {
  // The typings declare a void callback, but returning true cancels the parse (web-tree-sitter 0.25).
  return deadline === undefined ? undefined : ((() => performance.now() > deadline) as unknown as () => void);
}

function countRows(text: string, from: number, to: number): number {
  let rows = 0;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) rows++;
  return rows;
}

const NEWLINE = 10;
const HASH = 35;
const BACKSLASH = 92;
const AT = 64;
const CLAUSE = /^(?:else|elif|except|finally)(?!\w)/;
const DEFINITION = /^(?:def\s|class\s|async\s+def\s|@[A-Za-z_])/;

/**
 * Where the top-level statement after the one at `from` starts (text.length at the end): the next line that starts
 * in column 0 outside brackets, strings and backslash continuations, is not a comment, and does not continue the
 * statement (the definition after decorators, an else/elif/except/finally clause). Lexes as Python does, so that
 * valid code is cut exactly between the statements a whole-file parse finds; in broken code, a definition or decorator
 * in column 0 closes the brackets left open before it.
 */
export function nextStatementStart(text: string, from: number): number {
  const n = text.length;
  let decorated = text.charCodeAt(from) === AT;
  let depth = 0;
  let i = from;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === HASH) {
      const eol = text.indexOf('\n', i);
      i = eol === -1 ? n : eol;
      continue;
    }
    if (c === 34 || c === 39) {
      i = stringEnd(text, i);
      continue;
    }
    if (c === BACKSLASH) {
      i += 2; // an escaped newline joins the lines
      continue;
    }
    if (c === 40 || c === 91 || c === 123) depth++;
    else if (c === 41 || c === 93 || c === 125) depth = Math.max(0, depth - 1);
    i++;
    if (c !== NEWLINE || i >= n) continue;
    if (depth > 0) {
      // An unclosed bracket must not swallow the rest of the file: valid code has no definition or decorator in
      // column 0 inside brackets (a line starting with a matrix product `@name` would be one; never seen).
      if (!DEFINITION.test(text.slice(i, i + 12))) continue;
      depth = 0;
    }
    const d = text.charCodeAt(i);
    if (d === 32 || d === 9 || d === 12 || d === 13 || d === NEWLINE || d === HASH) continue; // indented, blank or comment
    if (decorated) {
      decorated = d === AT; // the definition the decorators belong to is part of their statement
      continue;
    }
    if (CLAUSE.test(text.slice(i, i + 8))) continue;
    return i;
  }
  return n;
}

/** The end of the string literal whose quote is at `i`; a single-quoted one also ends at the end of its line. */
function stringEnd(text: string, i: number): number {
  const q = text[i];
  const triple = text.startsWith(q + q + q, i);
  const close = triple ? q + q + q : q;
  let j = i + close.length;
  while (j < text.length) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) {
      j += 2;
      continue;
    }
    if (c === NEWLINE && !triple) return j;
    if (text.startsWith(close, j)) return j + close.length;
    j++;
  }
  return text.length;
}

export type { Edit, Point };
