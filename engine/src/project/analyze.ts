// Analysis of one Python file: finds `@Endpoint(...)` functions and classes, load-balanced endpoint objects
// and their routes, module-level imports, and reports every single-file rule. Works on any text, even broken.
import type { Parser, SyntaxNode } from './parser';
import { ModuleTree } from './segments';
import {
  emptyBindings,
  type ConfigValue,
  type Diagnostic,
  type DynamicValue,
  type EndpointKind,
  type EndpointSpec,
  type FileModel,
  type ImportInfo,
  type Position,
} from './model';
import { evaluate, type EvalScope } from './values';
import { children, functionInfo, rangeOf, typeDeclarationOf, walk } from './syntax';
import { parameterMessage } from '../catalog/parameterRules';
import { DiagnosticSink, ENDPOINT_NAME, isKnownParameter, validateEndpointArgs, type EndpointArgs } from './rules';
import { checkTopLevelImports } from './imports';
import { checkRoutes, readRoute, type RouteTarget } from './routes';
import { catalogConstants, enumClasses, valueClasses } from '../catalog';

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

const STRATO_ENUMS = Object.keys(enumClasses);
const IMPORTS = new Set(['import_statement', 'import_from_statement', 'future_import_statement']);
/** Names imported from strato that the analysis evaluates: value classes and catalog constants. */
const STRATO_VALUES: readonly string[] = [...valueClasses, ...Object.keys(catalogConstants)];

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
  const statements = tree.statements();
  if (tree.hasError) reportSyntaxErrors(tree.roots(), sink);
  // Types a function's hints name may live in a module of their own, which need not mention strato.
  if (text.includes('TypedDict') || text.includes('dataclass')) model.types = typeDeclarations(statements);
  if (!mentionsStrato) return model;

  const scope: EvalScope = { constants: new Map(), enumAliases: new Map(), moduleAliases: new Set(), classAliases: new Map() };
  const endpointNames = new Set<string>();
  // Each read of a node's type crosses into WebAssembly: read the statements' once.
  const types = statements.map((stmt) => stmt.type);
  statements.forEach((stmt, i) => {
    if (IMPORTS.has(types[i])) model.imports.push(readImport(stmt, scope, endpointNames));
  });
  model.usesStrato = endpointNames.size > 0 || scope.moduleAliases.size > 0;
  model.strato = {
    endpoint: [...endpointNames],
    enums: Object.fromEntries(scope.enumAliases),
    modules: [...scope.moduleAliases],
    classes: Object.fromEntries(scope.classAliases!),
  };
  if (!model.usesStrato) return model;

  const isEndpointCallee = (fn: SyntaxNode | null): boolean => {
    if (!fn) return false;
    if (fn.type === 'identifier') return endpointNames.has(fn.text);
    if (fn.type === 'attribute') {
      const obj = fn.childForFieldName('object');
      return fn.childForFieldName('attribute')?.text === 'Endpoint' && obj?.type === 'identifier' && scope.moduleAliases.has(obj.text);
    }
    return false;
  };

  // First pass: constants and load-balanced endpoint objects (`api = Endpoint(...)`).
  const lbByVar = new Map<string, EndpointSpec>();
  for (const [i, stmt] of statements.entries()) {
    const assign = types[i] === 'expression_statement' ? stmt.namedChildren[0] : null;
    if (assign?.type !== 'assignment') continue;
    const left = assign.childForFieldName('left');
    const right = assign.childForFieldName('right');
    if (left?.type !== 'identifier' || !right) continue;
    if (right.type === 'call' && isEndpointCallee(right.childForFieldName('function'))) {
      // `Endpoint(id="...")` connects to an endpoint that exists: a client, not a declaration.
      if (keywordArg(right, 'id')) {
        checkClientReference(right, sink);
        continue;
      }
      const ep = endpointFromCall(right, 'LOAD_BALANCED', left.text, model, scope, sink);
      ep.variable = left.text;
      lbByVar.set(left.text, ep);
      model.endpoints.push(ep);
    } else {
      scope.constants.set(left.text, right);
    }
  }

  // Second pass: decorated functions and classes. What one declares depends only on its own text and rows and on the
  // scope, so an open document's unchanged statements replay what they found after the previous edit.
  const routeAttempts = new Set<string>();
  const key = scopeKey(scope, endpointNames, lbByVar);
  const found = { file, module: model.module, scope, isEndpointCallee, lbVars: lbByVar };
  for (const [i, stmt] of statements.entries()) {
    if (types[i] !== 'decorated_definition') continue;
    const declared = structuredClone(tree.derived(stmt, key, () => readDecorated(stmt, found)));
    sink.items.push(...declared.diagnostics);
    model.endpoints.push(...declared.endpoints);
    for (const { variable, route } of declared.routes) {
      routeAttempts.add(variable);
      if (!route) continue;
      const ep = lbByVar.get(variable)!;
      ep.routes.push(route);
      if (!ep.functions.some((f) => f.name === route.function.name)) ep.functions.push(route.function);
    }
  }

  for (const [variable, ep] of lbByVar) checkRoutes(ep, routeAttempts.has(variable), sink);
  if (model.endpoints.length) checkTopLevelImports(model, statements, options.localModules, sink, (stmt, key, compute) => tree.derived(stmt, key, compute));
  sink.items.sort(byPosition);
  return model;
}

