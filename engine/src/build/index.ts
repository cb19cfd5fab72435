// `strato build`: project model -> refuse on errors -> manifest -> handlers -> dependencies -> artifact.
// Everything lands in .strato/ (strato_manifest.json, artifact.tar.gz); .strato/.build/ is the work folder.
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  formatDiagnostic,
  hasProjectMarker,
  INCLUDE_FILE,
  listProjectFiles,
  loadProject,
  noEndpointFound,
  notAProject,
  type Diagnostic,
  type ProjectModel,
} from '../project';
import { UserError } from '../util/errors';
import { tryLock, type HeldLock } from '../util/pidLock';
import { pythonExecutable, pythonPackageRoot } from '../util/paths';
import { checkArtifactSize, packArtifact } from './artifact';
import { installRequirements, mergeRequirements, readRequirementsFile } from './dependencies';
import { sourceFingerprint } from './fingerprint';
import { generateHandlers } from './handlers';
import { createManifest, DEFAULT_PYTHON_VERSION, type Manifest } from './manifest';

export { baseImageName, createManifest, handlerFileName, type Manifest } from './manifest';
export { sourceFingerprint } from './fingerprint';
export { formatSize } from './artifact';

export interface BuildOptions {
  /** More packages never to install (besides the base image's). */
  exclude?: string[];
  keepBuild?: boolean;
  pythonVersion?: string;
  /** Progress messages (pip's "Collecting ..." lines and the build steps). */
  onProgress?: (message: string) => void;
  /** Diagnostics that do not stop the build (warnings). */
  onWarning?: (d: Diagnostic) => void;
  /** An analysis of the project made just before (the dev server has one); saves analysing twice. */
  model?: ProjectModel;
  /** Keep the installed dependencies in .strato/deps and reuse them while the requirements stay the same (dev saves). */
  reuseDependencies?: boolean;
}

export interface BuildResult {
  projectName: string;
  manifest: Manifest;
  model: ProjectModel;
  artifactPath: string;
  manifestPath: string;
  sizeBytes: number;
  /** Packaged source files (project-relative). */
  files: string[];
  /** Installed requirement lines. */
  dependencies: string[];
  excluded: string[];
  /** Files and folders left out because they look like secrets (list one in .stratoinclude to package it). */
  secretsLeftOut: string[];
  durationMs: number;
}

/** The build-output line naming the secret-looking files that were left out, or '' when there were none. */
export function secretsLine(secretsLeftOut: readonly string[]): string {
  if (!secretsLeftOut.length) return '';
  return (
    `left out ${secretsLeftOut.length} secret-looking file${secretsLeftOut.length === 1 ? '' : 's'}: ${secretsLeftOut.join(', ')} (name one in ` +
    `${INCLUDE_FILE} to package it on purpose)`
  );
}

export class BuildRefused extends UserError {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(
      `${diagnostics.map(formatDiagnostic).join('\n')}\nbuild refused: ${diagnostics.length} error${diagnostics.length === 1 ? '' : 's'} in the ` +
        `endpoint configuration; fix ${diagnostics.length === 1 ? 'it' : 'them'} and build again.`,
    );
    this.preformatted = true;
  }
}

export const STRATO_DIR = '.strato';

/**
 * A file the build generates (handlers, manifest, merged requirements) in place of a linked project file of that name:
 * the link is removed first, so that the write never reaches the user's own file through it.
 */
function writeGenerated(file: string, content: string): void {
  rmSync(file, { force: true });
  writeFileSync(file, content);
}

/** A symbolic link at `to` (its folder made first) to the absolute path `from`. */
function linkInto(from: string, to: string): void {
  mkdirSync(path.dirname(to), { recursive: true });
  symlinkSync(from, to);
}

