// What the analysis reads from each top-level statement on its own (its kind, the import it makes, the name it binds
// and what the value calls): plain data that ModuleTree.statementFacts keeps per statement, so that the analysis of an
// open document reads through WebAssembly only the statements an edit touched.
import type { Diagnostic, ImportInfo } from './model';
import type { SyntaxNode } from './parser';
import { DiagnosticSink } from './rules';
import { children, rangeOf } from './syntax';
import type { EvalScope } from './values';
import { parameterMessage } from '../catalog/parameterRules';
import { catalogConstants, enumClasses, valueClasses } from '../catalog';

const STRATO_ENUMS = Object.keys(enumClasses);
/** Names imported from strato that the analysis evaluates: value classes and catalog constants. */
const STRATO_VALUES: readonly string[] = [...valueClasses, ...Object.keys(catalogConstants)];
const IMPORTS = new Set(['import_statement', 'import_from_statement', 'future_import_statement']);

/** A called name: `Endpoint` (identifier) or `strato.Endpoint` (attribute of an identifier object). */
export interface Callee {
  identifier?: string;
  object?: string;
  attribute?: string;
}

/** An import and the names it binds to strato (replayed in order into the file's scope). */
export interface ImportFacts {
  info: ImportInfo;
  endpointNames: string[];
  enumAliases: Array<[string, string]>;
  moduleAliases: string[];
  classAliases: Array<[string, string]>;
}

/** `name = value`: the value as written and where; for a call, whom it calls. */
export interface AssignmentFacts {
  name: string;
  row: number;
  column: number;
  text: string;
  callee?: Callee;
  /** For a call with `id=` (a client of an endpoint that exists, when it calls Endpoint): what it reports. */
  client?: Diagnostic[];
}

export interface StatementFacts {
  type: string;
  import?: ImportFacts;
  assignment?: AssignmentFacts;
  /** A `def` or `class` at module level: the name it binds, and the row of that name. */
  defines?: { name: string; row: number };
}

const DEFINITIONS = new Set(['function_definition', 'class_definition']);

export function statementFacts(stmt: SyntaxNode, file: string): StatementFacts {
  const type = stmt.type;
  const facts: StatementFacts = { type };
  if (IMPORTS.has(type)) {
    const scope: EvalScope = { constants: new Map(), enumAliases: new Map(), moduleAliases: new Set(), classAliases: new Map() };
    const endpointNames = new Set<string>();
    const info = readImport(stmt, scope, endpointNames);
    facts.import = {
      info,
      endpointNames: [...endpointNames],
      enumAliases: [...scope.enumAliases],
      moduleAliases: [...scope.moduleAliases],
      classAliases: [...scope.classAliases!],
    };
  } else if (DEFINITIONS.has(type) || type === 'decorated_definition') {
    const def = type === 'decorated_definition' ? stmt.childForFieldName('definition') : stmt;
    const name = def && DEFINITIONS.has(def.type) ? def.childForFieldName('name') : null;
    if (name) facts.defines = { name: name.text, row: name.startPosition.row };
  } else if (type === 'expression_statement') {
    const assign = stmt.namedChildren[0];
    if (assign?.type !== 'assignment') return facts;
    const left = assign.childForFieldName('left');
    const right = assign.childForFieldName('right');
    if (left?.type !== 'identifier' || !right) return facts;
    const a: AssignmentFacts = { name: left.text, row: right.startPosition.row, column: right.startPosition.column, text: right.text };
    if (right.type === 'call') {
      a.callee = calleeOf(right.childForFieldName('function'));
      if (keywordArg(right, 'id')) {
        const sink = new DiagnosticSink(file);
        checkClientReference(right, sink);
        a.client = sink.items;
      }
    }
    facts.assignment = a;
  }
  return facts;
}

export function calleeOf(fn: SyntaxNode | null): Callee | undefined {
  if (fn?.type === 'identifier') return { identifier: fn.text };
  if (fn?.type !== 'attribute') return undefined;
  const obj = fn.childForFieldName('object');
  return { attribute: fn.childForFieldName('attribute')?.text, object: obj?.type === 'identifier' ? obj.text : undefined };
}

/** The value node of a statement `name = value`. */
export function assignedValue(stmt: SyntaxNode): SyntaxNode | null {
  return stmt.namedChildren[0]?.childForFieldName('right') ?? null;
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
    (info.imported ??= {})[bound] = nameNode.text;
    if (fromStrato && nameNode.text === 'Endpoint') endpointNames.add(bound);
    if (fromStrato && STRATO_ENUMS.includes(nameNode.text)) scope.enumAliases.set(bound, nameNode.text);
    if (fromStrato && STRATO_VALUES.includes(nameNode.text)) scope.classAliases!.set(bound, nameNode.text);
  }
  return info;
}

/** The `name=value` argument of a call, if it has one. */
export function keywordArg(call: SyntaxNode, name: string): SyntaxNode | undefined {
  const args = call.childForFieldName('arguments');
  return args ? children(args).find((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === name) : undefined;
}

/** `Endpoint(id=...)`: a client of an endpoint that exists; only `image` contradicts it. */
function checkClientReference(call: SyntaxNode, sink: DiagnosticSink): void {
  const image = keywordArg(call, 'image');
  if (image) sink.add('id-and-image', parameterMessage('id-and-image'), rangeOf(image));
}