/** What one decorated definition declares: queue endpoints, routes (and route attempts) of endpoint variables. */
interface Declared {
  diagnostics: Diagnostic[];
  endpoints: EndpointSpec[];
  routes: RouteTarget[];
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
  const out: Declared = { diagnostics: sink.items, endpoints: [], routes: [] };
  const def = stmt.childForFieldName('definition');
  if (!def) return out;
  for (const dec of children(stmt).filter((c) => c.type === 'decorator')) {
    const expr = dec.namedChildren.find((c) => c && c.type !== 'comment');
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
      out.endpoints.push(ep);
    } else if (at.isEndpointCallee(expr)) {
      sink.add('invalid-type', 'Endpoint must be called: write @Endpoint(name="...", ...) with parentheses.', rangeOf(dec));
    } else if (expr.type === 'call') {
      const target = readRoute(expr, dec, def, stmt, at.lbVars, sink);
      if (target) out.routes.push(target);
    }
  }
  return out;
}

/** Everything of the file a declaration reads besides its own statement (constants with their rows: values point into them). */
function scopeKey(scope: EvalScope, endpointNames: ReadonlySet<string>, lbVars: ReadonlyMap<string, unknown>): string {
  const constants = [...scope.constants].map(([name, node]) => [name, node.startPosition.row, node.startPosition.column, node.text]);
  return JSON.stringify([[...endpointNames], [...scope.enumAliases], [...scope.moduleAliases], [...(scope.classAliases ?? [])], [...lbVars.keys()], constants]);
}

function typeDeclarations(statements: readonly SyntaxNode[]): FileModel['types'] {
  const out: FileModel['types'] = [];
  const typedDicts = new Set<string>();
  for (const stmt of statements) {
    const def = stmt.type === 'decorated_definition' ? stmt.childForFieldName('definition') : stmt;
    if (def?.type !== 'class_definition') continue;
    const decl = typeDeclarationOf(def, stmt, typedDicts);
    if (!decl) continue;
    if (decl.kind === 'TypedDict') typedDicts.add(decl.name);
    out.push(decl);
  }
  return out;
}

function byPosition(a: { range: { start: Position } }, b: { range: { start: Position } }): number {
  return a.range.start.line - b.range.start.line || a.range.start.character - b.range.start.character;
}

function readImport(stmt: SyntaxNode, scope: EvalScope, endpointNames: Set<string>): ImportInfo {
  const info: ImportInfo = { module: '', names: [], topLevel: '', range: rangeOf(stmt), text: stmt.text };
  if (stmt.type === 'future_import_statement') {
    info.module = info.topLevel = '__future__';
    return info;
  }
  if (stmt.type === 'import_statement') {
    const modules: string[] = [];
    for (const c of children(stmt)) {
      const dotted = c.type === 'aliased_import' ? c.childForFieldName('name') : c;
      const alias = c.type === 'aliased_import' ? c.childForFieldName('alias')?.text : undefined;
      if (!dotted) continue;
      modules.push(dotted.text);
      const bound = alias ?? dotted.text.split('.')[0];
      info.names.push(bound);
      if (dotted.text.split('.')[0] === 'strato' && (alias === undefined || dotted.text === 'strato')) scope.moduleAliases.add(bound);
    }
    info.module = modules.join(', ');
    info.topLevel = modules[0]?.split('.')[0] ?? '';
    return info;
  }
  // import_from_statement
  const moduleNode = stmt.childForFieldName('module_name');
  info.module = moduleNode?.text ?? '';
  info.topLevel = info.module.startsWith('.') ? '' : info.module.split('.')[0];
  const fromStrato = info.topLevel === 'strato';
  for (const c of children(stmt)) {
    if (moduleNode && c.id === moduleNode.id) continue;
    if (c.type === 'wildcard_import') {
      info.names.push('*');
      if (fromStrato) {
        endpointNames.add('Endpoint');
        for (const e of STRATO_ENUMS) scope.enumAliases.set(e, e);
        for (const v of STRATO_VALUES) scope.classAliases!.set(v, v);
      }
      continue;
    }
    const nameNode = c.type === 'aliased_import' ? c.childForFieldName('name') : c;
    const alias = c.type === 'aliased_import' ? c.childForFieldName('alias')?.text : undefined;
    if (!nameNode || (nameNode.type !== 'dotted_name' && nameNode.type !== 'identifier')) continue;
    const bound = alias ?? nameNode.text;
    info.names.push(bound);
    if (fromStrato && nameNode.text === 'Endpoint') endpointNames.add(bound);
    if (fromStrato && STRATO_ENUMS.includes(nameNode.text)) scope.enumAliases.set(bound, nameNode.text);
    if (fromStrato && STRATO_VALUES.includes(nameNode.text)) scope.classAliases!.set(bound, nameNode.text);
  }
  return info;
}

