// The TypeScript client of an environment, written as a syntax tree with ts-morph and formatted by the TypeScript
// formatter: the project's types, one typed member per function and route, and the runtime (runtime.ts) after them.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { CodeBlockWriter, JSDocStructure, OptionalKind, SourceFile, WriterFunction } from 'ts-morph';
import { limits } from '../catalog';
import type { EnvironmentSummary } from '../deploy/environments';
import type { ProjectModel } from '../project/model';
import { UserError } from '../util/errors';
import { clientSurface, pascalCase, type ClientSurface, type Doc, type LoadBalancedEntry, type QueueEntry, type RouteEntry } from './surface';
import type { JsonField, JsonType } from './types';

export interface GeneratedClient {
  /** The module's text. */
  text: string;
  surface: ClientSurface;
}

/** Names the generated module declares besides the runtime's, and the globals it uses (a TypedDict named Record must not hide them). */
const OWN_NAMES = ['ENDPOINTS', 'Client', 'createClient'];
const GLOBALS = 'Array Record Partial Promise AsyncGenerator Error Object JSON Number String Math Date AbortController AbortSignal fetch globalThis'.split(' ');

/** runtime.ts beside this module (sources), or in clientgen/ beside the bundle (dist/). */
export function runtimeSource(): string {
  for (const file of [path.join(__dirname, 'runtime.ts'), path.join(__dirname, 'clientgen', 'runtime.ts')]) {
    if (existsSync(file)) return readFileSync(file, 'utf8');
  }
  throw new Error(`the client runtime (clientgen/runtime.ts) is missing beside ${__dirname}: reinstall Strato`);
}

/** A TypeScript string literal in single quotes. */
export function quote(s: string): string {
  return `'${JSON.stringify(s).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

function propertyName(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : quote(name);
}

/** The TypeScript type of a JSON type; a type with no JSON form is `unknown` with the Python type in a comment. */
export function tsType(t: JsonType): string {
  switch (t.kind) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'null':
      return t.kind;
    case 'integer':
      return 'number';
    case 'unknown':
      return t.python ? `unknown /* ${t.python.replace(/\*\//g, '* /')} */` : 'unknown';
    case 'array': {
      const items = tsType(t.items);
      return /^[\w.]+(\[\])*$/.test(items) ? `${items}[]` : `Array<${items}>`;
    }
    case 'tuple':
      return `[${t.items.map(tsType).join(', ')}]`;
    case 'record':
      return `Record<string, ${tsType(t.values)}>`;
    case 'union':
      return [...new Set(t.options.map(tsType))].join(' | ');
    case 'literal':
      return typeof t.value === 'string' ? quote(t.value) : String(t.value);
    case 'object': {
      const members = t.fields.map((f) => `${propertyName(f.name)}${f.optional ? '?' : ''}: ${tsType(f.type)}`);
      if (t.rest) members.push('[key: string]: unknown');
      return members.length ? `{ ${members.join('; ')} }` : 'Record<string, never>';
    }
    case 'ref':
      return t.name;
  }
}

/** TSDoc text: `*\/` would end the comment early. */
const docText = (s: string) => s.replace(/\*\//g, '*\\/');

function docs(description: string | undefined, ...lines: Array<string | undefined>): OptionalKind<JSDocStructure>[] {
  const text = [description && docText(description), ...lines].filter((l): l is string => !!l).join('\n\n');
  return text ? [{ description: text }] : [];
}

function fieldDocs(f: JsonField): OptionalKind<JSDocStructure>[] {
  const parts = [f.doc ? docText(f.doc) : undefined, f.default !== undefined ? `@defaultValue \`${docText(f.default)}\` (Python)` : undefined].filter(Boolean);
  return parts.length ? [{ description: parts.join('\n\n') }] : [];
}

function where(d: Doc): string | undefined {
  return d.source ? `Python: \`${d.python}\` in ${d.source}.` : 'Not declared in the code this client was generated from: untyped.';
}

/** Declares a JSON type under `name`: an interface for an object, a type alias for anything else. */
function declare(out: SourceFile, name: string, t: JsonType, description: string): void {
  if (t.kind === 'object' && !isEmpty(t)) {
    out.addInterface({
      name,
      isExported: true,
      docs: docs(description),
      properties: t.fields.map((f) => ({ name: propertyName(f.name), type: tsType(f.type), hasQuestionToken: f.optional, docs: fieldDocs(f) })),
      indexSignatures: t.rest ? [{ keyName: 'key', keyType: 'string', returnType: 'unknown' }] : [],
    });
  } else out.addTypeAlias({ name, isExported: true, type: tsType(t), docs: docs(description) });
}

