// Completion, hover, document symbols and quick fixes for the orchestration YAML files, all driven by the rule
// table of engine/src/orchestration (keys, docs, allowed values) and the catalog (GPUs, datacenters).
import {
  CodeActionKind,
  CompletionItemKind,
  MarkupKind,
  SymbolKind,
  type CodeAction,
  type CodeActionParams,
  type CompletionItem,
  type DocumentSymbol,
  type Hover,
  type Position,
  type Range,
} from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { datacenters, findDatacenter, findGpusByName, gpuGroups, gpuNames, gpuTypes } from '../../../engine/src/catalog';
import { BACKEND_TYPES, STRATO_BACKEND, TASK, dstackTableOf, parseDstack, type KeySpec } from '../../../engine/src/orchestration';
import { DIAGNOSTIC_SOURCE } from '../../../engine/src/protocol/lsp';
import { pathOf } from '../paths';
import type { YamlWorkspace } from './yamlWorkspace';

/** The key table of the document's top level: the validator's own choice (a quoted or commented `type` included), task keys while the type is unknown. */
function tableOf(doc: TextDocument): Record<string, KeySpec> {
  const p = (pathOf(doc.uri) ?? doc.uri).replace(/\\/g, '/');
  return dstackTableOf(p, parseDstack(doc.getText())).table ?? TASK;
}

/** Whether the text before a column of a line ends in a comment: a `#` at its start or after a space, outside quotes. */
function inComment(before: string): boolean {
  let quote = '';
  for (let i = 0; i < before.length; i++) {
    const ch = before[i];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '#' && (i === 0 || /\s/.test(before[i - 1]))) return true;
  }
  return false;
}

/**
 * The keys that enclose a line, by indentation (`resources` > `gpu`), and the key written on the line itself. `prose`:
 * the position is in a comment or in a block scalar (`commands:` then `- |`), text the tool does not read as keys.
 */
