// The nested-endpoint rule: a declaration below the module level would never be served, so it is an error.
import type { SyntaxNode } from './parser';
import type { EndpointSpec } from './model';
import type { DiagnosticSink } from './rules';
import type { Statement } from './segments';
import type { StatementFacts } from './facts';
import { children, isExtra, rangeOf, walk } from './syntax';

/** Module-level blocks whose code runs at import, but whose declarations the analysis does not read. */
const BLOCKS: Record<string, string> = {
  if_statement: 'an if block',
  try_statement: 'a try block',
  with_statement: 'a with block',
  for_statement: 'a for loop',
  while_statement: 'a while loop',
  match_statement: 'a match block',
};

/**
 * `@Endpoint(...)` or `@api.post(...)` on a method or a function inside another, or inside a module-level block: only module-level functions and
 * classes are served (the build, the dev server and the workers look there), so one found deeper is an error rather
 * than an endpoint that silently is not there.
 */
export function checkNestedEndpoints(
  statements: Iterable<Statement<StatementFacts>>,
  isEndpointCallee: (fn: SyntaxNode | null) => boolean,
  lbVars: ReadonlyMap<string, EndpointSpec>,
  sink: DiagnosticSink,
): void {
  for (const ref of statements) {
    const t = ref.facts.type;
    const block = BLOCKS[t];
    if (!block && t !== 'class_definition' && t !== 'function_definition' && t !== 'decorated_definition') continue;
    const top = ref.node();
    const body = block ? top : (t === 'decorated_definition' ? top.childForFieldName('definition') : top)?.childForFieldName('body');
    if (!body) continue;
    walk(body, (n) => {
      if (n.type === 'string') return false;
      if (n.type !== 'decorated_definition') return true;
      const def = n.childForFieldName('definition');
      for (const d of children(n)) {
        if (d.type !== 'decorator') continue;
        const expr = d.namedChildren.find((c) => c && !isExtra(c)) ?? null;
        const fn = expr?.type === 'call' ? expr.childForFieldName('function') : expr;
        const route = fn?.type === 'attribute' && lbVars.has(fn.childForFieldName('object')?.text ?? '');
        if (!isEndpointCallee(fn) && !route) continue;
        const name = def?.childForFieldName('name')?.text ?? 'this definition';
        const where = block
          ? `inside ${block}`
          : top.type === 'class_definition' || (t === 'decorated_definition' && top.childForFieldName('definition')?.type === 'class_definition')
            ? 'a method'
            : 'a nested function';
        const why = block
          ? 'Strato finds endpoints at the top level of a file (the build does not run it)'
          : 'Strato serves only module-level functions and classes';
        sink.add(
          'nested-endpoint',
          `${name} is ${where}: ${why}, so this ${route ? 'route' : 'endpoint'} would not exist; move ${name} to the top level of the file`,
          rangeOf(d),
        );
      }
      return true;
    });
  }
}
