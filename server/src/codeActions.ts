// Quick fixes, built from the FixData the engine attaches to a diagnostic: the engine decides what the fix is,
// this module only turns it into text edits (and keeps the user's quote style).
import {
  CodeActionKind,
  TextDocumentEdit,
  type CodeAction,
  type CodeActionParams,
  type Range,
  type TextEdit,
  type WorkspaceEdit,
} from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { FixData } from '../../engine/src/project';
import { toLspDiagnostic } from './diagnostics';
import type { IndexedFile, WorkspaceIndex } from './workspaceIndex';

export interface CodeActionOptions {
  /** The client understands `documentChanges` (versioned edits). */
  documentChanges: boolean;
}

export function codeActions(index: WorkspaceIndex, f: IndexedFile, params: CodeActionParams, options: CodeActionOptions): CodeAction[] {
  const only = params.context.only;
  if (only && !only.some((k) => k === '' || CodeActionKind.QuickFix === k || CodeActionKind.QuickFix.startsWith(`${k}.`))) return [];
  const open = f.open;
  if (!open) return [];
  const doc = open.textDocument;
  const actions = new Map<string, CodeAction>();
  for (const d of index.diagnosticsOf(f)) {
    if (!d.fix || !overlaps(d.range, params.range)) continue;
    const lsp = toLspDiagnostic(d, f.root, index);
    for (const { title, edits, preferred } of fixesOf(d.fix, doc)) {
      const id = `${title}\u0000${JSON.stringify(edits)}`;
      const existing = actions.get(id);
      if (existing)
        existing.diagnostics!.push(lsp); // both diagnostics of a gpu/cpu pair share their fixes
      else
        actions.set(id, {
          title,
          kind: CodeActionKind.QuickFix,
          diagnostics: [lsp],
          isPreferred: preferred,
          edit: workspaceEdit(f.uri, open.version, edits, options),
        });
    }
  }
  return [...actions.values()];
}

interface Fix {
  title: string;
  edits: TextEdit[];
  preferred: boolean;
}

function fixesOf(fix: FixData, doc: TextDocument): Fix[] {
  switch (fix.kind) {
    case 'keep-gpu-or-cpu':
      return [
        { title: 'Keep gpu and remove cpu', edits: [{ range: argumentDeletion(doc, fix.cpuArg), newText: '' }], preferred: false },
        { title: 'Keep cpu and remove gpu', edits: [{ range: argumentDeletion(doc, fix.gpuArg), newText: '' }], preferred: false },
      ];
    case 'swap-workers':
      return [{ title: `Swap to workers=${fix.replacement}`, edits: [{ range: fix.range, newText: fix.replacement }], preferred: true }];
    case 'replace-value': {
      const newText = requote(doc.getText(fix.range), fix.replacement);
      return [{ title: `Replace with ${newText}`, edits: [{ range: fix.range, newText }], preferred: true }];
    }
    case 'add-slash': {
      const newText = requote(doc.getText(fix.range), fix.replacement);
      return [{ title: `Add the missing '/': ${newText}`, edits: [{ range: fix.range, newText }], preferred: true }];
    }
    case 'rename-endpoint': {
      const newText = quoteLike(doc.getText(fix.range), fix.suggestion);
      return [{ title: `Rename the endpoint to "${fix.suggestion}"`, edits: [{ range: fix.range, newText }], preferred: true }];
    }
    case 'move-import': {
      const edits: TextEdit[] = [{ range: fix.importRange, newText: '' }];
      for (const t of fix.targets) edits.push({ range: { start: t.position, end: t.position }, newText: t.text });
      const where = fix.targets.length === 1 ? 'the function that uses it' : `the ${fix.targets.length} functions that use it`;
      return [{ title: `Move '${fix.statement.replace(/\s*\n\s*/g, ' ')}' into ${where}`, edits, preferred: true }];
    }
    default:
      return [];
  }
}

function workspaceEdit(uri: string, version: number, edits: TextEdit[], options: CodeActionOptions): WorkspaceEdit {
  if (options.documentChanges) return { documentChanges: [TextDocumentEdit.create({ uri, version }, edits)] };
  return { changes: { [uri]: edits } };
}

function overlaps(a: Range, b: Range): boolean {
  const before = (p: Range['start'], q: Range['start']) => p.line < q.line || (p.line === q.line && p.character < q.character);
  return !before(a.end, b.start) && !before(b.end, a.start);
}

/**
 * The text to delete to remove one keyword argument: its whole line when it stands alone on it, otherwise the
 * argument and the comma after it, or (last argument) the comma before it.
 */
export function argumentDeletion(doc: TextDocument, arg: Range): Range {
  const text = doc.getText();
  const start = doc.offsetAt(arg.start);
  const end = doc.offsetAt(arg.end);
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const rest = text.slice(end, end + 400);
  const trailing = /^[ \t]*,?[ \t]*(#[^\n]*)?(\r?\n|$)/.exec(rest);
  if (/^[ \t]*$/.test(text.slice(lineStart, start)) && trailing) return span(doc, lineStart, end + trailing[0].length);
  const comma = /^[ \t]*,[ \t]*/.exec(rest);
  if (comma) return span(doc, start, end + comma[0].length);
  const before = /,[ \t\r\n]*$/.exec(text.slice(Math.max(0, start - 400), start));
  return before ? span(doc, start - before[0].length, end) : span(doc, start, end);
}

function span(doc: TextDocument, from: number, to: number): Range {
  return { start: doc.positionAt(from), end: doc.positionAt(to) };
}

/** The engine writes replacement strings with double quotes; keep single quotes where the user wrote them. */
function requote(original: string, replacement: string): string {
  if (!replacement.startsWith('"')) return replacement;
  let value: unknown;
  try {
    value = JSON.parse(replacement);
  } catch {
    return replacement;
  }
  return typeof value === 'string' ? quoteLike(original, value) : replacement;
}

/** `value` as a string literal quoted like `original` (a plain one-line literal), else with double quotes. */
function quoteLike(original: string, value: string): string {
  const m = /^([rRuU]?)('|")[^'"\\\n]*\2$/.exec(original);
  const plain = !/['"\\\n\r]/.test(value);
  if (m && plain) return `${m[1]}${m[2]}${value}${m[2]}`;
  return JSON.stringify(value);
}
