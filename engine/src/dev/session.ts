// A development session: the project's current analysis and build, the route table, the live endpoints,
// and reloading on saved changes. A broken save keeps the last good build for the routes whose code did not change
// since it; the others (their file, or a file every endpoint reads, changed) answer with the errors: none runs code
// from before its save.
import { rmSync, statSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { ApiTarget } from '../api/http';
import { buildProject, type BuildResult } from '../build';
import { createIgnore, formatDiagnostic, listProjectFiles, loadProject, noEndpointFound, type Diagnostic, type ProjectModel } from '../project';
import { appNameFor, checkNames } from '../deploy/context';
import { DEBUG_ANNOUNCE_DIR, DEBUG_DIR_ENV, isLoopbackUrl } from '../protocol/debug';
import { UserError } from '../util/errors';
import { LiveEndpoints } from './liveEndpoints';
import { devRoutes, routeCollisions, type DevRoute } from './routes';

export interface SessionOptions {
  /** Workers listen for a debugger and announce it in <root>/.strato/debug (docs/debugging.md). */
  debug?: boolean;
  /** Saved changes reload (default); false (--no-reload): the code the session started with is served to the end. */
  reload?: boolean;
}

export interface SessionEvents {
  log?: (line: string) => void;
  /** A saved change is being reloaded (the VS Code task's problem matcher starts a new round here). */
  reloading?: () => void;
  /** A reload finished: `errors` is empty when the new code is live. */
  reloaded?: (errors: Diagnostic[], ms: number) => void;
}

export class DevSession {
  readonly appName: string;
  readonly live: LiveEndpoints;
  routes: DevRoute[] = [];
  /** The project model the routes come from (the /docs document types their calls from it). */
  model?: ProjectModel;
  build?: BuildResult;
  /** Error diagnostics of the last save, by file; routes of these files answer with them. */
  errors: Diagnostic[] = [];
  private pending: Promise<void> = Promise.resolve();
  private watcher?: FSWatcher;
  private closing = false;
  private timer?: NodeJS.Timeout;
  private generation = 0;
  /** Modification times of the project's files (what a build packages) as last read. */
  private snapshot = new Map<string, number>();
  /** The same for the files the current build was made from. */
  private built = new Map<string, number>();
  /** Files added, changed or removed since the current build, while the saved project has errors. */
  private changedSinceBuild = new Set<string>();
  private markStarted!: () => void;
  /** Resolves once start() has ended, well or not: the server listens first, and a request that comes before waits. */
  readonly started = new Promise<void>((resolve) => (this.markStarted = resolve));

  constructor(
    readonly root: string,
    readonly target: ApiTarget,
    private readonly events: SessionEvents = {},
    private readonly options: SessionOptions = {},
  ) {
    this.appName = appNameFor(root);
    const workerEnv: Record<string, string> = options.debug ? { [DEBUG_DIR_ENV]: this.debugDir } : {};
    this.live = new LiveEndpoints(root, target, this.appName, events.log, workerEnv);
  }

  /** Where workers of a `--debug` session announce their debugger. */
  get debugDir(): string {
    return path.join(this.root, ...DEBUG_ANNOUNCE_DIR.split('/'));
  }

  async start(): Promise<void> {
    try {
      await this.startOnce();
    } finally {
      this.markStarted();
    }
  }

  private async startOnce(): Promise<void> {
    checkNames(this.appName, undefined);
    if (this.options.debug) {
      if (!isLoopbackUrl(this.target.baseUrl))
        throw new UserError(
          `--debug attaches a debugger to the workers, which must run on this machine: the platform is at ${this.target.baseUrl}. Use the local ` +
            'platform (unset STRATO_API_URL) to debug, or debug one function with the Debug code lens in VS Code.',
        );
      // Announcements of an earlier session name processes that are gone.
      rmSync(this.debugDir, { recursive: true, force: true });
    }
    this.snapshot = this.takeSnapshot();
    const model = await loadProject(this.root);
    if (!model.files.length)
      throw new UserError(`no Python worker file found in ${this.root}: create one (strato init .) or run strato dev in your project's folder.`);
    if (!model.endpoints.length) throw new UserError(noEndpointFound(this.appName));
    const errors = model.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length) {
      // Serve what can be served; the broken routes say why.
      this.setRoutes(model);
      this.model = model;
      this.errors = errors;
      return;
    }
    const snapshot = this.snapshot;
    this.build = await this.buildOf(model);
    this.built = snapshot;
    this.setRoutes(model);
    this.model = model;
    await this.live.setBuild(this.build);
    await this.adoptLeftovers();
  }

  /** Takes over what an earlier session left, once there is a build to compare it with (the first good one). */
  private async adoptLeftovers(): Promise<void> {
    const left = await this.live.adoptLeftovers();
    const told = [
      left.reused.length ? `reused ${left.reused.join(', ')}` : '',
      left.updated.length ? `updated ${left.updated.join(', ')}` : '',
      left.removed.length ? `removed ${left.removed.join(', ')} (no longer declared)` : '',
    ].filter(Boolean);
    if (told.length) this.events.log?.(`an earlier strato dev of this project left live endpoints behind: ${told.join('; ')}; they go when this one stops`);
  }

  /**
   * Waits until the code on disk is the code being served: a save that the file watcher has not reported yet
   * (events arrive a few milliseconds late) is picked up here, so the next call always runs the saved code.
   */
  settled(): Promise<void> {
    if (this.options.reload !== false && this.changedOnDisk()) return this.reload();
    return this.pending;
  }

  private takeSnapshot(): Map<string, number> {
    const snap = new Map<string, number>();
    for (const f of listProjectFiles(this.root).files) {
      try {
        snap.set(f, statSync(path.join(this.root, f)).mtimeMs);
      } catch {
        // deleted in between: the next snapshot sees it
      }
    }
    return snap;
  }

  private changedOnDisk(): boolean {
    for (const [f, mtime] of this.snapshot) {
      try {
        if (statSync(path.join(this.root, f)).mtimeMs !== mtime) return true;
      } catch {
        return true;
      }
    }
    return false;
  }

  /** The project built for the dev server: dependencies kept in .strato/deps while the requirements stay the same. */
  private buildOf(model: ProjectModel): Promise<BuildResult> {
    return buildProject(this.root, {
      model,
      reuseDependencies: true,
      onProgress: (m) => {
        if (m.startsWith('installing')) this.events.log?.(`${m} (pip)...`);
        else if (m.startsWith('dependencies unchanged')) this.events.log?.(m);
      },
    });
  }

  private setRoutes(model: ProjectModel): void {
    this.routes = devRoutes(model);
    for (const c of routeCollisions(this.routes)) this.events.log?.(`warning: ${c}`);
  }

  /**
   * Errors that make `route` unusable right now: its file's, the project's when nothing was ever built, and all of them
   * when the code it would run is not its saved code (its file, or a file every endpoint reads, changed since the
   * build: the build cannot be made again until they are fixed).
   */
  errorsFor(route: DevRoute): Diagnostic[] {
    if (!this.errors.length) return [];
    const own = this.errors.filter(
      (d) => d.file === PROJECT_WIDE || d.file === route.endpoint.file || (d.related ?? []).some((r) => r.file === route.endpoint.file),
    );
    if (own.length || !this.build) return own.length ? own : this.errors;
    // A worker file is one with endpoints in the build or in the saved code (a syntax error may hide them there).
    const workerFiles = new Set([...this.build.model.endpoints, ...(this.model?.endpoints ?? [])].map((e) => e.file));
    for (const f of this.changedSinceBuild) if (f === route.endpoint.file || !workerFiles.has(f)) return this.errors;
    return [];
  }

  watch(): void {
    const isIgnored = createIgnore(this.root);
    this.watcher = watch(this.root, { recursive: true }, (_event, filename) => {
      if (!filename) return;
      const rel = filename.toString().split(path.sep).join('/');
      if (isIgnored(rel, false)) return;
      clearTimeout(this.timer);
      // Editors write a file in several steps; one short pause gathers them into one reload. Any file a build packages
      // counts (requirements.txt, a data file the code reads), not only Python files.
      this.timer = setTimeout(() => {
        if (this.changedOnDisk() || !sameFiles(this.snapshot, this.takeSnapshot())) void this.reload();
      }, 25);
    });
    // A folder made and removed at once (a test run's, an editor's, a build's) can be gone between the listing of its
    // parent and its own watch: Node reports that as an error of the whole watcher, which would end the dev server.
    // Watch again instead, and reload if a save came meanwhile.
    this.watcher.on('error', () => {
      this.watcher?.close();
      if (this.closing) return;
      setTimeout(() => {
        if (this.closing) return;
        this.watch();
        if (this.changedOnDisk()) void this.reload();
      }, 100);
    });
  }

  reload(): Promise<void> {
    const gen = ++this.generation;
    const started = Date.now();
    this.pending = this.pending.then(async () => {
      if (gen !== this.generation) return; // a newer save supersedes this one
      this.events.reloading?.();
      try {
        const snapshot = (this.snapshot = this.takeSnapshot());
        const model = await loadProject(this.root);
        const errors = model.diagnostics.filter((d) => d.severity === 'error');
        if (errors.length || !model.endpoints.length) {
          this.errors = errors.length ? errors : [projectError('no @Endpoint function found any more')];
          // The saved routes (a new file's too), each answering with the errors where its code is not the build's.
          this.changedSinceBuild = changedFiles(this.built, snapshot);
          this.setRoutes(model);
          this.model = model;
          for (const d of this.errors) this.events.log?.(describeDevError(d));
          this.events.reloaded?.(this.errors, Date.now() - started);
          return;
        }
        const build = await this.buildOf(model);
        await this.live.setBuild(build);
        const first = !this.build;
        this.build = build;
        this.built = snapshot;
        this.changedSinceBuild.clear();
        this.setRoutes(model);
        this.model = model;
        this.errors = [];
        if (first) await this.adoptLeftovers();
        this.events.reloaded?.([], Date.now() - started);
      } catch (e) {
        // The build failed (pip could not install a dependency): every route says why until a save builds again,
        // rather than run the code from before the save as if it had reloaded.
        this.errors = [projectError(`the saved project did not build: ${(e as Error).message}`)];
        this.events.log?.(describeDevError(this.errors[0]));
        this.events.reloaded?.(this.errors, Date.now() - started);
      }
    });
    return this.pending;
  }

  async close(): Promise<string[]> {
    this.closing = true;
    this.watcher?.close();
    clearTimeout(this.timer);
    await this.pending.catch(() => {});
    const removed = await this.live.removeAll();
    if (this.options.debug) rmSync(this.debugDir, { recursive: true, force: true });
    return removed;
  }
}

/** Whether two snapshots list the same files. */
function sameFiles(a: Map<string, number>, b: Map<string, number>): boolean {
  return a.size === b.size && [...a.keys()].every((f) => b.has(f));
}

/** Files added, changed or removed between two snapshots. */
function changedFiles(before: Map<string, number>, after: Map<string, number>): Set<string> {
  const out = new Set<string>();
  for (const [f, m] of after) if (before.get(f) !== m) out.add(f);
  for (const f of before.keys()) if (!after.has(f)) out.add(f);
  return out;
}

/** The `file` of an error of the whole project rather than of one file: every route answers with it. */
const PROJECT_WIDE = '.';

function projectError(message: string): Diagnostic {
  return { code: 'project-error', severity: 'error', message, file: PROJECT_WIDE, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } } };
}

/** True when every error is the project's own: no file to point at. */
export function projectWide(errors: readonly Diagnostic[]): boolean {
  return errors.length > 0 && errors.every((d) => d.file === PROJECT_WIDE);
}

/** One line for an error of the dev server: a file's error with its position, the project's without one. */
export function describeDevError(d: Diagnostic): string {
  return d.file === PROJECT_WIDE ? `${d.severity}: ${d.message} [${d.code}]` : formatDiagnostic(d);
}
