// Completion inside `Endpoint(...)`: parameter names, GPU groups and types for gpu=, CPU shapes for cpu= (as
// catalog enum members or strings), members after `GpuGroup.` and friends, and HTTP methods on route decorators.
import { CompletionItemKind, InsertTextFormat, MarkupKind, type CompletionItem, type Position, type Range } from 'vscode-languageserver/node';
import { enumClasses, HTTP_METHODS, parameterDoc, parameters } from '../../engine/src/catalog';
import { parameterMarkdown, parameterValues, valueDetail, valueMarkdown, type CatalogValue } from './catalogDocs';
import { callKeywords, cursorContext, endpointCall, statementStart, typedBefore } from './cursorContext';
import { enumClassOf, enumPrefix, isEndpointCallee, stratoNames, usesStrato, type StratoNames } from './stratoNames';
import type { IndexedFile, WorkspaceIndex } from './workspaceIndex';

export const COMPLETION_TRIGGERS = ['.', '(', ',', '=', '"', "'", '[', ' '];

export function completion(index: WorkspaceIndex, f: IndexedFile, position: Position): CompletionItem[] {
  const open = f.open;
  const tree = open?.syntaxTree();
  if (!open || !tree) return [];
  const model = index.model(f);
  const names = stratoNames(model);
  if (!usesStrato(names)) return [];
  const doc = open.textDocument;
  const text = open.text;
  const offset = doc.offsetAt(position);
  const rangeFrom = (start: number): Range => ({ start: doc.positionAt(start), end: position });

  const typed = typedBefore(text, offset);
  const wordStart = offset - typed.length;
  // In a comment nothing is offered; in a string (a docstring too) only a parameter's values, below.
  const ctx = cursorContext(text, statementStart(tree, text, wordStart), wordStart);
  if (ctx.comment) return [];

  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const route = /^[ \t]*@[ \t]*([A-Za-z_]\w*)\.(\w*)$/.exec(text.slice(lineStart, offset));
  if (!ctx.string && route && model.endpoints.some((e) => e.kind === 'LOAD_BALANCED' && e.variable === route[1])) {
    return routeMethods(route[1], rangeFrom(offset - route[2].length));
  }

  const dot = typed.lastIndexOf('.');
  if (!ctx.string && dot > 0) {
    const cls = enumClassOf(typed.slice(0, dot), names);
    if (cls) return enumMembers(cls, rangeFrom(offset - (typed.length - dot - 1)));
  }

  const call = endpointCall(ctx, (callee) => isEndpointCallee(callee, names));
  if (!call) return [];
  const keyword = call.frame.keyword;
  if (ctx.string) {
    if (/[fFbB]/.test(ctx.string.prefix)) return [];
    const range = rangeFrom(ctx.string.contentStart);
    const values = keyword ? parameterValues(keyword) : undefined;
    return values ? values.map((v, i) => valueItem(v.id, v.id, i, range)) : [];
  }
  if (call.nested === 0 && call.frame.argStart) {
    const present = new Set(callKeywords(text, call.frame.open));
    return parameters.filter((p) => !present.has(p.name) || p.name === typed).map((p, i) => parameterItem(p.name, i, rangeFrom(wordStart)));
  }
  const values = keyword ? parameterValues(keyword) : undefined;
  return values ? hardwareItems(values, names, rangeFrom(wordStart)) : [];
}

function order(i: number): string {
  return String(i).padStart(3, '0');
}

function parameterItem(name: string, i: number, range: Range): CompletionItem {
  const p = parameterDoc(name)!;
  return {
    label: name,
    kind: CompletionItemKind.Property,
    detail: `${name}: ${p.type}`,
    documentation: { kind: MarkupKind.Markdown, value: parameterMarkdown(p) },
    sortText: order(i),
    filterText: name,
    textEdit: { range, newText: `${name}=` },
    // The value comes next: open its suggestions at once instead of waiting for Ctrl+Space.
    command: parameterValues(name) ? { title: 'Suggest values', command: 'editor.action.triggerSuggest' } : undefined,
  };
}

function valueItem(label: string, newText: string, i: number, range: Range, id = label): CompletionItem {
  const md = valueMarkdown(id);
  return {
    label,
    kind: CompletionItemKind.EnumMember,
    detail: valueDetail(id),
    documentation: md ? { kind: MarkupKind.Markdown, value: md } : undefined,
    sortText: order(i),
    filterText: newText,
    textEdit: { range, newText },
  };
}

/** Values for gpu=, cpu=, datacenter=... outside a string: enum members when the file can name the enum, else string literals. */
function hardwareItems(values: readonly CatalogValue[], names: StratoNames, range: Range): CompletionItem[] {
  return values.map((v, i) => {
    const prefix = enumPrefix(v.enumClass, names);
    const text = prefix ? `${prefix}${v.member}` : JSON.stringify(v.id);
    return valueItem(text, text, i, range, v.id);
  });
}

function enumMembers(cls: string, range: Range): CompletionItem[] {
  return Object.entries(enumClasses[cls]).map(([member, value], i) => valueItem(member, member, i, range, value));
}

function routeMethods(variable: string, range: Range): CompletionItem[] {
  return HTTP_METHODS.map((m, i) => {
    const name = m.toLowerCase();
    return {
      label: name,
      kind: CompletionItemKind.Method,
      detail: `${m} route of ${variable}`,
      documentation: {
        kind: MarkupKind.Markdown,
        value: `Declares an HTTP \`${m}\` route on the load-balanced endpoint \`${variable}\`: \`@${variable}.${name}("/path")\`.`,
      },
      sortText: order(i),
      filterText: name,
      insertTextFormat: InsertTextFormat.PlainText,
      textEdit: { range, newText: name },
    };
  });
}