export async function buildProject(root: string, options: BuildOptions = {}): Promise<BuildResult> {
  const started = performance.now();
  const progress = options.onProgress ?? (() => {});
  const projectRoot = path.resolve(root);
  const projectName = path.basename(projectRoot);
  const pythonVersion = options.pythonVersion ?? process.env.STRATO_PYTHON_VERSION ?? DEFAULT_PYTHON_VERSION;

  if (!options.model && !hasProjectMarker(projectRoot)) {
    throw new UserError(notAProject(projectRoot, 'nothing was packaged', 'strato build'));
  }
  progress('analysing the project');
  const listing = listProjectFiles(projectRoot);
  const model = options.model ?? (await loadProject(projectRoot, { files: listing }));
  const errors = model.diagnostics.filter((d) => d.severity === 'error');
  for (const w of model.diagnostics.filter((d) => d.severity === 'warning')) options.onWarning?.(w);
  if (errors.length) throw new BuildRefused(errors);
  if (model.endpoints.length === 0) {
    throw new UserError(noEndpointFound(projectName));
  }

  const { files, secretsLeftOut } = listing;
  const fingerprint = sourceFingerprint(projectRoot, files);
  const manifest = createManifest(model, projectName, fingerprint, pythonVersion);

  const outDir = path.join(projectRoot, STRATO_DIR);
  const buildDir = path.join(outDir, '.build');
  const lock = await buildLock(outDir, progress);
  try {
    rmSync(buildDir, { recursive: true, force: true });
    mkdirSync(path.join(buildDir, 'deps'), { recursive: true });
    progress(`packaging ${files.length} files`);
    // Sources and the runtime are linked, not copied: the packer follows the links (a third of a template build
    // went into copying and deleting files).
    for (const rel of files) linkInto(path.join(projectRoot, rel), path.join(buildDir, rel));
    const handlers = generateHandlers(manifest);
    for (const h of handlers) writeGenerated(path.join(buildDir, h.path), h.content);
    const manifestText = JSON.stringify(manifest, null, 2) + '\n';
    writeGenerated(path.join(buildDir, 'strato_manifest.json'), manifestText);

    const reqs = mergeRequirements(
      readRequirementsFile(path.join(projectRoot, 'requirements.txt')),
      model.endpoints.flatMap((e) => e.config.dependencies),
      options.exclude ?? [],
    );
    const requirementLines = [...reqs.options, ...reqs.install];
    writeGenerated(path.join(buildDir, 'requirements.txt'), requirementLines.join('\n') + (requirementLines.length ? '\n' : ''));
    if (reqs.install.length) {
      const what = `${reqs.install.length} dependenc${reqs.install.length === 1 ? 'y' : 'ies'} for Linux x86_64, Python ${pythonVersion}`;
      const reused = await installRequirements({
        python: pythonExecutable(),
        pythonVersion,
        target: path.join(buildDir, 'deps'),
        requirementsFile: path.join(buildDir, 'requirements.txt'),
        requirements: reqs,
        reuseIn: options.reuseDependencies ? path.join(outDir, 'deps') : undefined,
        onInstall: () => progress(`installing ${what}`),
        onLine: (l) => {
          if (/^(Collecting|Downloading|Processing|Installing|Successfully)/.test(l)) progress(l);
        },
      });
      if (reused) progress(`dependencies unchanged: the ${what} installed before are reused`);
    }
    // The runtime the handlers import; a user's own copy of strato in the requirements is replaced.
    rmSync(path.join(buildDir, 'deps', 'strato'), { recursive: true, force: true });
    linkInto(path.join(pythonPackageRoot(), 'strato'), path.join(buildDir, 'deps', 'strato'));

    progress('writing the artifact');
    const artifactPath = path.join(outDir, 'artifact.tar.gz');
    const entries = [
      ...new Set([...files.map((f) => f.split('/')[0]), ...handlers.map((h) => h.path), 'strato_manifest.json', 'requirements.txt', 'deps']),
    ].sort();
    // Written beside and renamed over: the last good artifact stays whole until this one is (Ctrl+C, a full disk).
    const partial = `${artifactPath}.partial`;
    let sizeBytes: number;
    try {
      sizeBytes = await packArtifact(buildDir, entries, partial);
      checkArtifactSize(sizeBytes);
    } catch (e) {
      rmSync(partial, { force: true });
      throw e;
    }
    renameOver(partial, artifactPath);
    const manifestPath = path.join(outDir, 'strato_manifest.json');
    writeFileSync(`${manifestPath}.partial`, manifestText);
    renameOver(`${manifestPath}.partial`, manifestPath);
    return {
      projectName,
      manifest,
      model,
      artifactPath,
      manifestPath,
      sizeBytes,
      files,
      dependencies: reqs.install,
      excluded: reqs.excluded,
      secretsLeftOut,
      durationMs: performance.now() - started,
    };
  } finally {
    try {
      if (!options.keepBuild) rmSync(buildDir, { recursive: true, force: true });
    } finally {
      lock.release(); // whatever failed: a build in this process (the dev server, the extension) would wait for it
    }
  }
}

/** How long a build waits for another build of the project to end before it gives up. */
const BUILD_WAIT_MS = 30 * 60_000;

/**
 * One build of a project at a time (two share .strato/.build and the artifact): a second waits for the first, saying
 * so. The lock names its process, so a build that was killed leaves none behind (util/pidLock.ts).
 */
async function buildLock(outDir: string, progress: (step: string) => void): Promise<HeldLock> {
  mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, 'build.lock');
  const deadline = Date.now() + BUILD_WAIT_MS;
  for (let said = false; ; said = true) {
    const got = tryLock(file);
    if ('lock' in got) return got.lock;
    if (!said) progress(`waiting for another build of this project to end (pid ${got.holder})`);
    if (Date.now() > deadline)
      throw new UserError(
        `another build of this project (pid ${got.holder}) has run for over ${BUILD_WAIT_MS / 60_000} minutes; stop it, or wait for it and build again`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Renames a file written beside its place over it; one that cannot take its place (a folder there) is not left behind. */
function renameOver(partial: string, dest: string): void {
  try {
    renameSync(partial, dest);
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  }
}
