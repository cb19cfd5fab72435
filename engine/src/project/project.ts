// The project model: every worker file analysed, plus the rules that span files (duplicate endpoint names).
// Used by the build (files on disk) and the language server (open documents override disk).
import { readWorkerFile, diskTextProblem, unreadFileWarning } from './workerFile';
import { pyprojectDependenciesWarning } from './pyproject';
import path from 'node:path';
import type { Diagnostic, EndpointSpec, FileModel, ProjectModel } from './model';
import { analyzeText } from './analyze';
import { validEndpointName } from './rules';
import { createPythonParser } from './parser';
import { listProjectFiles, localModulesOf, type ProjectFiles } from './ignore';

/** Cross-file rules over already analysed files; returns the project's full diagnostics. */
export function combine(root: string, files: FileModel[]): ProjectModel {
  const endpoints = files.flatMap((f) => f.endpoints);
  const diagnostics: Diagnostic[] = files.flatMap((f) => f.diagnostics);
  diagnostics.push(...duplicateNames(endpoints));
  return { root, files, endpoints, diagnostics };
}

const MAX_LISTED = 10;

export function duplicateNames(endpoints: readonly EndpointSpec[]): Diagnostic[] {
  const byName = new Map<string, EndpointSpec[]>();
  for (const ep of endpoints) {
    const list = byName.get(ep.name);
    if (list) list.push(ep);
    else byName.set(ep.name, [ep]);
  }
  const taken = new Set(byName.keys());
  const out: Diagnostic[] = [];
  for (const [name, list] of byName) {
    if (list.length < 2) continue;
    const allQueue = list.every((e) => e.kind === 'QUEUE');
    let n = 2;
    // Suggested from the name made valid (a duplicate may break the name rule too): never a name that breaks it.
    const base = validEndpointName(name, 4) ?? 'endpoint';
    for (const ep of list) {
      while (taken.has(`${base}-${n}`)) n++;
      const suggestion = `${base}-${n}`;
      taken.add(suggestion);
      // Listing every other place for each one would grow with the square of the count: name a few.
      const others: EndpointSpec[] = [];
      for (let i = 0; i < list.length && others.length < MAX_LISTED; i++) if (list[i] !== ep) others.push(list[i]);
      const more = list.length - 1 - others.length;
      const where = others.map((o) => `${o.file}:${o.nameRange.start.line + 1}`).join(', ') + (more > 0 ? ` and ${more} more` : '');
      out.push({
        code: allQueue ? 'duplicate-queue-function' : 'duplicate-endpoint-name',
        severity: 'error',
        message: allQueue
          ? `two queue-based functions are named "${name}" (also at ${where}): each function needs its own endpoint name, e.g. "${suggestion}".`
          : `endpoint name "${name}" is declared more than once (also at ${where}): give each endpoint a unique name, e.g. "${suggestion}".`,
        file: ep.file,
        range: ep.nameRange,
        related: others.map((o) => ({ file: o.file, range: o.nameRange, message: `"${name}" is also declared here` })),
        fix: ep.args.name?.source === 'literal' ? { kind: 'rename-endpoint', range: ep.nameRange, suggestion } : undefined,
      });
    }
  }
  return out;
}

export interface LoadOptions {
  /** Text that overrides the file on disk (editor buffers), by project-relative path. */
  overrides?: ReadonlyMap<string, string>;
  /** The project's files when the caller has just listed them (the build lists them once for the analysis and the artifact). */
  files?: ProjectFiles;
}

/** Discovers (ignore rules applied), reads and analyses every Python file under `root`. */
export async function loadProject(root: string, options: LoadOptions = {}): Promise<ProjectModel> {
  const parser = await createPythonParser();
  try {
    const { files, pythonFiles } = options.files ?? listProjectFiles(root);
    const localModules = localModulesOf(files);
    const models: FileModel[] = [];
    const unread: Diagnostic[] = [];
    for (const rel of pythonFiles) {
      const file = path.join(root, rel);
      const text = options.overrides?.get(rel) ?? readWorkerFile(file);
      if (text !== undefined) {
        models.push(analyzeText(parser, rel, text, { localModules }));
        const encoding = options.overrides?.has(rel) ? undefined : diskTextProblem(rel, file, text);
        if (encoding) unread.push(encoding);
      } else {
        const warning = unreadFileWarning(rel, file);
        if (warning) unread.push(warning);
      }
    }
    const project = combine(root, models);
    project.diagnostics.push(...unread);
    const pyproject = pyprojectDependenciesWarning(root);
    if (pyproject) project.diagnostics.push(pyproject);
    return project;
  } finally {
    parser.delete();
  }
}
