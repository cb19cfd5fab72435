// Analysis of one Python file: finds `@Endpoint(...)` functions and classes, load-balanced endpoint objects
// and their routes, module-level imports, and reports every single-file rule. Works on any text, even broken.
import type { Parser, SyntaxNode } from './parser';
import { ModuleTree } from './segments';
import {
  emptyBindings,
  type ConfigValue,
  type DynamicValue,
  type EndpointKind,
  type EndpointSpec,
  type FileModel,
  type HttpMethod,
  type ImportInfo,
  type Position,
  type RouteInfo,
} from './model';
import { evaluate, type EvalScope } from './values';
import { children, functionInfo, rangeOf, typeDeclarationOf, walk } from './syntax';
import { parameterMessage } from '../catalog/parameterRules';
import { DiagnosticSink, ENDPOINT_NAME, isKnownParameter, validateEndpointArgs, type EndpointArgs } from './rules';
import { checkTopLevelImports } from './imports';
import { catalogConstants, didYouMean, enumClasses, HTTP_METHODS, valueClasses } from '../catalog';

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
  for (const stmt of statements) {
    if (stmt.type === 'import_statement' || stmt.type === 'import_from_statement' || stmt.type === 'future_import_statement') {
      model.imports.push(readImport(stmt, scope, endpointNames));
    }
  }
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
  for (const stmt of statements) {
    const assign = stmt.type === 'expression_statement' ? stmt.namedChildren[0] : null;
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

  // Second pass: decorated functions and classes.
  const routeAttempts = new Set<string>();
  for (const stmt of statements) {
    if (stmt.type !== 'decorated_definition') continue;
    const def = stmt.childForFieldName('definition');
    if (!def) continue;
    for (const dec of children(stmt).filter((c) => c.type === 'decorator')) {
      const expr = dec.namedChildren.find((c) => c && c.type !== 'comment');
      if (!expr) continue;
      if (expr.type === 'call' && isEndpointCallee(expr.childForFieldName('function'))) {
        const idArg = keywordArg(expr, 'id');
        if (idArg) {
          sink.add('id-with-function', parameterMessage('id-with-function'), rangeOf(idArg));
          continue;
        }
        const fn = functionInfo(def, stmt);
        const ep = endpointFromCall(expr, 'QUEUE', fn.name, model, scope, sink);
        ep.functions.push(fn);
        model.endpoints.push(ep);
      } else if (isEndpointCallee(expr)) {
        sink.add('invalid-type', 'Endpoint must be called: write @Endpoint(name="...", ...) with parentheses.', rangeOf(dec));
      } else if (expr.type === 'call') {
        const target = readRoute(expr, dec, def, stmt, lbByVar, sink);
        if (target) routeAttempts.add(target);
      }
    }
  }

  for (const [variable, ep] of lbByVar) checkRoutes(ep, routeAttempts.has(variable), sink);
  if (model.endpoints.length) checkTopLevelImports(model, statements, options.localModules, sink);
  sink.items.sort(byPosition);
  return model;
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

function endpointFromCall(call: SyntaxNode, kind: EndpointKind, defaultName: string, model: FileModel, scope: EvalScope, sink: DiagnosticSink): EndpointSpec {
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

/** Reads `@api.<method>("/path")`; returns the endpoint variable when the decorator targets one. */
function readRoute(
  call: SyntaxNode,
  dec: SyntaxNode,
  def: SyntaxNode,
  stmt: SyntaxNode,
  lbByVar: Map<string, EndpointSpec>,
  sink: DiagnosticSink,
): string | undefined {
  const fn = call.childForFieldName('function');
  if (fn?.type !== 'attribute') return undefined;
  const obj = fn.childForFieldName('object');
  const attr = fn.childForFieldName('attribute');
  if (obj?.type !== 'identifier' || !attr) return undefined;
  const ep = lbByVar.get(obj.text);
  if (!ep) return undefined;
  const method = attr.text.toUpperCase();
  const args = call.childForFieldName('arguments');
  const pathNode = args
    ? (children(args).find((c) => c.type !== 'comment' && c.type !== 'keyword_argument') ??
      children(args)
        .find((c) => c.type === 'keyword_argument' && c.childForFieldName('name')?.text === 'path')
        ?.childForFieldName('value') ??
      null)
    : null;
  if (!(HTTP_METHODS as readonly string[]).includes(method) || attr.text !== attr.text.toLowerCase()) {
    const guess = didYouMean(
      attr.text.toLowerCase(),
      HTTP_METHODS.map((m) => m.toLowerCase()),
    );
    sink.add(
      'unknown-method',
      `${obj.text}.${attr.text} is not a route method: use ` +
        `${HTTP_METHODS.map((m) => `.${m.toLowerCase()}`).join(', ')}${guess ? ` (did you mean .${guess}?)` : ''}.`,
      rangeOf(attr),
      {
        fix: guess ? { kind: 'replace-value', range: rangeOf(attr), replacement: guess } : undefined,
      },
    );
    return obj.text;
  }
  const route: RouteInfo = {
    method: method as HttpMethod,
    path: '',
    pathRange: pathNode ? rangeOf(pathNode) : rangeOf(call),
    range: rangeOf(dec),
    function: functionInfo(def, stmt),
  };
  const r = pathNode?.type === 'string' ? evaluate(pathNode, { constants: new Map(), enumAliases: new Map(), moduleAliases: new Set() }) : undefined;
  if (!r || !r.ok || typeof r.value !== 'string') {
    sink.add('not-literal', `the route path must be a string literal such as "/process".`, route.pathRange);
    return obj.text;
  }
  route.path = r.value;
  if (!route.path.startsWith('/')) {
    sink.add('route-path-slash', `path must start with '/', got: ${route.path}; write "/${route.path}".`, route.pathRange, {
      fix: { kind: 'add-slash', range: route.pathRange, replacement: JSON.stringify('/' + route.path) },
    });
  } else if (route.path === '/ping' || route.path === '/ping/') {
    sink.add('route-path-reserved', `path '/ping' is reserved for the platform's health check: choose another path, e.g. "/health".`, route.pathRange);
  }
  ep.routes.push(route);
  if (!ep.functions.some((f) => f.name === route.function.name)) ep.functions.push(route.function);
  return obj.text;
}

function checkRoutes(ep: EndpointSpec, attempted: boolean, sink: DiagnosticSink): void {
  if (ep.routes.length === 0 && !attempted) {
    sink.add(
      'lb-no-routes',
      `load-balanced endpoint "${ep.name}" has no routes: add one with @${ep.variable}.post("/path") (or .get, .put, .patch, .delete) on a function.`,
      ep.callRange,
    );
    return;
  }
  const seen = new Map<string, RouteInfo>();
  for (const r of ep.routes) {
    if (!r.path) continue;
    const key = `${r.method} ${r.path}`;
    const first = seen.get(key);
    if (first) {
      sink.add('duplicate-route', `duplicate route: ${key} (already registered to '${first.function.name}'); change the path or the method.`, r.pathRange, {
        related: [{ file: sink.file, range: first.pathRange, message: `${key} is first declared here` }],
      });
    } else seen.set(key, r);
  }
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
