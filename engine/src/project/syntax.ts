// Small helpers over tree-sitter nodes: ranges, function signatures, docstrings, and bounded walks.
import type { SyntaxNode, TreeCursor } from './parser';
import type { FunctionInfo, ParamInfo, Range, TypeExpr } from './model';
import { stringNodeValue } from './strings';

export function rangeOf(node: SyntaxNode): Range {
  return {
    start: { line: node.startPosition.row, character: node.startPosition.column },
    end: { line: node.endPosition.row, character: node.endPosition.column },
  };
}

/** A node the grammar allows between any two tokens that means nothing to the analysis: a comment, a backslash line continuation. */
export function isExtra(node: SyntaxNode | null): boolean {
  return node?.type === 'comment' || node?.type === 'line_continuation';
}

/** The named children, without backslash line continuations (`@Endpoint(name="a", \` read as an argument otherwise). */
export function children(node: SyntaxNode): SyntaxNode[] {
  return node.namedChildren.filter((c): c is SyntaxNode => c !== null && c.type !== 'line_continuation');
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

/**
 * `walk`, with the cursor itself given to `visit` (its nodeType, currentFieldName, nodeText): no node object is made
 * for a node `visit` does not ask for (`cursor.currentNode`), which is most of the cost of a walk.
 */
export function walkCursor(node: SyntaxNode, visit: (c: TreeCursor) => boolean | void): void {
  const cursor = node.walk();
  try {
    let depth = 0;
    let descend = visit(cursor) !== false;
    for (;;) {
      if (descend && cursor.gotoFirstChild()) {
        depth++;
        descend = visit(cursor) !== false;
        continue;
      }
      for (;;) {
        if (depth === 0) return;
        if (cursor.gotoNextSibling()) {
          descend = visit(cursor) !== false;
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
  const first = body?.namedChildren.find((c) => c && !isExtra(c));
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

/** Type hints nest a few levels; deeper ones (hostile input) are kept as text rather than walked. */
const MAX_TYPE_DEPTH = 32;

/** Reads a type hint (a `type` node or the expression inside one) into a TypeExpr. */
export function typeExprOf(node: SyntaxNode, depth = 0): TypeExpr {
  const text = () => node.text.replace(/\s+/g, ' ');
  if (depth > MAX_TYPE_DEPTH) return { kind: 'other', text: text() };
  const named = children(node).filter((c) => !isExtra(c));
  switch (node.type) {
    case 'type':
    case 'parenthesized_expression':
      return named.length === 1 ? typeExprOf(named[0], depth + 1) : { kind: 'other', text: text() };
    case 'identifier':
    case 'attribute':
    case 'member_type':
      return { kind: 'name', name: node.text.replace(/\s+/g, '') };
    case 'generic_type': {
      const params = named.find((c) => c.type === 'type_parameter');
      const base = named[0];
      if (!base || !params) return { kind: 'other', text: text() };
      return { kind: 'generic', name: base.text.replace(/\s+/g, ''), args: children(params).map((c) => typeExprOf(c, depth + 1)) };
    }
    case 'subscript': {
      const value = node.childForFieldName('value');
      if (!value || (value.type !== 'identifier' && value.type !== 'attribute')) return { kind: 'other', text: text() };
      const args = named.filter((c) => c.id !== value.id);
      return { kind: 'generic', name: value.text.replace(/\s+/g, ''), args: args.map((c) => typeExprOf(c, depth + 1)) };
    }
    case 'binary_operator':
    case 'union_type': {
      if (node.type === 'binary_operator' && node.childForFieldName('operator')?.type !== '|') return { kind: 'other', text: text() };
      const options: TypeExpr[] = [];
      for (const c of named) {
        const t = typeExprOf(c, depth + 1);
        if (t.kind === 'union') options.push(...t.options);
        else options.push(t);
      }
      return { kind: 'union', options };
    }
    case 'string': {
      const value = stringNodeValue(node);
      return value === undefined ? { kind: 'other', text: text() } : { kind: 'string', value };
    }
    case 'integer':
    case 'float':
      return Number.isFinite(Number(node.text.replace(/_/g, '')))
        ? { kind: 'value', value: Number(node.text.replace(/_/g, '')) }
        : { kind: 'other', text: text() };
    case 'unary_operator': {
      const operand = node.childForFieldName('argument');
      const inner = operand ? typeExprOf(operand, depth + 1) : undefined;
      if (node.childForFieldName('operator')?.type === '-' && inner?.kind === 'value' && typeof inner.value === 'number')
        return { kind: 'value', value: -inner.value };
      return { kind: 'other', text: text() };
    }
    case 'true':
    case 'false':
      return { kind: 'value', value: node.type === 'true' };
    case 'none':
      return { kind: 'value', value: null };
    case 'ellipsis':
      return { kind: 'ellipsis' };
    case 'list':
      return { kind: 'list', items: named.map((c) => typeExprOf(c, depth + 1)) };
    default:
      return { kind: 'other', text: text() };
  }
}

/** The annotation of a parameter or field, as text and as a type. */
function annotationOf(typeNode: SyntaxNode | null | undefined): Pick<ParamInfo, 'annotation' | 'type'> {
  return typeNode ? { annotation: typeNode.text, type: typeExprOf(typeNode) } : {};
}

/** The parameters a call can pass by name, a job's input keys: neither `*args`, `**kwargs` nor one before `/`. */
export function namedParams(params: readonly ParamInfo[]): ParamInfo[] {
  return params.filter((p) => (p.kind === 'positional' && !p.positionalOnly) || p.kind === 'keyword-only');
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
        const annotation = annotationOf(p.childForFieldName('type'));
        if (inner?.type === 'list_splat_pattern') out.push({ name: inner.text.replace(/^\*/, ''), kind: 'var-positional', ...annotation });
        else if (inner?.type === 'dictionary_splat_pattern') out.push({ name: inner.text.replace(/^\*\*/, ''), kind: 'var-keyword', ...annotation });
        else out.push({ name: inner?.text ?? '', kind: keywordOnly ? 'keyword-only' : 'positional', ...annotation });
        if (inner?.type === 'list_splat_pattern') keywordOnly = true;
        break;
      }
      case 'default_parameter':
      case 'typed_default_parameter':
        out.push({
          name: p.childForFieldName('name')?.text ?? '',
          kind: keywordOnly ? 'keyword-only' : 'positional',
          ...annotationOf(p.childForFieldName('type')),
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
      case 'positional_separator':
        for (const q of out) if (q.kind === 'positional') q.positionalOnly = true;
        break;
      default:
        break; // comments carry no parameter
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
    ...returnsOf(def),
    docstring,
    summary: docstring?.split('\n')[0].trim() || undefined,
    range: rangeOf(outer),
    nameRange: rangeOf(nameNode),
    ...(body ? bodyReferences(body) : { bodyImports: [], bodyNames: [] }),
  };
  if (info.isClass && body) {
    info.methods = [];
    for (const stmt of children(body)) {
      const fn = stmt.type === 'decorated_definition' ? stmt.childForFieldName('definition') : stmt;
      if (fn?.type !== 'function_definition') continue;
      const m = functionInfo(fn, stmt);
      if (m.name.startsWith('_')) continue;
      const decorators = stmt.type === 'decorated_definition' ? children(stmt).filter((c) => c.type === 'decorator') : [];
      // A property is an attribute, not a method a job can call (the runtime lists callables only).
      if (decorators.some((d) => /^@\s*(?:[\w.]+\.)?(?:property|cached_property|setter|getter|deleter)\s*$/.test(d.text))) continue;
      const isStatic = decorators.some((d) => /^@\s*staticmethod\s*$/.test(d.text));
      if (!isStatic && m.params.length && m.params[0].kind === 'positional') m.params = m.params.slice(1);
      info.methods.push(m);
    }
    const init = children(body).find((s) => s.type === 'function_definition' && s.childForFieldName('name')?.text === '__init__');
    if (init) info.params = paramsOf(init.childForFieldName('parameters')).slice(1);
  }
  return info;
}

function returnsOf(def: SyntaxNode): Pick<FunctionInfo, 'returnAnnotation' | 'returns'> {
  const node = def.type === 'function_definition' ? def.childForFieldName('return_type') : null;
  return node ? { returnAnnotation: node.text, returns: typeExprOf(node) } : {};
}

/** The last segment of a dotted name: `typing.TypedDict` -> `TypedDict`. */
export const lastSegment = (name: string) => name.slice(name.lastIndexOf('.') + 1);

/** The `from m import a` statements inside a body, and the names it reads (not attributes, not keywords): the endpoint functions it may call. */
function bodyReferences(body: SyntaxNode): Pick<FunctionInfo, 'bodyImports' | 'bodyNames'> {
  const bodyImports: FunctionInfo['bodyImports'] = [];
  const names = new Set<string>();
  walkCursor(body, (c) => {
    const type = c.nodeType;
    if (type === 'identifier') {
      // Not `x.name` (an attribute) nor `name=` (a keyword, or a definition's own name): reads only.
      const field = c.currentFieldName;
      if (field !== 'attribute' && field !== 'name') names.add(c.nodeText);
      return false;
    }
    if (type === 'string' || type === 'import_statement') return false;
    if (type !== 'import_from_statement') return true;
    const n = c.currentNode;
    const moduleNode = n.childForFieldName('module_name');
    if (!moduleNode) return false;
    const imported = children(n)
      .filter((x) => x.id !== moduleNode.id)
      .map((x) => (x.type === 'aliased_import' ? x.childForFieldName('name')?.text : x.text) ?? '')
      .filter(Boolean);
    bodyImports.push({ module: moduleNode.text, names: imported });
    return false;
  });
  return { bodyImports, bodyNames: [...names] };
}
