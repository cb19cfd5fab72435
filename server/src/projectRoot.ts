// A project of the index: a workspace folder (its files chosen by the build's ignore rules) or a single document
// outside every folder. It owns its files' cross-file diagnostics, computed with the engine's `combine`.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { combine, createIgnore, localModulesOf, readWorkerFile, unreadFileWarning, type Diagnostic, type FileModel } from '../../engine/src/project';
import type { OpenDocument } from './sourceFile';

export interface ProjectRoot {
  uri: string;
  /** File-system path of the folder; undefined for a loose document without one. */
  path: string | undefined;
  /** A single document outside every workspace folder, analysed alone. */
  loose: boolean;
  isIgnored: (rel: string, isDir: boolean) => boolean;
  files: Map<string, IndexedFile>;
  localModules: Set<string>;
  /** Bumped on every change of one of its files; keys the diagnostics cache. */
  generation: number;
  cache?: { generation: number; byFile: Map<string, Diagnostic[]> };
}

export interface IndexedFile {
  root: ProjectRoot;
  /** Project-relative POSIX path: the `file` of the engine's model and diagnostics. */
  rel: string;
  uri: string;
  key: string;
  open?: OpenDocument;
  /** Undefined while stale. */
  model?: FileModel;
  /** False for an open document that the build's ignore rules leave out: editor help, but no diagnostics. */
  inProject: boolean;
  /** An open document whose file was deleted (a watched-file event): its tab stays, but it is no project file. */
  deletedOnDisk?: boolean;
}

export function folderRoot(uri: string, folderPath: string): ProjectRoot {
  return { uri, path: folderPath, loose: false, isIgnored: createIgnore(folderPath), files: new Map(), localModules: new Set(), generation: 0 };
}

export function looseRoot(documentUri: string, documentPath: string | undefined): ProjectRoot {
  return {
    uri: documentUri.slice(0, documentUri.lastIndexOf('/')),
    path: documentPath ? path.dirname(documentPath) : undefined,
    loose: true,
    isIgnored: () => false,
    files: new Map(),
    localModules: new Set(),
    generation: 0,
  };
}

/** Applies the ignore rules to a path and each folder above it, as the build's directory walk does. */
export function isIgnoredPath(root: ProjectRoot, rel: string): boolean {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) if (root.isIgnored(parts.slice(0, i).join('/'), true)) return true;
  return root.isIgnored(rel, false);
}

/** The file's text, or undefined when it cannot be a worker file (the engine's rule, as in the build). */
export function readRootFile(root: ProjectRoot, rel: string): string | undefined {
  return root.path ? readWorkerFile(path.join(root.path, rel)) : undefined;
}

/** For a file readRootFile gave nothing for: the warning that its endpoints go unread (binary, too large), if any. */
export function unreadRootFile(root: ProjectRoot, rel: string): Diagnostic | undefined {
  return root.path ? unreadFileWarning(rel, path.join(root.path, rel)) : undefined;
}

/**
 * Whether the file counts in the project's diagnostics: not a document left open after its file was deleted (strato
 * check and the lenses no longer see it), nor a closed file with endpoints deleted without a watched-file event (some
 * clients send none for their own deletions: a few stats at most). An open document not saved yet counts: it is the
 * project as it is being written.
 */
export function counted(f: IndexedFile): boolean {
  if (!f.inProject || f.deletedOnDisk) return false;
  if (f.root.path === undefined || f.open || !f.model?.endpoints.length) return true;
  return existsSync(path.join(f.root.path, f.rel));
}

/** Diagnostics of every project file of the root (single-file and cross-file rules), by project-relative path. */
export function rootDiagnostics(root: ProjectRoot, modelOf: (f: IndexedFile) => FileModel): Map<string, Diagnostic[]> {
  if (root.cache?.generation === root.generation) return root.cache.byFile;
  const models: FileModel[] = [];
  for (const f of root.files.values()) if (counted(f)) models.push(modelOf(f));
  const byFile = new Map<string, Diagnostic[]>();
  for (const d of combine(root.path ?? '', models).diagnostics) {
    const list = byFile.get(d.file);
    if (list) list.push(d);
    else byFile.set(d.file, [d]);
  }
  root.cache = { generation: root.generation, byFile };
  return byFile;
}

/**
 * Recomputes the modules the project provides itself; the top-level-import rule depends on them, so when they
 * change, the files with endpoints (the only ones that rule looks at) are analysed again.
 */
export function updateLocalModules(root: ProjectRoot): void {
  const next = localModulesOf([...root.files.values()].filter((f) => f.inProject).map((f) => f.rel));
  if (next.size === root.localModules.size && [...next].every((m) => root.localModules.has(m))) return;
  root.localModules = next;
  for (const f of root.files.values()) if (f.model && f.model.endpoints.length) f.model = undefined;
  root.generation++;
}
