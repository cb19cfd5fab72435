// The orchestration tool's YAML files in the language server: open documents override the disk, each workspace
// folder is checked as a whole (volume files fix the region of tasks), loose server configs alone. An edit redoes
// only its own file's analysis and the cross-file rules: the folder's listing and the other files' analyses are
// kept until a file event on disk (walking a large tree on every keystroke cost ~150 ms).
import path from 'node:path';
import { TextDocument, type TextDocumentContentChangeEvent } from 'vscode-languageserver-textdocument';
import { analyzeDstack, dstackKindOf, listOrchestrationFiles, loadOrchestration, type OrchestrationCache } from '../../../engine/src/orchestration';
import type { Diagnostic } from '../../../engine/src/project';
import { childUri, keyOf, pathOf, relativeTo } from '../paths';

interface Folder {
  uri: string;
  path: string;
}

/** One folder's result: diagnostics by project-relative path. */
type FolderResult = Map<string, Diagnostic[]>;

/** What is kept of one folder: the engine's cache (listing, each file's analysis) and the combined result. */
interface FolderCache {
  kept: OrchestrationCache;
  result?: FolderResult;
}

export class YamlWorkspace {
  private readonly folders: Folder[] = [];
  private readonly docs = new Map<string, TextDocument>();
  private cache = new Map<string, FolderCache>();

  /** `list`: how a folder's orchestration files are listed (a walk of its tree). */
  constructor(private readonly list: (root: string) => readonly string[] = listOrchestrationFiles) {}

  /** Whether the server treats this document as an orchestration YAML file. */
  static handles(uri: string): boolean {
    const p = pathOf(uri);
    return p !== undefined && dstackKindOf(p.split(path.sep).join('/')) !== undefined;
  }

  addFolder(uri: string): void {
    const p = pathOf(uri);
    if (p && !this.folders.some((f) => f.path === p)) this.folders.push({ uri, path: p });
    this.folders.sort((a, b) => b.path.length - a.path.length);
    this.invalidate();
  }

  removeFolder(uri: string): void {
    const p = pathOf(uri);
    const i = this.folders.findIndex((f) => f.path === p);
    if (i >= 0) this.folders.splice(i, 1);
    this.invalidate();
  }

  open(uri: string, text: string, version: number): void {
    this.docs.set(keyOf(uri), TextDocument.create(uri, 'yaml', version, text));
    this.edited(uri);
  }

  change(uri: string, changes: readonly TextDocumentContentChangeEvent[], version: number): boolean {
    const doc = this.docs.get(keyOf(uri));
    if (!doc) return false;
    this.docs.set(keyOf(uri), TextDocument.update(doc, [...changes], version));
    this.edited(uri);
    return true;
  }

  close(uri: string): boolean {
    const had = this.docs.delete(keyOf(uri));
    this.edited(uri); // back to the disk's text
    return had;
  }

  /** A watched YAML file was created, changed or deleted on disk: list and analyse every folder again. */
  invalidate(): void {
    this.cache = new Map();
  }

  /** A document's text changed: only its own analysis is redone, in each folder that holds it. */
  private edited(uri: string): void {
    const p = pathOf(uri);
    if (p === undefined) return;
    for (const [folder, c] of this.cache) {
      const rel = relativeTo(folder, p);
      if (rel === undefined) continue;
      c.kept.files?.delete(rel);
      c.result = undefined;
    }
  }

  document(uri: string): TextDocument | undefined {
    return this.docs.get(keyOf(uri));
  }

  /** The text of a document: the open buffer, or undefined when it is not open. */
  text(uri: string): string | undefined {
    return this.document(uri)?.getText();
  }

  /** The folder a path belongs to and its project-relative path. */
  locate(uri: string): { folder?: Folder; rel: string } | undefined {
    const p = pathOf(uri);
    if (!p) return undefined;
    for (const folder of this.folders) {
      const rel = relativeTo(folder.path, p);
      if (rel !== undefined) return { folder, rel };
    }
    return { rel: p.split(path.sep).join('/') };
  }

  /** Diagnostics of one document (cross-file rules included for files inside a folder). */
  diagnostics(uri: string): Diagnostic[] {
    const at = this.locate(uri);
    if (!at) return [];
    if (!at.folder) {
      const text = this.text(uri);
      return text === undefined ? [] : analyzeDstack(at.rel, text).sink.items;
    }
    return this.folderResult(at.folder).get(at.rel) ?? [];
  }

  /** Every YAML file with diagnostics, by URI, plus the open ones (so that fixed files are reported empty). */
  all(): Map<string, Diagnostic[]> {
    const out = new Map<string, Diagnostic[]>();
    for (const folder of this.folders) {
      for (const [rel, items] of this.folderResult(folder)) out.set(this.uriOf(folder, rel), items);
    }
    for (const doc of this.docs.values()) if (!out.has(doc.uri)) out.set(doc.uri, this.diagnostics(doc.uri));
    return out;
  }

  /** The URI of a project-relative file of a folder: the open document's spelling, or one built from the folder. */
  uriOf(folder: Folder, rel: string): string {
    const uri = childUri(folder.uri, rel);
    return this.docs.get(keyOf(uri))?.uri ?? uri;
  }

  folderOf(uri: string): Folder | undefined {
    return this.locate(uri)?.folder;
  }

  private folderResult(folder: Folder): FolderResult {
    const c = this.cache.get(folder.path) ?? { kept: {} };
    this.cache.set(folder.path, c);
    if (c.result) return c.result;
    c.kept.listed ??= this.list(folder.path);
    const overrides = new Map<string, string>();
    for (const doc of this.docs.values()) {
      const p = pathOf(doc.uri);
      const rel = p ? relativeTo(folder.path, p) : undefined;
      if (rel !== undefined) overrides.set(rel, doc.getText());
    }
    const result: FolderResult = new Map();
    const r = loadOrchestration(folder.path, overrides, c.kept);
    for (const f of r.files) result.set(f.file, []);
    for (const d of r.diagnostics) {
      const list = result.get(d.file);
      if (list) list.push(d);
      else result.set(d.file, [d]);
    }
    c.result = result;
    return result;
  }
}
