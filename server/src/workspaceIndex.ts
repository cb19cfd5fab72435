// The workspace index: every Python file of the workspace folders (the build's ignore rules apply) as a FileModel,
// open documents overriding disk, and each folder's project diagnostics (engine `combine`: cross-file rules).
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  combine,
  createIgnore,
  diskTextProblem,
  listProjectFiles,
  type Diagnostic,
  type FileModel,
  type Parser,
  type ProjectModel,
} from '../../engine/src/project';
import type { TextDocumentContentChangeEvent } from 'vscode-languageserver-textdocument';
import { analyzeSource, emptyModel, OpenDocument } from './sourceFile';
import { childUri, keyOf, looseName, pathOf, relativeTo } from './paths';
import {
  folderRoot,
  isIgnoredPath,
  looseRoot,
  readRootFile,
  rootDiagnostics,
  counted,
  unreadRootFile,
  updateLocalModules,
  type IndexedFile,
  type ProjectRoot,
} from './projectRoot';

export type { IndexedFile, ProjectRoot };

export type FileChange = { uri: string; type: 'created' | 'changed' | 'deleted' };

export class WorkspaceIndex {
  private readonly roots: ProjectRoot[] = [];
  private readonly byKey = new Map<string, IndexedFile>();

  constructor(private readonly parser: Parser) {}

  folders(): readonly ProjectRoot[] {
    return this.roots;
  }

  /** Every indexed file, open or not. */
  files(): IterableIterator<IndexedFile> {
    return this.byKey.values();
  }

  /**
   * The project model of a workspace folder: its project files, open documents as edited. A document still open in
   * the editor whose file was deleted is not part of the project any more (editors close documents lazily).
   */
  projectModel(folderUri: string): ProjectModel | null {
    const folderPath = pathOf(folderUri);
    const root = this.roots.find((r) => !r.loose && r.path === folderPath);
    if (!root?.path) return null;
    // What a deploy would build: files on disk (an open document not saved, or left open after its file was deleted,
    // is not deployed), where the diagnostics follow the editor's buffers (projectRoot.ts counted).
    const models = [...root.files.values()]
      .filter(counted)
      .map((f) => this.model(f))
      .filter((m) => m.endpoints.length === 0 || existsSync(path.join(root.path!, m.file)));
    return combine(root.path, models);
  }

  /**
   * Closed files of a folder that declare endpoints but are no longer on disk: deleted without a watched-file event
   * (some clients send none for deletions made through their own file API). A few stats at most.
   */
  vanishedEndpointFiles(folderUri: string): FileChange[] {
    const folderPath = pathOf(folderUri);
    const root = this.roots.find((r) => !r.loose && r.path === folderPath);
    const gone: FileChange[] = [];
    for (const f of root?.files.values() ?? []) {
      if (f.open || !f.inProject || !f.model?.endpoints.length) continue;
      if (!existsSync(f.key)) gone.push({ uri: f.uri, type: 'deleted' });
    }
    return gone;
  }

  get(uri: string): IndexedFile | undefined {
    return this.byKey.get(keyOf(uri));
  }

  /** Adds a workspace folder and indexes its files; returns the URIs indexed. */
  addFolder(uri: string): string[] {
    const folderPath = pathOf(uri);
    if (!folderPath || this.roots.some((r) => !r.loose && r.path === folderPath)) return [];
    const root = folderRoot(uri, folderPath);
    this.roots.push(root);
    // Longest folder first, so that a file belongs to the innermost folder that contains it.
    this.roots.sort((a, b) => (b.path?.length ?? 0) - (a.path?.length ?? 0));
    const changed = this.scan(root);
    // Open documents that now fall inside this folder move into it.
    for (const f of [...this.byKey.values()]) {
      if (f.open && this.rootFor(f.key) === root && f.root !== root) changed.push(this.rehome(f));
    }
    return changed;
  }

