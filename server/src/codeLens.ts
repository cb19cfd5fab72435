// Code lenses above each endpoint function and each route: "Run", "Debug" and "Deploy". The server only describes them;
// the client executes the commands (ids and argument shape in protocol.ts). The endpoints of a project deploy together
// (one build per environment), so the Deploy lens says "Deploy all N endpoints" when the project has several.
import type { CodeLens, Range } from 'vscode-languageserver/node';
import type { EndpointSpec, FunctionInfo, RouteInfo } from '../../engine/src/project';
import { Commands, type EndpointCommandArgs } from '../../engine/src/protocol/lsp';
import type { IndexedFile, WorkspaceIndex } from './workspaceIndex';

export function codeLenses(index: WorkspaceIndex, f: IndexedFile): CodeLens[] {
  if (!f.inProject) return []; // the build leaves this file out: nothing to run or deploy
  const lenses: CodeLens[] = [];
  const endpoints = (f.root.loose ? null : index.projectModel(f.root.uri))?.endpoints.length ?? index.model(f).endpoints.length;
  for (const ep of index.model(f).endpoints) {
    const deploy = endpoints > 1 ? `Deploy all ${endpoints} endpoints` : `Deploy ${ep.name}`;
    if (ep.kind === 'QUEUE') {
      for (const fn of ep.functions) lenses.push(...lensesOf(`Run ${ep.name}`, deploy, lineOf(fn.range), args(f, ep, fn)));
    } else {
      for (const r of ep.routes) lenses.push(...lensesOf(`Run ${r.method} ${r.path}`, deploy, lineOf(r.range), args(f, ep, r.function, r)));
    }
  }
  return lenses;
}

function lensesOf(runTitle: string, deployTitle: string, range: Range, a: EndpointCommandArgs): CodeLens[] {
  return [
    { range, command: { title: `▶ ${runTitle}`, command: Commands.runEndpoint, arguments: [a] } },
    { range, command: { title: 'Debug', command: Commands.debugEndpoint, arguments: [a] } },
    { range, command: { title: deployTitle, command: Commands.deployEndpoint, arguments: [a] } },
  ];
}

function args(f: IndexedFile, ep: EndpointSpec, fn: FunctionInfo, route?: RouteInfo): EndpointCommandArgs {
  const a: EndpointCommandArgs = { endpoint: ep.name, function: fn.name, file: f.rel, uri: f.uri, kind: ep.kind };
  if (route) {
    a.method = route.method;
    a.path = route.path;
  }
  return a;
}

/** The lens sits on the first line of the definition (its first decorator). */
function lineOf(range: Range): Range {
  return { start: { line: range.start.line, character: 0 }, end: { line: range.start.line, character: 0 } };
}
