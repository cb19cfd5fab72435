// The "third-party package imported at the top of a worker file" rule and its fix: such imports belong inside
// the function bodies, because the file is also imported where only the endpoint's workers have the package.
import type { SyntaxNode } from './parser';
import type { FileModel, ImportInfo, Position } from './model';
import type { DiagnosticSink } from './rules';
import { STDLIB_MODULES } from './stdlib';
import { children, rangeOf } from './syntax';

const ALWAYS_FINE = new Set(['strato', '__future__', 'typing_extensions']);

export function isThirdParty(imp: ImportInfo, localModules?: ReadonlySet<string>): boolean {
  if (!imp.topLevel) return false; // relative import: a local module
  return !STDLIB_MODULES.has(imp.topLevel) && !ALWAYS_FINE.has(imp.topLevel) && !(localModules?.has(imp.topLevel) ?? false);
}

export function checkTopLevelImports(model: FileModel, root: SyntaxNode, localModules: ReadonlySet<string> | undefined, sink: DiagnosticSink): void {
  const definitions = children(root);
  for (const imp of model.imports) {
    if (!isThirdParty(imp, localModules)) continue;
    const names = imp.names.filter((n) => n !== '*');
    const packages = [imp.topLevel];
    const targets = names.length ? insertionTargets(definitions, names, imp) : [];
    const usedElsewhere = names.some((n) => usedAtModuleLevel(definitions, n, imp));
    sink.add('top-level-import', `'${imp.topLevel}' is a third-party package imported at the top of a worker file: import it inside the function that uses it, since only the endpoint's workers have it installed.`, imp.range, {
      severity: 'warning',
      fix: targets.length && !usedElsewhere ? { kind: 'move-import', importRange: lineRange(imp), statement: imp.text, packages, targets } : undefined,
    });
  }
}

function lineRange(imp: ImportInfo): ImportInfo['range'] {
  return { start: { line: imp.range.start.line, character: 0 }, end: { line: imp.range.end.line + 1, character: 0 } };
}

function mentions(node: SyntaxNode, name: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_.])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(node.text);
}

function defOf(stmt: SyntaxNode): SyntaxNode | null {
  return stmt.type === 'decorated_definition' ? stmt.childForFieldName('definition') : stmt.type === 'function_definition' || stmt.type === 'class_definition' ? stmt : null;
}

function usedAtModuleLevel(definitions: SyntaxNode[], name: string, imp: ImportInfo): boolean {
  return definitions.some((stmt) => {
    if (stmt.startPosition.row === imp.range.start.line) return false;
    const def = defOf(stmt);
    if (!def) return stmt.type !== 'import_statement' && stmt.type !== 'import_from_statement' && stmt.type !== 'comment' && mentions(stmt, name);
    // Decorators and signatures run at import time too.
    const body = def.childForFieldName('body');
    const head = body ? stmt.text.slice(0, body.startIndex - stmt.startIndex) : stmt.text;
    return new RegExp(`(^|[^A-Za-z0-9_.])${name}\\b`).test(head);
  });
}

function insertionTargets(definitions: SyntaxNode[], names: string[], imp: ImportInfo): Array<{ position: Position; text: string }> {
  const out: Array<{ position: Position; text: string }> = [];
  const statement = imp.text.replace(/\s*\n\s*/g, ' ');
  const visit = (def: SyntaxNode) => {
    const body = def.childForFieldName('body');
    if (!body || !names.some((n) => mentions(body, n))) return;
    if (def.type === 'class_definition') {
      for (const s of children(body)) {
        const inner = defOf(s);
        if (inner?.type === 'function_definition') visit(inner);
      }
      return;
    }
    const stmts = children(body).filter((c) => c.type !== 'comment');
    const first = stmts[0];
    if (!first) return;
    const isDoc = first.type === 'expression_statement' && first.namedChildren[0]?.type === 'string';
    const indent = ' '.repeat(first.startPosition.column);
    if (isDoc && stmts[1]) out.push({ position: { line: stmts[1].startPosition.row, character: stmts[1].startPosition.column }, text: `${statement}\n${indent}` });
    else if (isDoc) out.push({ position: { line: first.endPosition.row, character: first.endPosition.column }, text: `\n${indent}${statement}` });
    else out.push({ position: { line: first.startPosition.row, character: first.startPosition.column }, text: `${statement}\n${indent}` });
  };
  for (const stmt of definitions) {
    const def = defOf(stmt);
    if (def) visit(def);
  }
  return out;
}

export { rangeOf };
