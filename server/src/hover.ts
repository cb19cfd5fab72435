// Hover: the meaning, type, default and limits of an `Endpoint` parameter, and what a GPU or CPU value is
// (models, memory, vCPUs), a datacenter, a scaler type or a CUDA version, whether written as a string in the
// parameter or as a catalog enum member anywhere.
import { MarkupKind, type Hover, type Position } from 'vscode-languageserver/node';
import { enumClasses, findDatacenter, parameterDoc } from '../../engine/src/catalog';
import { cpuMarkdown, gpuMarkdown, parameterMarkdown, parameterValues, valueMarkdown } from './catalogDocs';
import { cursorContext, dottedAt, endpointCall, identifierAt, statementStart } from './cursorContext';
import { enumClassOf, isEndpointCallee, stratoNames, usesStrato } from './stratoNames';
import type { IndexedFile, WorkspaceIndex } from './workspaceIndex';

export function hover(index: WorkspaceIndex, f: IndexedFile, position: Position): Hover | null {
  const open = f.open;
  const tree = open?.syntaxTree();
  if (!open || !tree) return null;
  const names = stratoNames(index.model(f));
  if (!usesStrato(names)) return null;
  const doc = open.textDocument;
  const text = open.text;
  const offset = doc.offsetAt(position);
  const answer = (value: string, start: number, end: number): Hover => ({
    contents: { kind: MarkupKind.Markdown, value },
    range: { start: doc.positionAt(start), end: doc.positionAt(end) },
  });
  const isEndpoint = (callee: string) => isEndpointCallee(callee, names);

  // Nothing in a comment; in a string, only a parameter's value (below): `GpuGroup.ADA_24` in prose is no code.
  const start = statementStart(tree, text, offset);
  const ctx = cursorContext(text, start, offset);
  if (ctx.comment) return null;

  const dotted = ctx.string ? null : dottedAt(text, offset);
  if (dotted) {
    const cut = dotted.text.lastIndexOf('.');
    const cls = enumClassOf(dotted.text.slice(0, cut), names);
    const value = cls ? enumClasses[cls][dotted.text.slice(cut + 1)] : undefined;
    const md = value !== undefined ? valueMarkdown(value) : undefined;
    if (md) return answer(md, dotted.start, dotted.end);
  }

  if (ctx.string) {
    const call = endpointCall(ctx, isEndpoint);
    const keyword = call?.frame.keyword;
    if (!keyword || !parameterValues(keyword)) return null;
    const { contentStart, quote, prefix } = ctx.string;
    const close = closingQuote(text, offset, quote);
    if (close === -1) return null;
    const written = text.slice(contentStart, close);
    const md = keyword === 'gpu' ? gpuMarkdown(written) : keyword === 'cpu' ? cpuMarkdown(written) : valueMarkdown(canonicalValue(keyword, written));
    return md ? answer(md, contentStart - quote.length - prefix.length, close + quote.length) : null;
  }

  const word = identifierAt(text, offset);
  if (!word) return null;
  const call = endpointCall(cursorContext(text, start, word.start), isEndpoint);
  if (!call || call.nested !== 0 || !call.frame.argStart || !/^[ \t]*=(?!=)/.test(text.slice(word.end, word.end + 80))) return null;
  const p = parameterDoc(word.text);
  return p ? answer(parameterMarkdown(p), word.start, word.end) : null;
}

/** A string as the parameter reads it: datacenter ids in any case and with '_' for '-'. */
function canonicalValue(keyword: string, written: string): string {
  if (keyword === 'datacenter') return findDatacenter(written)?.id ?? written;
  return keyword === 'scaler_type' ? written.toUpperCase() : written;
}

function closingQuote(text: string, from: number, quote: string): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text.startsWith(quote, i)) return i;
    else if (quote.length === 1 && text[i] === '\n') return -1;
  }
  return -1;
}