  removeFolder(uri: string): string[] {
    const folderPath = pathOf(uri);
    const root = this.roots.find((r) => !r.loose && r.path === folderPath);
    if (!root) return [];
    this.roots.splice(this.roots.indexOf(root), 1);
    const changed: string[] = [];
    for (const f of root.files.values()) {
      changed.push(f.uri);
      if (f.open) this.rehome(f);
      else this.byKey.delete(f.key);
    }
    return changed;
  }

  open(uri: string, text: string, version: number): string[] {
    const existing = this.get(uri);
    if (existing?.open) existing.open.dispose();
    const doc = new OpenDocument(this.parser, uri, text, version);
    if (existing) {
      existing.open = doc;
      existing.uri = uri;
      this.invalidate(existing);
      return [uri];
    }
    const f = this.place(uri, keyOf(uri));
    f.open = doc;
    this.add(f);
    return [uri];
  }

  change(uri: string, changes: readonly TextDocumentContentChangeEvent[], version: number): string[] {
    const f = this.get(uri);
    if (!f?.open) return [];
    f.open.applyChanges(changes, version);
    this.invalidate(f);
    return [f.uri];
  }

  close(uri: string): string[] {
    const f = this.get(uri);
    if (!f?.open) return [];
    f.open.dispose();
    f.open = undefined;
    // Back to what the disk says; a file the project does not hold leaves the index.
    if (f.root.loose || !f.inProject || !existsSync(f.key)) this.remove(f);
    else this.invalidate(f);
    return [f.uri];
  }

  /** Watched-file events; open documents keep overriding the disk. */
  fileEvents(events: readonly FileChange[]): string[] {
    const changed = new Set<string>();
    const rescan = new Set<ProjectRoot>();
    for (const e of events) {
      const p = pathOf(e.uri);
      const root = p ? this.rootFor(p) : undefined;
      if (!p || !root?.path) continue;
      const rel = relativeTo(root.path, p)!;
      if (path.basename(p) === '.gitignore') {
        rescan.add(root);
        continue;
      }
      if (e.type === 'deleted') {
        const prefix = `${rel}/`;
        for (const f of [...root.files.values()]) {
          if (f.rel !== rel && !f.rel.startsWith(prefix)) continue;
          // An open document stays in the index, but no longer counts in the project (projectRoot.ts counted).
          if (f.open) {
            f.deletedOnDisk = true;
            this.invalidate(f);
          } else this.remove(f);
          changed.add(f.uri);
        }
        continue;
      }
      if (!rel.endsWith('.py')) {
        if (e.type === 'created' && isDirectory(p)) rescan.add(root); // a folder moved or copied in
        continue;
      }
      const f = root.files.get(rel);
      if (f?.open) {
        // Written again (the editor saved the open document of a deleted file): it counts again.
        if (f.deletedOnDisk) {
          f.deletedOnDisk = false;
          this.invalidate(f);
          changed.add(f.uri);
        }
        continue;
      }
      if (isIgnoredPath(root, rel)) continue;
      if (f) {
        this.invalidate(f);
        changed.add(f.uri);
      } else {
        const nf = this.place(childUri(root.uri, rel), keyOf(childUri(root.uri, rel)));
        this.add(nf);
        changed.add(nf.uri);
      }
    }
    for (const root of rescan) for (const uri of this.scan(root)) changed.add(uri);
    return [...changed];
  }

  /** The file's model, analysed now when stale. */
  model(f: IndexedFile): FileModel {
    if (f.model) return f.model;
    const options = { localModules: f.root.localModules };
    if (f.open) f.model = f.open.analyze(f.rel, options);
    else {
      const text = readRootFile(f.root, f.rel);
      if (text !== undefined) {
        f.model = analyzeSource(this.parser, f.rel, text, options);
        const encoding = diskTextProblem(f.rel, path.join(f.root.path!, f.rel), text);
        if (encoding) f.model.diagnostics.push(encoding);
      } else {
        f.model = emptyModel(f.rel);
        const unread = unreadRootFile(f.root, f.rel);
        if (unread) f.model.diagnostics.push(unread);
      }
    }
    return f.model;
  }

