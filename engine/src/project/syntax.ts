// Small helpers over tree-sitter nodes: ranges, function signatures, docstrings, and bounded walks.
import type { SyntaxNode } from './parser';
import type { FunctionInfo, ParamInfo, Range } from './model';

export function rangeOf(node: SyntaxNode): Range {
  return {
    start: { line: node.startPosition.row, character: node.startPosition.column },
    end: { line: node.endPosition.row, character: node.endPosition.column },
  };
}

export function children(node: SyntaxNode): SyntaxNode[] {
  return node.namedChildren.filter((c): c is SyntaxNode => c !== null);
}

/** Visits the subtree depth-first (named and anonymous nodes); `visit` returns false to skip a node's children. */
export function walk(node: SyntaxNode, visit: (n: SyntaxNode) => boolean | void): void {
  const cursor = node.walk();
  try {
    let depth = 0;
    let descend = visit(cursor.currentNode) !== false;
    for (;;) {
      if (descend && cursor.gotoFirstChild()) {
        depth++;
        descend = visit(cursor.currentNode) !== false;
        continue;
      }
      for (;;) {
        if (depth === 0) return;
        if (cursor.gotoNextSibling()) {
          descend = visit(cursor.currentNode) !== false;
          break;
        }
        cursor.gotoParent();
        depth--;
      }
    }
  } finally {
    cursor.delete();
  }
}

const NESTED_SCOPES = new Set(['function_definition', 'class_definition', 'lambda']);

/** True when the function body yields (not counting nested functions, classes and lambdas). */
export function isGeneratorBody(body: SyntaxNode): boolean {
  if (!body.text.includes('yield')) return false;
  let found = false;
  walk(body, (n) => {
    if (found) return false;
    if (n.type === 'yield') found = true;
    return !NESTED_SCOPES.has(n.type);
  });
  return found;
}

export function docstringOf(body: SyntaxNode | null): string | undefined {
  const first = body?.namedChildren.find((c) => c && c.type !== 'comment');
  if (!first || first.type !== 'expression_statement') return undefined;
  const str = first.namedChildren[0];
  if (!str || str.type !== 'string') return undefined;
  const content = str.children
    .filter((c) => c?.type === 'string_content')
    .map((c) => c!.text)
    .join('');
  return dedent(content);
}

function dedent(text: string): string {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  const indents = lines
    .slice(1)
    .filter((l) => l.trim())
    .map((l) => l.length - l.trimStart().length);
  const cut = indents.length ? Math.min(...indents) : 0;
  return [lines[0].trim(), ...lines.slice(1).map((l) => l.slice(cut).trimEnd())].join('\n').trim();
}

export function paramsOf(parameters: SyntaxNode | null): ParamInfo[] {
  if (!parameters) return [];
  const out: ParamInfo[] = [];
  let keywordOnly = false;
  for (const p of children(parameters)) {
    switch (p.type) {
      case 'identifier':
        out.push({ name: p.text, kind: keywordOnly ? 'keyword-only' : 'positional' });
        break;
      case 'typed_parameter': {
        const inner = p.namedChildren[0];
        const annotation = p.childForFieldName('type')?.text;
        if (inner?.type === 'list_splat_pattern') out.push({ name: inner.text.replace(/^\*/, ''), kind: 'var-positional', annotation });
        else if (inner?.type === 'dictionary_splat_pattern') out.push({ name: inner.text.replace(/^\*\*/, ''), kind: 'var-keyword', annotation });
        else out.push({ name: inner?.text ?? '', kind: keywordOnly ? 'keyword-only' : 'positional', annotation });
        if (inner?.type === 'list_splat_pattern') keywordOnly = true;
        break;
      }
      case 'default_parameter':
      case 'typed_default_parameter':
        out.push({
          name: p.childForFieldName('name')?.text ?? '',
          kind: keywordOnly ? 'keyword-only' : 'positional',
          annotation: p.childForFieldName('type')?.text,
          default: p.childForFieldName('value')?.text,
        });
        break;
      case 'list_splat_pattern':
        out.push({ name: p.text.replace(/^\*/, ''), kind: 'var-positional' });
        keywordOnly = true;
        break;
      case 'dictionary_splat_pattern':
        out.push({ name: p.text.replace(/^\*\*/, ''), kind: 'var-keyword' });
        break;
      case 'keyword_separator':
        keywordOnly = true;
        break;
      default:
        break; // positional_separator and comments carry no parameter
    }
  }
  return out;
}

/** Describes a `def`, `async def` or `class` node; `outer` is the decorated_definition when there is one. */
export function functionInfo(def: SyntaxNode, outer: SyntaxNode = def): FunctionInfo {
  const nameNode = def.childForFieldName('name') ?? def;
  const body = def.childForFieldName('body');
  const docstring = docstringOf(body);
  const info: FunctionInfo = {
    name: nameNode.text,
    isAsync: def.type === 'function_definition' && def.child(0)?.type === 'async',
    isClass: def.type === 'class_definition',
    isGenerator: def.type === 'function_definition' && body !== null && isGeneratorBody(body),
    params: def.type === 'function_definition' ? paramsOf(def.childForFieldName('parameters')) : [],
    docstring,
    summary: docstring?.split('\n')[0].trim() || undefined,
    range: rangeOf(outer),
    nameRange: rangeOf(nameNode),
    bodyImports: body && body.text.includes('import') ? bodyImportsOf(body) : [],
  };
  if (info.isClass && body) {
    info.methods = [];
    for (const stmt of children(body)) {
      const fn = stmt.type === 'decorated_definition' ? stmt.childForFieldName('definition') : stmt;
      if (fn?.type !== 'function_definition') continue;
      const m = functionInfo(fn, stmt);
      if (m.name.startsWith('_')) continue;
      const isStatic = stmt.type === 'decorated_definition' && /@staticmethod\b/.test(stmt.text.split('\n')[0]);
      if (!isStatic && m.params.length && m.params[0].kind === 'positional') m.params = m.params.slice(1);
      info.methods.push(m);
    }
    const init = children(body).find((s) => s.type === 'function_definition' && s.childForFieldName('name')?.text === '__init__');
    if (init) info.params = paramsOf(init.childForFieldName('parameters')).slice(1);
  }
  return info;
}

function bodyImportsOf(body: SyntaxNode): FunctionInfo['bodyImports'] {
  const out: FunctionInfo['bodyImports'] = [];
  walk(body, (n) => {
    if (n.type !== 'import_from_statement') return n.type !== 'string';
    const moduleNode = n.childForFieldName('module_name');
    if (!moduleNode) return false;
    const names = children(n)
      .filter((c) => c.id !== moduleNode.id)
      .map((c) => (c.type === 'aliased_import' ? c.childForFieldName('name')?.text : c.text) ?? '')
      .filter(Boolean);
    out.push({ module: moduleNode.text, names });
    return false;
  });
  return out;
}
