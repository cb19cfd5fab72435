// The "third-party package imported at the top of a worker file" rule and its fix: such imports belong inside
// the function bodies, because the file is also imported where only the endpoint's workers have the package.
import { referencePackage, runtimeModules } from '../catalog';
import { parameterMessage } from '../catalog/parameterRules';
import type { SyntaxNode } from './parser';
import type { ModuleTree, Statement } from './segments';
import type { FileModel, ImportInfo, Position } from './model';
import type { DiagnosticSink } from './rules';
import { STDLIB_MODULES } from './stdlib';
import { children, isExtra, rangeOf } from './syntax';

const ALWAYS_FINE = new Set(['strato', '__future__', 'typing_extensions']);

export function isThirdParty(imp: ImportInfo, localModules?: ReadonlySet<string>): boolean {
  if (!imp.topLevel) return false; // relative import: a local module
  return !STDLIB_MODULES.has(imp.topLevel) && !ALWAYS_FINE.has(imp.topLevel) && !(localModules?.has(imp.topLevel) ?? false);
}

/** A top-level statement, with the node reads and texts the rule needs made once (each read crosses into WebAssembly). */
interface TopLevel {
  row: number;
  isDef: boolean;
  bodyText: string;
  /** Decorators and signature of a definition; the whole statement otherwise. */
  head: string;
  checksHead: boolean;
}

export function checkTopLevelImports(model: FileModel, tree: ModuleTree, localModules: ReadonlySet<string> | undefined, sink: DiagnosticSink): void {
  const thirdParty = model.imports.filter((imp) => isThirdParty(imp, localModules));
  if (!thirdParty.length) return;
  const definitions = tree.statementFacts('top-level', topLevel);
  for (const imp of thirdParty) {
    const names = imp.names.filter((n) => n !== '*');
    const packages = [imp.topLevel];
    const targets = names.length ? insertionTargets(definitions, names, imp) : [];
    const usedElsewhere = names.some((n) => usedAtModuleLevel(definitions, n, imp));
    // The fix removes the import's whole lines: not when another statement shares them (`import numpy as np; import os`).
    const sharesLines = definitions.filter(({ facts: t }) => t.row >= imp.range.start.line && t.row <= imp.range.end.line).length > 1;
    sink.add(
      'top-level-import',
      `'${imp.topLevel}' is a third-party package imported at the top of a worker file: import it inside the function that uses it, since only the ` +
        `endpoint's workers have it installed.`,
      imp.range,
      {
        severity: 'warning',
        fix:
          targets.length && !usedElsewhere && !sharesLines
            ? { kind: 'move-import', importRange: lineRange(imp), statement: imp.text, packages, targets }
            : undefined,
      },
    );
  }
}

function topLevel(stmt: SyntaxNode): TopLevel {
  const def = defOf(stmt);
  const body = def?.childForFieldName('body') ?? null;
  const text = stmt.text;
  // Decorators and signatures run at import time too, and a class's body but for its methods' bodies; other
  // statements count unless they are imports or comments.
  const head = def && body ? text.slice(0, body.startIndex - stmt.startIndex) + (def.type === 'class_definition' ? runsAtImport(body) : '') : text;
  const checksHead = def !== null || (stmt.type !== 'import_statement' && stmt.type !== 'import_from_statement' && stmt.type !== 'comment');
  return { row: stmt.startPosition.row, isDef: def !== null, bodyText: body?.text ?? '', head, checksHead };
}

/** What of a class body runs when the class is made: all of it but the bodies of its methods (nested classes alike). */
function runsAtImport(body: SyntaxNode): string {
  return children(body)
    .map((s) => {
      const def = defOf(s);
      const inner = def?.childForFieldName('body');
      if (!def || !inner) return s.text;
      const head = s.text.slice(0, inner.startIndex - s.startIndex);
      return def.type === 'class_definition' ? head + runsAtImport(inner) : head;
    })
    .join('\n');
}

function lineRange(imp: ImportInfo): ImportInfo['range'] {
  return { start: { line: imp.range.start.line, character: 0 }, end: { line: imp.range.end.line + 1, character: 0 } };
}

const mentionPatterns = new Map<string, RegExp>();

function mentions(text: string, name: string): boolean {
  let re = mentionPatterns.get(name);
  if (!re) {
    if (mentionPatterns.size > 1000) mentionPatterns.clear();
    re = new RegExp(`(^|[^A-Za-z0-9_.])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`);
    mentionPatterns.set(name, re);
  }
  return re.test(text);
}

function defOf(stmt: SyntaxNode): SyntaxNode | null {
  return stmt.type === 'decorated_definition'
    ? stmt.childForFieldName('definition')
    : stmt.type === 'function_definition' || stmt.type === 'class_definition'
      ? stmt
      : null;
}

function usedAtModuleLevel(definitions: Array<Statement<TopLevel>>, name: string, imp: ImportInfo): boolean {
  return definitions.some(({ facts: t }) => t.row !== imp.range.start.line && t.checksHead && mentions(t.head, name));
}

type Target = { position: Position; text: string };

/**
 * The import as one line, to go inside a function: its comments and line continuations dropped (an import statement
 * holds no string, so `#` always starts a comment), `from x import (a, b,)` kept in its parentheses.
 */