const hasRequired = (t: JsonType) => t.kind !== 'object' || t.fields.some((f) => !f.optional);
const isEmpty = (t: JsonType) => t.kind === 'object' && t.fields.length === 0 && !t.rest;

type Member = { entry: QueueEntry; names: TypeNames } | { entry: LoadBalancedEntry; group: string; routes: Array<{ route: RouteEntry; names: TypeNames }> };

interface TypeNames {
  input: string;
  output: string;
  chunk: string;
}

function declareSignature(out: SourceFile, s: ClientSurface, base: string, e: QueueEntry | RouteEntry, what: string): TypeNames {
  const route = 'method' in e;
  const names = { input: route && isEmpty(e.signature.input) ? '' : s.names.take(`${base}Input`), output: s.names.take(`${base}Output`), chunk: '' };
  if (names.input) declare(out, names.input, e.signature.input, `The arguments of ${what}.`);
  declare(out, names.output, e.signature.output, `The result of ${what}.`);
  if (e.signature.streams) {
    names.chunk = s.names.take(`${base}Chunk`);
    declare(out, names.chunk, e.signature.chunk, `Each value ${what} streams.`);
  }
  return names;
}

function routeParameters(t: TypeNames, e: RouteEntry) {
  const options = { name: 'options', type: 'CallOptions', hasQuestionToken: true };
  if (isEmpty(e.signature.input)) return [options];
  return [{ name: 'args', type: t.input, hasQuestionToken: !hasRequired(e.signature.input) }, options];
}

