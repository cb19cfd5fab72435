// Analysis of one Python file: finds `@Endpoint(...)` functions and classes, load-balanced endpoint objects
// and their routes, module-level imports, and reports every single-file rule. Works on any text, even broken.
import type { Parser, SyntaxNode } from './parser';
import { ModuleTree, type Statement } from './segments';
import { emptyBindings, type Diagnostic, type EndpointSpec, type FileModel, type FunctionInfo, type Range, type Position } from './model';
import { assignedValue, calleeOf, keywordArg, statementFacts, type Callee, type StatementFacts } from './facts';
import type { EvalScope } from './values';
import { children, functionInfo, isExtra, rangeOf, walk } from './syntax';
import { typeDeclarationOf } from './typeDeclarations';
import { parameterMessage } from '../catalog/parameterRules';
import { referencePackage } from '../catalog';
import { DiagnosticSink } from './rules';
import { checkReferenceImports, checkShadowedModule, checkTopLevelImports } from './imports';
import { checkRoutes, readRoute, type RouteTarget } from './routes';
import { checkNestedEndpoints } from './nested';
import { endpointFromCall } from './endpointCall';

export interface AnalyzeOptions {
  /** Top-level module names of the project itself (files and packages at the root), never "third-party". */
  localModules?: ReadonlySet<string>;
}

export function moduleNameOf(file: string): string {
  const noExt = file.replace(/\\/g, '/').replace(/\.pyi?$/, '');
  return noExt
    .replace(/\/__init__$/, '')
    .split('/')
    .join('.');
}

/** The absolute module an import in module `from` names (`.models` from `pkg.worker` -> `pkg.models`). */
export function resolveModule(from: string, imported: string): string {
  if (!imported.startsWith('.')) return imported;
  const dots = /^\.+/.exec(imported)![0].length;
  const base = from.split('.').slice(0, -dots);
  const rest = imported.slice(dots);
  return [...base, ...(rest ? [rest] : [])].join('.');
}

export function analyzeText(parser: Parser, file: string, text: string, options: AnalyzeOptions = {}): FileModel {
  const tree = ModuleTree.parse(parser, text);
  if (!tree) throw new Error(`tree-sitter could not parse ${file}`);
  try {
    return analyzeTree(file, tree, text, options);
  } finally {
    tree.delete();
  }
}