  /** Diagnostics of every project file of the folder (single-file and cross-file rules), by project-relative path. */
  projectDiagnostics(root: ProjectRoot): Map<string, Diagnostic[]> {
    return rootDiagnostics(root, (f) => this.model(f));
  }

  /** The diagnostics of one file (empty for files the project does not hold). */
  diagnosticsOf(f: IndexedFile): Diagnostic[] {
    if (!f.inProject) return [];
    return this.projectDiagnostics(f.root).get(f.rel) ?? [];
  }

  /** The URI of a project-relative path of a folder (the client's spelling when the file is open). */
  uriOf(root: ProjectRoot, rel: string): string {
    return root.files.get(rel)?.uri ?? childUri(root.uri, rel);
  }

  dispose(): void {
    for (const f of this.byKey.values()) f.open?.dispose();
    this.byKey.clear();
  }

  // ---- internals ----

  private rootFor(key: string): ProjectRoot | undefined {
    if (!path.isAbsolute(key)) return undefined; // an untitled: or other non-file document
    return this.roots.find((r) => !r.loose && r.path !== undefined && relativeTo(r.path, key) !== undefined);
  }

  /** A new, not yet added entry for a document: inside the innermost folder, or loose. */
  private place(uri: string, key: string): IndexedFile {
    const root = this.rootFor(key);
    if (root?.path) {
      const rel = relativeTo(root.path, key)!;
      return { root, rel, uri, key, inProject: rel.endsWith('.py') && !isIgnoredPath(root, rel) };
    }
    const p = pathOf(uri);
    return { root: looseRoot(uri, p), rel: p ? path.basename(p) : looseName(uri), uri, key, inProject: true };
  }

  private add(f: IndexedFile): void {
    this.byKey.set(f.key, f);
    f.root.files.set(f.rel, f);
    f.root.generation++;
    if (f.inProject && !f.root.loose) updateLocalModules(f.root);
  }

  private remove(f: IndexedFile): void {
    this.byKey.delete(f.key);
    f.root.files.delete(f.rel);
    f.root.generation++;
    if (f.inProject && !f.root.loose) updateLocalModules(f.root);
  }

  /** Moves an open document to the root its path now belongs to. */
  private rehome(f: IndexedFile): string {
    f.root.files.delete(f.rel);
    f.root.generation++;
    const moved = this.place(f.uri, f.key);
    f.root = moved.root;
    f.rel = moved.rel;
    f.inProject = moved.inProject;
    f.model = undefined;
    f.root.files.set(f.rel, f);
    f.root.generation++;
    return f.uri;
  }

  private invalidate(f: IndexedFile): void {
    f.model = undefined;
    f.root.generation++;
  }

  /** (Re)lists a folder with the build's rules: adds new files, drops those now ignored or gone. */
  private scan(root: ProjectRoot): string[] {
    root.isIgnored = createIgnore(root.path!);
    const { pythonFiles } = listProjectFiles(root.path!);
    const listed = new Set(pythonFiles);
    const changed: string[] = [];
    for (const f of [...root.files.values()]) {
      if (listed.has(f.rel)) continue;
      const inProject = f.open ? f.rel.endsWith('.py') && !isIgnoredPath(root, f.rel) : false;
      if (!f.open) this.remove(f);
      else if (inProject !== f.inProject) {
        f.inProject = inProject;
        this.invalidate(f);
      } else continue;
      changed.push(f.uri);
    }
    for (const rel of pythonFiles) {
      const existing = root.files.get(rel);
      if (existing) {
        if (!existing.inProject) {
          existing.inProject = true;
          this.invalidate(existing);
          changed.push(existing.uri);
        }
        continue;
      }
      // Files of a nested workspace folder belong to that folder.
      const uri = childUri(root.uri, rel);
      const key = keyOf(uri);
      if (this.rootFor(key) !== root || this.byKey.has(key)) continue;
      const f: IndexedFile = { root, rel, uri, key, inProject: true };
      this.byKey.set(key, f);
      root.files.set(rel, f);
      changed.push(uri);
    }
    root.generation++;
    updateLocalModules(root);
    return changed;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