function context(doc: TextDocument, pos: Position): { parents: string[]; key?: string; afterColon: boolean; word: string; prose: boolean } {
  const lines = doc.getText().split(/\r?\n/);
  const line = lines[pos.line] ?? '';
  const before = line.slice(0, pos.character);
  const indent = (s: string) => s.length - s.replace(/^[\s-]*/, '').length;
  const parents: string[] = [];
  let level = indent(line);
  let prose = inComment(before);
  // Each line above indented less than the one below it encloses it: one that opens a block scalar (`key: |`,
  // `- >-`) holds the lines under it as text, however they are indented.
  let enclosing = /^ */.exec(line)![0].length;
  for (let i = pos.line - 1; i >= 0 && (level > 0 || (enclosing > 0 && !prose)); i--) {
    const l = lines[i];
    if (!l.trim() || l.trim().startsWith('#')) continue;
    const lead = /^ */.exec(l)![0].length;
    if (!prose && lead < enclosing) {
      enclosing = lead;
      if (/(?:^\s*-|:)\s*[|>][-+0-9]*\s*(?:#.*)?$/.test(l)) prose = true;
    }
    if (level === 0) continue;
    const m = /^([\s-]*)([A-Za-z_][\w-]*):/.exec(l);
    if (m && indent(l) < level) {
      parents.unshift(m[2]);
      level = indent(l);
    }
  }
  const km = /^[\s-]*([A-Za-z_][\w-]*):/.exec(line);
  const wm = /[\w.:-]*$/.exec(before);
  const afterWord = /^[\w.-]*/.exec(line.slice(pos.character))?.[0] ?? '';
  return { parents, key: km?.[1], afterColon: !!km && before.length > line.indexOf(':'), word: (wm?.[0] ?? '') + afterWord, prose };
}

/**
 * The keys written beside a line in its mapping (same indentation, the block's other lines), which completion does not
 * offer again: a second one would be a key set twice, which the tool refuses. Within a list item, its own lines only.
 */
function siblingKeys(lines: readonly string[], at: number): Set<string> {
  const lead = (l: string) => /^ */.exec(l)![0].length;
  const own = lines[at] ?? '';
  const indent = lead(own);
  const out = new Set<string>();
  if (own.slice(indent).startsWith('-')) return out; // a new list item: a mapping of its own
  const scan = (from: number, step: number) => {
    for (let i = from; i >= 0 && i < lines.length; i += step) {
      const l = lines[i];
      if (!l.trim() || l.trim().startsWith('#')) continue;
      const d = lead(l);
      const rest = l.slice(d);
      if (rest.startsWith('-')) {
        // A list item's line: going up, the first key of the item this line is in sits after its "- ".
        const first = /^-\s+([A-Za-z_][\w-]*):/.exec(rest);
        if (step < 0 && first && d + 2 === indent) out.add(first[1]);
        if (d <= indent) return;
        continue;
      }
      if (d < indent) return;
      const m = /^([A-Za-z_][\w-]*):/.exec(rest);
      if (d === indent && m) out.add(m[1]);
    }
  };
  scan(at - 1, -1);
  scan(at + 1, 1);
  return out;
}

function specAt(table: Record<string, KeySpec>, parents: readonly string[]): Record<string, KeySpec> | undefined {
  let keys: Record<string, KeySpec> | undefined = table;
  for (const p of parents) {
    let spec: KeySpec | undefined = keys?.[p];
    while (spec?.item) spec = spec.item;
    keys = p === 'backends' ? STRATO_BACKEND : spec?.keys;
  }
  return keys;
}

function valueItems(key: string, spec: KeySpec | undefined): CompletionItem[] {
  if (key === 'gpu') {
    const models = gpuNames().map((name) => {
      const mem = [...new Set(findGpusByName(name).map((t) => t.memoryGb))].join('/');
      return { label: name, kind: CompletionItemKind.Value, detail: `${mem} GB`, insertText: findGpusByName(name).length === 1 ? `${name}:${mem}GB` : name };
    });
    // The catalog's groups too, as the docs list them (any model of the group will do).
    const groups = gpuGroups
      .filter((g) => g.id !== 'any' && findGpusByName(g.id).length > 0)
      .map((g) => ({ label: g.id, kind: CompletionItemKind.Value, detail: g.description }));
    return [...models, ...groups];
  }
  if (key === 'region' || key === 'regions') return datacenters.map((d) => ({ label: d.id, kind: CompletionItemKind.Value, detail: d.location }));
  if (key === 'backend') return BACKEND_TYPES.map((b) => ({ label: b, kind: CompletionItemKind.EnumMember }));
  return (spec?.values ?? []).map((v) => ({ label: v, kind: CompletionItemKind.EnumMember }));
}

export function yamlCompletion(doc: TextDocument, pos: Position): CompletionItem[] {
  const c = context(doc, pos);
  if (c.prose) return [];
  const table = tableOf(doc);
  const lines = doc.getText().split(/\r?\n/);
  const line = lines[pos.line] ?? '';
  if (c.key && c.afterColon) {
    const items = valueItems(c.key, specAt(table, c.parents)?.[c.key]);
    // Right after the colon (`spot_policy:|`), a value needs its space, or YAML reads one plain scalar, no key.
    return line[pos.character - 1] === ':' ? items.map((i) => ({ ...i, insertText: ` ${i.insertText ?? i.label}` })) : items;
  }
  // A list item under regions / backends.
  if (/^\s*-\s*\S*$/.test(line.slice(0, pos.character)) && c.parents.length) {
    const parent = c.parents[c.parents.length - 1];
    if (parent === 'regions' || parent === 'backends') return valueItems(parent === 'regions' ? 'regions' : 'backend', undefined);
  }
  const keys = specAt(table, c.parents) ?? {};
  const written = siblingKeys(lines, pos.line);
  return Object.entries(keys)
    .filter(([k]) => !written.has(k))
    .map(([k, spec]) => ({
      label: k,
      kind: CompletionItemKind.Property,
      detail: spec.type,
      documentation: spec.doc,
      insertText: spec.type === 'map' || spec.type === 'list' ? `${k}:\n` : `${k}: `,
    }));
}

export function yamlHover(doc: TextDocument, pos: Position): Hover | null {
  const c = context(doc, pos);
  if (c.prose) return null;
  const word = c.word.replace(/:.*$/, '');
  if (!word) return null;
  const keys = specAt(tableOf(doc), c.parents);
  const line = doc.getText().split(/\r?\n/)[pos.line] ?? '';
  if (c.key === word && !c.afterColon && keys?.[word])
    return { contents: { kind: MarkupKind.Markdown, value: `**${word}** (${keys[word].type})\n\n${keys[word].doc}` } };
  // A value is read by its key: the key on its line, or a list item's parent (`regions:` then `- EU-RO-1`). A GPU name
  // under `name:` or in a command is no GPU spec.
  const valueKey = c.key && c.afterColon ? c.key : /^\s*-/.test(line) ? c.parents[c.parents.length - 1] : undefined;
  const dc = valueKey === 'region' || valueKey === 'regions' ? findDatacenter(word) : undefined;
  if (dc) return { contents: { kind: MarkupKind.Markdown, value: `**${dc.id}**: datacenter in ${dc.location}` } };
  const inGpu = valueKey === 'gpu' || (valueKey === 'name' && c.parents[c.parents.length - 1] === 'gpu');
  const gpuWord = !inGpu ? '' : (c.word.split(':').find((p) => findGpusByName(p).length) ?? '');
  const gpus = gpuWord ? findGpusByName(gpuWord) : [];
  if (gpus.length && gpus.length < gpuTypes.length) {
    return { contents: { kind: MarkupKind.Markdown, value: gpus.map((t) => `**${t.id}**: ${t.memoryGb} GB (${t.group})`).join('\n\n') } };
  }
  if (c.key && c.afterColon && keys?.[c.key]?.values?.includes(word))
    return { contents: { kind: MarkupKind.Markdown, value: `**${c.key}: ${word}**\n\n${keys[c.key].doc}` } };
  return null;
}

export function yamlSymbols(doc: TextDocument): DocumentSymbol[] {
  const lc = new LineCounter();
  const text = doc.getText();
  const parsed = parseDocument(text, { lineCounter: lc });
  const pos = (o: number) => {
    const p = lc.linePos(Math.min(o, text.length));
    return { line: p.line - 1, character: p.col - 1 };
  };
  const rangeOf = (n: Node, end?: Node | null): Range => ({ start: pos(n.range?.[0] ?? 0), end: pos((end ?? n).range?.[2] ?? 0) });
  const walk = (node: Node | null, depth: number): DocumentSymbol[] => {
    if (!node || depth > 4) return [];
    if (isMap(node)) {
      return node.items.flatMap((pair): DocumentSymbol[] => {
        const key = pair.key as Node;
        if (!isScalar(key)) return [];
        const value = pair.value as Node | null;
        const detail = value && isScalar(value) ? String(value.value) : undefined;
        return [
          {
            name: String(key.value),
            detail,
            kind: value && (isMap(value) || isSeq(value)) ? SymbolKind.Object : SymbolKind.Property,
            range: rangeOf(key, value ?? key),
            selectionRange: rangeOf(key),
            children: walk(value, depth + 1),
          },
        ];
      });
    }
    if (isSeq(node)) {
      return node.items.flatMap((item, i): DocumentSymbol[] => {
        const n = item as Node;
        if (isScalar(n)) return [{ name: String(n.value), kind: SymbolKind.String, range: rangeOf(n), selectionRange: rangeOf(n) }];
        const name = isMap(n) ? String(n.get('name') ?? n.get('type') ?? i) : String(i);
        return [{ name, kind: SymbolKind.Object, range: rangeOf(n), selectionRange: rangeOf(n), children: walk(n, depth + 1) }];
      });
    }
    return [];
  };
  return walk(parsed.contents as Node | null, 0);
}

/** Quick fixes: the engine's replace-value fixes (did-you-mean, clear-text key -> environment reference). */
export function yamlCodeActions(yaml: YamlWorkspace, doc: TextDocument, params: CodeActionParams): CodeAction[] {
  const out: CodeAction[] = [];
  for (const d of yaml.diagnostics(doc.uri)) {
    if (d.fix?.kind !== 'replace-value') continue;
    const r = d.range;
    const hit = params.context.diagnostics.some(
      (x) => x.code === d.code && x.range.start.line === r.start.line && x.range.start.character === r.start.character,
    );
    if (!hit) continue;
    const title = d.code === 'clear-text-key' ? `Move the key to an environment reference: ${d.fix.replacement}` : `Replace with ${d.fix.replacement}`;
    out.push({
      title,
      kind: CodeActionKind.QuickFix,
      isPreferred: true,
      diagnostics: params.context.diagnostics.filter((x) => x.code === d.code && x.source === DIAGNOSTIC_SOURCE),
      edit: { changes: { [doc.uri]: [{ range: d.fix.range, newText: d.fix.replacement }] } },
    });
  }
  return out;
}

const SEVERITY = { error: 1, warning: 2, information: 3, hint: 4 } as const;

/** Engine diagnostics of a YAML file as LSP diagnostics; related information points at the volume files. */
export function yamlLspDiagnostics(yaml: YamlWorkspace, uri: string): import('vscode-languageserver/node').Diagnostic[] {
  const folder = yaml.folderOf(uri);
  return yaml.diagnostics(uri).map((d) => ({
    range: d.range,
    severity: SEVERITY[d.severity],
    code: d.code,
    source: DIAGNOSTIC_SOURCE,
    message: d.message,
    relatedInformation: d.related?.map((r) => ({ location: { uri: folder ? yaml.uriOf(folder, r.file) : uri, range: r.range }, message: r.message })),
  }));
}
