// Tells the extension when what its Endpoints view shows (each folder's endpoints, functions, routes and where they
// are) changed: checked a moment after edits, saves and file events, and sent only on a real change, so that a save
// of a file that declares nothing costs the views nothing.
import type { ProjectModel } from '../../engine/src/project';
import type { WorkspaceIndex } from './workspaceIndex';

/** What the Endpoints view is built from: a change of anything else (a body, a comment) leaves the key alone. */
export function outlineKey(model: ProjectModel): string {
  return JSON.stringify(
    model.endpoints.map((e) => [
      e.name,
      e.kind,
      e.file,
      e.callRange.start.line,
      e.config.gpu ?? null,
      e.config.cpu ?? null,
      e.functions.map((f) => [f.name, f.range.start.line, f.params.map((p) => p.name), f.summary ?? null]),
      e.routes.map((r) => [r.method, r.path, r.function.name, r.range.start.line, r.function.summary ?? null]),
    ]),
  );
}

export class OutlineWatch {
  private readonly last = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly index: WorkspaceIndex,
    private readonly notify: (folderUris: string[]) => void,
    private readonly delayMs = 200,
  ) {}

  /** Checks a moment from now (a burst of edits or file events is checked once). */
  schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.check(), this.delayMs);
    this.timer.unref();
  }

  /** Sends the folders whose outline differs from the one last seen (none the first time a folder is seen). */
  check(): void {
    const changed: string[] = [];
    for (const root of this.index.folders()) {
      if (root.loose || !root.path) continue;
      const model = this.index.projectModel(root.uri);
      if (!model) continue;
      const key = outlineKey(model);
      const before = this.last.get(root.uri);
      this.last.set(root.uri, key);
      if (before !== undefined && before !== key) changed.push(root.uri);
    }
    if (changed.length) this.notify(changed);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}