export function analyzeTree(file: string, tree: ModuleTree, text: string, options: AnalyzeOptions = {}): FileModel {
  const sink = new DiagnosticSink(file);
  const model: FileModel = {
    file,
    module: moduleNameOf(file),
    endpoints: [],
    types: [],
    imports: [],
    diagnostics: sink.items,
    usesStrato: false,
    strato: emptyBindings(),
  };
  // Every way of importing Endpoint names the module, so a file without the word needs no further look.
  const mentionsStrato = text.includes('strato');
  if (tree.hasError) reportSyntaxErrors(tree.errorRoots(), sink);
  checkShadowedModule(file, sink);
  // Types a function's hints name may live in a module of their own, which need not mention strato.
  if (text.includes('TypedDict') || text.includes('dataclass') || text.includes('BaseModel')) model.types = typeDeclarations(tree.statements());
  // A file written for the reference product mentions its package instead, and is told to import strato.
  if (!mentionsStrato && !text.includes(referencePackage)) return model;

  const statements = tree.statementFacts(`statement\u0000${file}`, (stmt) => statementFacts(stmt, file));
  const constants = new Map<string, Array<Statement<StatementFacts>>>();
  const values = new Map<Statement<StatementFacts>, SyntaxNode | null>();
  const valueOf = (ref: Statement<StatementFacts>) => {
    if (!values.has(ref)) values.set(ref, assignedValue(ref.node()));
    return values.get(ref) ?? undefined;
  };
  const scope: EvalScope = {
    // The binding above the use, as Python reads it when the decorator runs: one assigned again below does not count,
    // and one assigned only below is no value (Python raises NameError).
    constants: {
      get: (name, row) => {
        let above: Statement<StatementFacts> | undefined;
        for (const ref of constants.get(name) ?? []) if (ref.facts.assignment!.row < row) above = ref;
        return above && valueOf(above);
      },
    },
    enumAliases: new Map(),
    moduleAliases: new Set(),
    classAliases: new Map(),
  };
  const endpointNames = new Set<string>();
  for (const { facts } of statements) {
    const imp = facts.import;
    if (!imp) continue;
    model.imports.push(imp.info);
    for (const name of imp.endpointNames) endpointNames.add(name);
    for (const [alias, name] of imp.enumAliases) scope.enumAliases.set(alias, name);
    for (const alias of imp.moduleAliases) scope.moduleAliases.add(alias);
    for (const [alias, name] of imp.classAliases) scope.classAliases!.set(alias, name);
  }
  checkReferenceImports(model, sink);
  model.usesStrato = endpointNames.size > 0 || scope.moduleAliases.size > 0;
  model.strato = {
    endpoint: [...endpointNames],
    enums: Object.fromEntries(scope.enumAliases),
    modules: [...scope.moduleAliases],
    classes: Object.fromEntries(scope.classAliases!),
  };
  if (!model.usesStrato) return model;

  const isEndpoint = (c: Callee | undefined): boolean =>
    c?.identifier !== undefined ? endpointNames.has(c.identifier) : c?.attribute === 'Endpoint' && c.object !== undefined && scope.moduleAliases.has(c.object);
  const isEndpointCallee = (fn: SyntaxNode | null) => isEndpoint(calleeOf(fn));

  // First pass: constants and load-balanced endpoint objects (`api = Endpoint(...)`, and `alias = api`). A variable
  // bound twice serves, below each binding, the endpoint of that binding, as Python runs it.
  const lbByVar = new Map<string, EndpointSpec>();
  const lbBindings = new Map<string, Array<{ row: number; ep: EndpointSpec }>>();
  const bindLb = (variable: string, row: number, ep: EndpointSpec) => {
    lbByVar.set(variable, ep);
    lbBindings.set(variable, [...(lbBindings.get(variable) ?? []), { row, ep }]);
  };
  const constantKeys: Array<[string, number, number, string]> = [];
  for (const ref of statements) {
    const a = ref.facts.assignment;
    if (!a) continue;
    if (isEndpoint(a.callee)) {
      // `Endpoint(id="...")` connects to an endpoint that exists: a client, not a declaration.
      if (a.client) {
        sink.items.push(...a.client);
        continue;
      }
      const ep = endpointFromCall(valueOf(ref)!, 'LOAD_BALANCED', a.name, model, scope, sink);
      ep.variable = a.name;
      bindLb(a.name, a.row, ep);
      model.endpoints.push(ep);
    } else if (lbByVar.has(a.text)) {
      bindLb(a.name, a.row, lbByVar.get(a.text)!);
    } else {
      constants.set(a.name, [...(constants.get(a.name) ?? []), ref]);
      constantKeys.push([a.name, a.row, a.column, a.text]);
    }
  }

  // Second pass: decorated functions and classes. What one declares depends only on its own text and rows and on the
  // scope, so an open document's unchanged statements replay what they found after the previous edit.
  const routeAttempts = new Set<EndpointSpec>();
  /** The endpoint a variable holds at a row: its binding above that row (undefined: the statement is above them all). */
  const lbAt = (variable: string, row: number) => {
    let ep: EndpointSpec | undefined;
    for (const b of lbBindings.get(variable) ?? []) if (b.row < row) ep = b.ep;
    return ep;
  };
  const key = JSON.stringify([
    file,
    [...endpointNames],
    [...scope.enumAliases],
    [...scope.moduleAliases],
    [...scope.classAliases!],
    [...lbByVar.keys()],
    constantKeys,
  ]);
  const at = { file, module: model.module, scope, isEndpointCallee, lbVars: lbByVar };
  for (const ref of statements) {
    if (ref.facts.type !== 'decorated_definition') continue;
    const declared = ref.derived(key, () => readDecorated(ref.node(), at));
    sink.items.push(...declared.diagnostics);
    model.endpoints.push(...declared.endpoints);
    const row = ref.facts.defines?.row ?? Infinity;
    for (const { variable, route } of declared.routes) {
      const ep = lbAt(variable, row);
      if (!ep) continue;
      routeAttempts.add(ep);
      if (!route) continue;
      ep.routes.push(route);
      if (!ep.functions.some((f) => f.name === route.function.name)) ep.functions.push(route.function);
    }
    for (const { variable, fn, range } of declared.served) {
      const ep = lbAt(variable, row);
      if (ep) serveWith(ep, fn, range, sink);
    }
  }

  for (const ep of new Set([...lbBindings.values()].flat().map((b) => b.ep))) {
    if (ep.kind === 'LOAD_BALANCED') checkRoutes(ep, routeAttempts.has(ep), sink);
    else if (ep.routes.length)
      sink.add(
        'invalid-type',
        `endpoint "${ep.name}" has routes and also serves ${ep.functions[0].name}: a load-balanced endpoint cannot also decorate a function; ` +
          `give ${ep.functions[0].name} its own Endpoint(...)`,
        ep.callRange,
      );
  }
  checkRebound(model, statements, sink);
  // A nested decorator is an indented line that starts with @: a file without one needs no walk (most files).
  if (/^[ \t]+@/m.test(text)) checkNestedEndpoints(statements, isEndpointCallee, lbByVar, sink);
  if (model.endpoints.length) checkTopLevelImports(model, tree, options.localModules, sink);
  sink.items.sort(byPosition);
  return model;
}