function endpointFromCall(
  call: SyntaxNode,
  kind: EndpointKind,
  defaultName: string,
  model: { file: string; module: string },
  scope: EvalScope,
  sink: DiagnosticSink,
): EndpointSpec {
  const a: EndpointArgs = { args: {}, dynamicArgs: {}, unknownEnums: [], unknownParams: [] };
  const argList = call.childForFieldName('arguments');
  let positional = 0;
  const seenKeys = new Set<string>();
  for (const arg of argList ? children(argList) : []) {
    if (arg.type === 'comment') continue;
    let key: string;
    let valueNode: SyntaxNode | null;
    if (arg.type === 'keyword_argument') {
      key = arg.childForFieldName('name')?.text ?? '';
      valueNode = arg.childForFieldName('value');
    } else if (arg.type === 'list_splat' || arg.type === 'dictionary_splat') {
      sink.add(
        'not-literal',
        'Endpoint arguments must be written out as name=value: the build reads them without running your code, so *args and **kwargs cannot be used.',
        rangeOf(arg),
      );
      continue;
    } else {
      if (positional++ > 0) {
        sink.add('invalid-type', 'Endpoint takes only name as a positional argument: pass the others as keywords, e.g. gpu=GpuGroup.ADA_24.', rangeOf(arg));
        continue;
      }
      key = 'name';
      valueNode = arg;
    }
    if (!valueNode) continue;
    if (seenKeys.has(key)) {
      sink.add('duplicate-argument', `${key} is given more than once (Python refuses a repeated keyword argument): keep one.`, rangeOf(arg));
      continue;
    }
    seenKeys.add(key);
    if (!isKnownParameter(key)) {
      a.unknownParams.push({ name: key, range: rangeOf(arg.type === 'keyword_argument' ? arg.childForFieldName('name')! : arg) });
      continue;
    }
    const r = evaluate(valueNode, scope);
    if (r.ok) {
      a.args[key] = { value: r.value, argRange: rangeOf(arg), valueRange: rangeOf(valueNode), source: r.source, text: valueNode.text } satisfies ConfigValue;
    } else if (r.reason === 'unknown-enum') {
      a.unknownEnums.push({ param: key, range: rangeOf(r.node), enumClass: r.enumClass!, member: r.member! });
    } else {
      a.dynamicArgs[key] = { argRange: rangeOf(arg), valueRange: rangeOf(valueNode), text: valueNode.text } satisfies DynamicValue;
    }
  }
  const config = validateEndpointArgs(a, sink);
  const nameArg = a.args.name;
  let name = defaultName;
  if (nameArg && typeof nameArg.value === 'string') name = nameArg.value;
  else if (nameArg && nameArg.value !== null) sink.add('invalid-endpoint-name', `name must be a string, got ${nameArg.text}.`, nameArg.valueRange);
  const nameRange = nameArg?.valueRange ?? rangeOf(call);
  if (nameArg && typeof nameArg.value === 'string' && !ENDPOINT_NAME.test(nameArg.value)) {
    const cleaned = nameArg.value
      .replace(/[^A-Za-z0-9_-]+/g, '-')
      .replace(/^[-_]+/, '')
      .slice(0, 63);
    const rule = parameterMessage('invalid-name', { value: nameArg.text });
    sink.add('invalid-endpoint-name', cleaned ? `${rule.slice(0, -1)}, e.g. "${cleaned}".` : rule, nameRange, {
      fix:
        cleaned && ENDPOINT_NAME.test(cleaned) && nameArg.source === 'literal' ? { kind: 'rename-endpoint', range: nameRange, suggestion: cleaned } : undefined,
    });
  }
  return {
    name,
    kind,
    file: model.file,
    module: model.module,
    nameRange,
    callRange: rangeOf(call),
    args: a.args,
    dynamicArgs: a.dynamicArgs,
    config,
    functions: [],
    routes: [],
  };
}

/** The `name=value` argument of a call, if it has one. */
function keywordArg(call: SyntaxNode, name: string): SyntaxNode | undefined {
  const args = call.childForFieldName('arguments');
  return args ? children(args).find((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === name) : undefined;
}

/** `Endpoint(id=...)`: a client of an endpoint that exists; only `image` contradicts it. */
function checkClientReference(call: SyntaxNode, sink: DiagnosticSink): void {
  const image = keywordArg(call, 'image');
  if (image) sink.add('id-and-image', parameterMessage('id-and-image'), rangeOf(image));
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