/** Generates the client module of one deployed environment, typed from the code's project model. */
export async function typescriptClient(model: ProjectModel, env: EnvironmentSummary): Promise<GeneratedClient> {
  const tsm = await import('ts-morph').catch((e: Error) => {
    throw new UserError(`ts-morph, which writes the TypeScript client, could not be loaded (${e.message}): reinstall Strato with its dependencies.`);
  });
  const project = new tsm.Project({
    useInMemoryFileSystem: true,
    skipLoadingLibFiles: true,
    manipulationSettings: { indentationText: tsm.IndentationText.TwoSpaces, quoteKind: tsm.QuoteKind.Single, useTrailingCommas: true },
  });
  const runtime = project.createSourceFile('runtime.ts', runtimeSource());
  const runtimeNames = runtime.getStatements().flatMap((st) => {
    if (tsm.Node.isVariableStatement(st)) return st.getDeclarations().map((d) => d.getName());
    const name = (st as { getName?: () => string | undefined }).getName?.();
    return name ? [name] : [];
  });
  const s = clientSurface(model, env, [...runtimeNames, ...OWN_NAMES, ...GLOBALS]);
  const out = project.createSourceFile('client.ts');
  const target = `${s.app}/${s.environment}`;

  out.addStatements([
    `// Typed client of the Strato environment ${target}, generated by \`strato client --lang ts\` from the endpoints it runs`,
    '// and the type hints of the code. Do not edit: generate it again after a deploy. The API key is never written here:',
    '// pass createClient({ apiKey }) or set STRATO_API_KEY.',
    '/* eslint-disable */',
  ]);

  for (const shape of s.shapes) {
    out.addInterface({
      name: shape.name,
      isExported: true,
      docs: docs(shape.doc, `Python: ${shape.python.kind} \`${shape.python.name}\` in ${shape.python.file}.`),
      properties: shape.fields.map((f) => ({ name: propertyName(f.name), type: tsType(f.type), hasQuestionToken: f.optional, docs: fieldDocs(f) })),
    });
  }

  const members: Member[] = [];
  for (const e of s.endpoints) {
    if (e.kind === 'QUEUE') {
      members.push({ entry: e, names: declareSignature(out, s, pascalCase(e.member), e, `${e.doc.python ?? e.member} (endpoint ${e.endpoint})`) });
      continue;
    }
    const group = s.names.take(`${pascalCase(e.member)}Routes`);
    const routes = e.routes.map((r) => ({
      route: r,
      names: declareSignature(out, s, s.names.take(pascalCase(r.member), pascalCase(`${e.member}_${r.member}`)), r, `${r.method} ${r.path} of ${e.endpoint}`),
    }));
    out.addInterface({
      name: group,
      isExported: true,
      docs: docs(`The routes of the load-balanced endpoint ${e.endpoint}.`),
      methods: routes.map(({ route, names }) => ({
        name: route.member,
        parameters: routeParameters(names, route),
        returnType: `Promise<${names.output}>`,
        docs: docs(route.doc.docstring, `\`${route.method} ${route.path}\` of the load-balanced endpoint \`${e.endpoint}\`. ${where(route.doc)}`),
      })),
    });
    members.push({ entry: e, group, routes });
  }

  out.addVariableStatement({
    isExported: true,
    declarationKind: tsm.VariableDeclarationKind.Const,
    docs: docs(`Where the endpoints of ${target} are (as \`strato env get\` lists them) and the time-out of their calls, in ms.`),
    declarations: [
      {
        name: 'ENDPOINTS',
        initializer: (w: CodeBlockWriter) => {
          w.write('{').indent(() => {
            for (const e of s.endpoints) w.writeLine(`${quote(e.endpoint)}: { url: ${quote(e.url)}, timeoutMs: ${e.timeoutMs} },`);
          });
          w.write('} as const');
        },
      },
    ],
  });

  out.addInterface({
    name: 'Client',
    isExported: true,
    docs: docs(`The functions and routes of ${target}.`),
    properties: members.map((m) =>
      'names' in m
        ? {
            name: m.entry.member,
            type: `QueueFunction<${m.names.input}, ${m.names.output}${m.names.chunk ? `, ${m.names.chunk}` : ''}>`,
            docs: docs(m.entry.doc.docstring, `Queue-based endpoint \`${m.entry.endpoint}\`. ${where(m.entry.doc)}`),
          }
        : { name: m.entry.member, type: m.group, docs: docs(`The routes of the load-balanced endpoint \`${m.entry.endpoint}\`.`) },
    ),
  });

  const implementation: Record<string, string | WriterFunction> = {};
  for (const m of members) {
    const endpoint = `ENDPOINTS[${quote(m.entry.endpoint)}]`;
    if ('names' in m) {
      const types = [m.names.input, m.names.output, ...(m.names.chunk ? [m.names.chunk] : [])].join(', ');
      implementation[m.entry.member] = `queueFunction<${types}>(t, ${endpoint})`;
      continue;
    }
    const routes: Record<string, string> = {};
    for (const { route, names } of m.routes) {
      const params = routeParameters(names, route).map((p) => p.name);
      const args = params.includes('args') ? 'args' : '{}';
      routes[route.member] =
        `(${params.join(', ')}) => callRoute<${names.output}>(t, ${endpoint}, ${quote(route.method)}, ${quote(route.path)}, ${args}, options)`;
    }
    implementation[m.entry.member] = tsm.Writers.object(routes);
  }
  out.addFunction({
    name: 'createClient',
    isExported: true,
    parameters: [{ name: 'options', type: 'ClientOptions', initializer: '{}' }],
    returnType: 'Client',
    docs: docs(`A client of ${target}. The API key is \`options.apiKey\`, else STRATO_API_KEY of the environment, read at each call.`),
    statements: (w) => {
      w.writeLine('const t = new Transport(options);');
      w.write('return ');
      tsm.Writers.object(implementation)(w);
      w.write(';');
    },
  });

  out.addStatements('\n// The runtime: job types, errors and calls (the same in every generated client).\n');
  out.addStatements(runtime.getFullText().slice(runtime.getStatements()[0].getStart(true)));
  // The platform's bounds of `wait`, from the catalog (runtime.ts holds the same numbers for its own tests).
  const bounds = out.getVariableDeclarationOrThrow('LIMITS').getInitializerIfKindOrThrow(tsm.SyntaxKind.ObjectLiteralExpression);
  for (const key of ['waitMinMs', 'waitMaxMs'] as const)
    bounds.getPropertyOrThrow(key).asKindOrThrow(tsm.SyntaxKind.PropertyAssignment).setInitializer(String(limits[key]));
  // Helpers marked @internal serve the module itself: not part of its exports.
  for (const st of out.getStatements()) {
    if (!tsm.Node.isExportable(st) || !tsm.Node.isJSDocable(st)) continue;
    const doc = st.getJsDocs().find((d) => d.getTags().some((tag) => tag.getTagName() === 'internal'));
    if (!doc) continue;
    const description = doc.getDescription().trim();
    doc.remove();
    st.addJsDoc(description);
    st.setIsExported(false);
  }
  out.formatText({ indentSize: 2, convertTabsToSpaces: true, ensureNewLineAtEndOfFile: true });
  return { text: `${out.getFullText().trimEnd()}\n`, surface: s };
}