/**
 * A handler imports its endpoint's function or class by name from the module: a name bound again below the definition
 * (another `def` of that name, an assignment) would be what the worker runs. Each such definition is an error.
 */
function checkRebound(model: FileModel, statements: ReadonlyArray<Statement<StatementFacts>>, sink: DiagnosticSink): void {
  const rows = new Map<string, number[]>();
  for (const { facts } of statements) {
    const bound = facts.defines ?? facts.assignment;
    if (bound) rows.set(bound.name, [...(rows.get(bound.name) ?? []), bound.row]);
  }
  const served = model.endpoints.flatMap((ep) => ep.functions.map((fn) => ({ ep, fn })));
  for (const { ep, fn } of served) {
    const later = rows.get(fn.name)?.find((r) => r > fn.nameRange.start.line);
    if (later === undefined) continue;
    sink.add(
      'redefined-function',
      `${fn.name} is bound again at line ${later + 1}: the worker of endpoint "${ep.name}" imports ${fn.name} from ${model.module} by name and ` +
        `would run what line ${later + 1} binds, not this ${fn.isClass ? 'class' : 'function'}; give one of them another name.`,
      fn.nameRange,
    );
  }
}

/**
 * `worker = Endpoint(...)` and then `@worker` on a function or class: the endpoint is queue-based and serves it, as the
 * Python package has it (named after the function when the call gives no name). A second one is refused there too.
 */
function serveWith(ep: EndpointSpec, fn: FunctionInfo, range: Range, sink: DiagnosticSink): void {
  if (ep.kind === 'QUEUE') {
    sink.add(
      'invalid-type',
      `endpoint "${ep.name}" already serves ${ep.functions[0].name}: a queue-based endpoint has one function or class; give ${fn.name} its own Endpoint(name=...)`,
      range,
    );
    return;
  }
  ep.kind = 'QUEUE';
  if (!ep.args.name) ep.name = fn.name;
  ep.functions = [fn];
}

