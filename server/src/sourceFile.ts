// One Python file's analysis: closed files are parsed once and dropped; an open document keeps its trees (one per
// top-level statement, engine ModuleTree), and an edit re-parses only the statements it touches.
import { TextDocument, type TextDocumentContentChangeEvent } from 'vscode-languageserver-textdocument';
import {
  analyzeTree,
  emptyBindings,
  isWorkerText,
  ModuleTree,
  moduleNameOf,
  unreadTextWarning,
  type AnalyzeOptions,
  type Diagnostic,
  type FileModel,
  type Parser,
} from '../../engine/src/project';

/** A parse that takes longer is abandoned: the file then gets no analysis rather than a frozen editor. */
const PARSE_BUDGET_MS = 750;

export function emptyModel(file: string): FileModel {
  return { file, module: moduleNameOf(file), endpoints: [], types: [], imports: [], diagnostics: [], usesStrato: false, strato: emptyBindings() };
}

/**
 * The model of a file left unanalysed, saying so when it mentions Endpoint: binary or over the size limit (the build
 * skips it too), or parsed past the budget (only the editor gives up; strato check reads it whole). The editor showed
 * nothing while check reported its problems.
 */
function unanalysed(file: string, text: string): FileModel {
  const model = emptyModel(file);
  const notice: Diagnostic | undefined = !isWorkerText(text)
    ? unreadTextWarning(file, text)
    : text.includes('Endpoint')
      ? {
          code: 'unread-file',
          severity: 'information',
          message: `${file} is not checked in the editor: parsing it took over ${PARSE_BUDGET_MS} ms; strato check and the build check it in full.`,
          file,
          range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
        }
      : undefined;
  if (notice) model.diagnostics.push(notice);
  return model;
}

/** Parses with a time budget; null when the budget ran out. */
export function parseBounded(parser: Parser, text: string, editable = false): ModuleTree | null {
  return ModuleTree.parse(parser, text, { deadline: performance.now() + PARSE_BUDGET_MS, editable });
}

/** Analyses text that is not kept open: parse, analyse, free the tree. */
export function analyzeSource(parser: Parser, file: string, text: string, options: AnalyzeOptions): FileModel {
  if (!isWorkerText(text)) return unanalysed(file, text);
  const tree = parseBounded(parser, text);
  if (!tree) return unanalysed(file, text);
  try {
    return analyzeTree(file, tree, text, options);
  } finally {
    tree.delete();
  }
}

/** An open document: its text, version and incrementally maintained trees. */
export class OpenDocument {
  private document: TextDocument;
  private tree: ModuleTree | undefined;
  /** The tree has pending edits that the next parse must take into account. */
  private treeStale = true;

  constructor(
    private readonly parser: Parser,
    readonly uri: string,
    text: string,
    version: number,
  ) {
    this.document = TextDocument.create(uri, 'python', version, text);
  }

  get text(): string {
    return this.document.getText();
  }
  get version(): number {
    return this.document.version;
  }
  get textDocument(): TextDocument {
    return this.document;
  }

  /** Applies LSP content changes in order; each range refers to the text as left by the previous change. */
  applyChanges(changes: readonly TextDocumentContentChangeEvent[], version: number): void {
    for (const change of changes) {
      if (!('range' in change) || !change.range) {
        this.document = TextDocument.update(this.document, [{ text: change.text }], version);
        this.dropTree();
        continue;
      }
      const doc = this.document;
      const startIndex = doc.offsetAt(change.range.start);
      const oldEndIndex = Math.max(startIndex, doc.offsetAt(change.range.end));
      const oldText = doc.getText();
      const range = { start: doc.positionAt(startIndex), end: doc.positionAt(oldEndIndex) };
      this.document = TextDocument.update(doc, [{ range, text: change.text }], version);
      if (this.tree) {
        const newEndIndex = startIndex + change.text.length;
        // Points as tree-sitter counts them (only '\n' ends a row), which differs from LSP for a lone '\r'.
        const startPosition = pointAt(oldText, startIndex);
        this.tree.edit({
          startIndex,
          oldEndIndex,
          newEndIndex,
          startPosition,
          oldEndPosition: pointAfter(oldText, startIndex, oldEndIndex, startPosition),
          newEndPosition: pointAfter(change.text, 0, change.text.length, startPosition),
        });
      }
      this.treeStale = true;
    }
    // A version-only update (no changes) still records the client's version.
    if (changes.length === 0) this.document = TextDocument.update(this.document, [], version);
  }

  /** The current trees, re-parsed where edits are pending; undefined when the text cannot be parsed. */
  syntaxTree(): ModuleTree | undefined {
    if (!this.treeStale) return this.tree;
    const text = this.text;
    this.treeStale = false;
    if (!isWorkerText(text)) {
      this.dropTree();
      this.treeStale = false;
      return undefined;
    }
    if (this.tree?.reparse(this.parser, text, { deadline: performance.now() + PARSE_BUDGET_MS }) === false) this.dropTree();
    else if (!this.tree) this.tree = parseBounded(this.parser, text, true) ?? undefined;
    // After a failed parse the tree stays undefined until the next edit, which then parses from scratch.
    this.treeStale = false;
    return this.tree;
  }

  analyze(file: string, options: AnalyzeOptions): FileModel {
    const tree = this.syntaxTree();
    return tree ? analyzeTree(file, tree, this.text, options) : unanalysed(file, this.text);
  }

  dispose(): void {
    this.dropTree();
  }

  private dropTree(): void {
    this.tree?.delete();
    this.tree = undefined;
    this.treeStale = true;
  }
}

interface Point {
  row: number;
  column: number;
}

function pointAt(text: string, index: number): Point {
  let row = 0;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) {
    row++;
    lineStart = i + 1;
  }
  return { row, column: index - lineStart };
}

/** The point reached from `from` (at point `at`) after the text up to `to`. */
function pointAfter(text: string, from: number, to: number, at: Point): Point {
  const { column } = at;
  let { row } = at;
  let lineStart = from;
  for (let i = text.indexOf('\n', from); i !== -1 && i < to; i = text.indexOf('\n', i + 1)) {
    row++;
    lineStart = i + 1;
  }
  return { row, column: lineStart === from ? column + (to - from) : to - lineStart };
}
