// Document symbols for endpoints and routes: a queue-based endpoint is its function; a load-balanced endpoint
// holds its routes (`POST /process`) as children.
import { SymbolKind, type DocumentSymbol, type Range } from 'vscode-languageserver/node';
import type { EndpointConfig, EndpointSpec } from '../../engine/src/project';
import type { IndexedFile, WorkspaceIndex } from './workspaceIndex';

export function documentSymbols(index: WorkspaceIndex, f: IndexedFile): DocumentSymbol[] {
  return index.model(f).endpoints.map((ep) => (ep.kind === 'QUEUE' ? queueSymbol(ep) : lbSymbol(ep)));
}

function queueSymbol(ep: EndpointSpec): DocumentSymbol {
  const fn = ep.functions[0];
  const range = fn ? union(fn.range, ep.callRange) : ep.callRange;
  return {
    name: ep.name,
    detail: `queue endpoint · ${hardware(ep.config)}${fn ? ` · ${fn.isClass ? 'class' : 'def'} ${fn.name}` : ''}`,
    kind: fn?.isClass ? SymbolKind.Class : SymbolKind.Function,
    range,
    selectionRange: fn ? fn.nameRange : ep.nameRange,
  };
}

function lbSymbol(ep: EndpointSpec): DocumentSymbol {
  const children: DocumentSymbol[] = ep.routes.map((r) => ({
    name: `${r.method} ${r.path}`,
    detail: r.function.name,
    kind: SymbolKind.Method,
    range: union(r.range, r.function.range),
    selectionRange: r.function.nameRange,
  }));
  let range = ep.callRange;
  for (const c of children) range = union(range, c.range);
  return {
    name: ep.name,
    detail: `load-balanced endpoint · ${hardware(ep.config)}${ep.variable ? ` · ${ep.variable}` : ''}`,
    kind: SymbolKind.Module,
    range,
    selectionRange: within(ep.nameRange, range) ? ep.nameRange : ep.callRange,
    children,
  };
}

function hardware(c: EndpointConfig): string {
  if (c.cpu) return `cpu ${c.cpu}`;
  if (c.gpu) return `gpu ${c.gpu.join(', ')}`;
  return 'hardware unresolved';
}

const before = (a: Range['start'], b: Range['start']) => a.line < b.line || (a.line === b.line && a.character < b.character);

function union(a: Range, b: Range): Range {
  return { start: before(a.start, b.start) ? a.start : b.start, end: before(a.end, b.end) ? b.end : a.end };
}

function within(inner: Range, outer: Range): boolean {
  return !before(inner.start, outer.start) && !before(outer.end, inner.end);
}