/** What one decorated definition declares: queue endpoints, routes (and route attempts) of endpoint variables. */
interface Declared {
  diagnostics: Diagnostic[];
  endpoints: EndpointSpec[];
  routes: RouteTarget[];
  /** `@worker` on a function or class, `worker = Endpoint(...)` above: that endpoint serves it, queue-based. */
  served: Array<{ variable: string; fn: FunctionInfo; range: Range }>;
}

interface DeclarationScope {
  file: string;
  module: string;
  scope: EvalScope;
  isEndpointCallee: (fn: SyntaxNode | null) => boolean;
  lbVars: ReadonlyMap<string, unknown>;
}

function readDecorated(stmt: SyntaxNode, at: DeclarationScope): Declared {
  const sink = new DiagnosticSink(at.file);
  const out: Declared = { diagnostics: sink.items, endpoints: [], routes: [], served: [] };
  const def = stmt.childForFieldName('definition');
  if (!def) return out;
  for (const dec of children(stmt).filter((c) => c.type === 'decorator')) {
    const expr = dec.namedChildren.find((c) => c && !isExtra(c));
    if (!expr) continue;
    if (expr.type === 'call' && at.isEndpointCallee(expr.childForFieldName('function'))) {
      const idArg = keywordArg(expr, 'id');
      if (idArg) {
        sink.add('id-with-function', parameterMessage('id-with-function'), rangeOf(idArg));
        continue;
      }
      const fn = functionInfo(def, stmt);
      const ep = endpointFromCall(expr, 'QUEUE', fn.name, at, at.scope, sink);
      ep.functions.push(fn);
      // Methods a base class brings are not known here: only a class with none is held to it (its workers would not start).
      if (fn.isClass && !fn.methods?.length && !def.childForFieldName('superclasses'))
        sink.add('class-without-method', parameterMessage('class-without-method', { name: fn.name }), fn.nameRange);
      out.endpoints.push(ep);
    } else if (at.isEndpointCallee(expr)) {
      sink.add('invalid-type', 'Endpoint must be called: write @Endpoint(name="...", ...) with parentheses.', rangeOf(dec));
    } else if (expr.type === 'identifier' && at.lbVars.has(expr.text)) {
      out.served.push({ variable: expr.text, fn: functionInfo(def, stmt), range: rangeOf(dec) });
    } else if (expr.type === 'call') {
      const target = readRoute(expr, dec, def, stmt, at.lbVars, sink);
      if (target) out.routes.push(target);
    }
  }
  return out;
}

function typeDeclarations(statements: readonly SyntaxNode[]): FileModel['types'] {
  const out: FileModel['types'] = [];
  const typedDicts = new Set<string>();
  const models = new Set<string>();
  for (const stmt of statements) {
    const def = stmt.type === 'decorated_definition' ? stmt.childForFieldName('definition') : stmt;
    if (def?.type !== 'class_definition') continue;
    const decl = typeDeclarationOf(def, stmt, typedDicts, models);
    if (!decl) continue;
    if (decl.kind === 'TypedDict') typedDicts.add(decl.name);
    if (decl.kind === 'BaseModel') models.add(decl.name);
    out.push(decl);
  }
  return out;
}

function byPosition(a: { range: { start: Position } }, b: { range: { start: Position } }): number {
  return a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character;
}

function reportSyntaxErrors(roots: readonly SyntaxNode[], sink: DiagnosticSink): void {
  let count = 0;
  for (const root of roots) {
    if (count >= 10) return;
    if (!root.hasError) continue;
    walk(root, (n) => {
      if (count >= 10) return false;
      if (n.isMissing) {
        count++;
        sink.add('syntax-error', `syntax error: missing ${n.type}; complete the statement.`, rangeOf(n));
        return false;
      }
      if (n.type === 'ERROR') {
        count++;
        const firstLine = n.text.split('\n')[0].slice(0, 40);
        sink.add('syntax-error', `syntax error near "${firstLine}"; check the brackets, quotes, colons and indentation.`, rangeOf(n));
        return false;
      }
      return n.hasError;
    });
  }
}