function oneLineImport(text: string): string {
  return text
    .replace(/#[^\r\n]*/g, '')
    .replace(/\\\r?\n/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/\( /g, '(')
    .replace(/,? \)/g, ')')
    .replace(/,\)/g, ')')
    .trim();
}

/**
 * Where the import goes: each definition that uses one of its names. None when one of them cannot take it (its body on
 * the `def` line): the import would leave that function, which then fails with a NameError.
 */
function insertionTargets(definitions: Array<Statement<TopLevel>>, names: string[], imp: ImportInfo): Target[] {
  const statement = oneLineImport(imp.text);
  const out: Target[] = [];
  const key = `targets\u0000${names.join(',')}\u0000${statement}`;
  for (const t of definitions) {
    if (!t.facts.isDef || !names.some((n) => mentions(t.facts.bodyText, n))) continue;
    const found = t.derived(key, () => targetsIn(t.node(), names, statement));
    if (found === null) return [];
    for (const f of found) out.push({ position: { ...f.position }, text: f.text });
  }
  return out;
}

/** Where the import goes in a definition (each method of a class) whose body uses one of the names; null when one cannot take it. */
function targetsIn(stmt: SyntaxNode, names: string[], statement: string): Target[] | null {
  const out: Target[] = [];
  let blocked = false;
  const visit = (def: SyntaxNode, body: SyntaxNode | null, bodyText: string) => {
    if (!body || !names.some((n) => mentions(bodyText, n))) return;
    if (def.type === 'class_definition') {
      for (const s of children(body)) {
        const inner = defOf(s);
        if (inner?.type === 'function_definition') {
          const innerBody = inner.childForFieldName('body');
          visit(inner, innerBody, innerBody?.text ?? '');
        }
      }
      return;
    }
    const stmts = children(body).filter((c) => !isExtra(c));
    const first = stmts[0];
    if (!first) return;
    const isDoc = first.type === 'expression_statement' && first.namedChildren[0]?.type === 'string';
    // The body's own indentation, tabs included; none when the body sits on the `def` line (`def f(x): return x`),
    // where an inserted line would not parse.
    const defText = def.text;
    const eol = defText.includes('\r\n') ? '\r\n' : '\n'; // the file's own line ending
    const at = first.startIndex - def.startIndex;
    const indent = defText.slice(defText.lastIndexOf('\n', at - 1) + 1, at);
    if (!/^[ \t]*$/.test(indent) || !defText.slice(0, at).includes('\n')) {
      blocked = true;
      return;
    }
    if (isDoc && stmts[1])
      out.push({ position: { line: stmts[1].startPosition.row, character: stmts[1].startPosition.column }, text: `${statement}${eol}${indent}` });
    else if (isDoc) out.push({ position: { line: first.endPosition.row, character: first.endPosition.column }, text: `${eol}${indent}${statement}` });
    else out.push({ position: { line: first.startPosition.row, character: first.startPosition.column }, text: `${statement}${eol}${indent}` });
  };
  const def = defOf(stmt);
  const body = def?.childForFieldName('body') ?? null;
  if (def) visit(def, body, body?.text ?? '');
  return blocked ? null : out;
}

/**
 * An import of the reference product's package (`from runpod_flash import Endpoint`): the import line a migration
 * did not change. Its endpoints are not Strato's, so the build would leave them out without a word. The fix writes
 * the same import from strato (`import runpod_flash` keeps its name: `import strato as runpod_flash`).
 */
export function checkReferenceImports(model: FileModel, sink: DiagnosticSink): void {
  for (const imp of model.imports) {
    if (imp.topLevel !== referencePackage) continue;
    const whole = imp.module === referencePackage;
    const plain = /^import\s+[\w.]+\s*$/.test(imp.text.trim());
    const replacement = !whole
      ? undefined
      : imp.text.trim().startsWith('from')
        ? imp.text.replace(new RegExp(`^(\\s*from\\s+)${referencePackage}\\b`), '$1strato')
        : plain
          ? `import strato as ${referencePackage}`
          : imp.text.replace(new RegExp(`^(\\s*import\\s+)${referencePackage}\\b`), '$1strato');
    sink.add('reference-import', parameterMessage('reference-import', { module: imp.module }), imp.range, {
      fix: replacement && replacement !== imp.text ? { kind: 'replace-value', range: imp.range, replacement } : undefined,
    });
  }
}

export { rangeOf };

/**
 * A file at the top of the project named like a module the worker runtime imports (`json.py`, `strato.py`, a `socket/`
 * package): Python finds the project's file first, so every worker of the project would fail to start. Said on the
 * file itself, as an error: the build would package workers that cannot start.
 */
export function checkShadowedModule(file: string, sink: DiagnosticSink): void {
  const parts = file.split('/');
  const top = parts.length === 1 ? parts[0].replace(/\.py$/, '') : parts.length === 2 && parts[1] === '__init__.py' ? parts[0] : null;
  if (top === null || !runtimeModules.includes(top)) return;
  const what =
    top === 'strato'
      ? 'the strato package itself (from strato import Endpoint would import this file)'
      : `Python's ${top} module, which the Strato runtime imports`;
  sink.add(
    'shadowed-module',
    `${file} has the name of ${what}: Python finds the project's file first, so the endpoints' workers would fail to start; rename it, e.g. ${top}_utils${parts.length === 1 ? '.py' : '/'}`,
    { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
  );
}
