// The Strato activity-bar views: Endpoints (code + deployed state), Jobs (submitted by this extension) and
// Environments (of the app). The code side follows the language server (it says when a folder's endpoints
// changed); the control plane is read at start, after deploys, undeploys and dev server changes, and on refresh.
// Jobs still queued or running are polled while there are some.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { JobsClient } from '../../engine/src/api';
import { readPreviewState } from '../../engine/src/preview/state';
import { Coalesced } from './coalesced';
import { buildEndpointTree, buildEnvironmentTree, buildPreviewNode, deployedStateOf, type DeployedState, type TreeNode } from './endpointTree';
import { JobList, jobNodes } from './jobs';
import { NodeTreeProvider, openLocationCommand } from './treeProvider';
import { passiveApiTarget } from './settings';
import { loadFolder, loadWorkspace, noModel, type FolderState, type ModelSource } from './workspaceState';

export const VIEW_IDS = { endpoints: 'strato.endpoints', jobs: 'strato.jobs', environments: 'strato.environments' } as const;

export class StratoViews implements vscode.Disposable {
  readonly endpoints = new NodeTreeProvider(openLocationCommand);
  readonly environments = new NodeTreeProvider(undefined, true);
  readonly jobs: NodeTreeProvider;
  readonly jobList = new JobList();
  readonly endpointsView: vscode.TreeView<TreeNode>;
  private readonly treeViews: vscode.TreeView<TreeNode>[];
  private readonly disposables: vscode.Disposable[] = [];
  private folders: FolderState[] = [];
  private readonly refreshing = new Coalesced(() => this.readAll());
  private timer: NodeJS.Timeout | undefined;
  private jobTimer: NodeJS.Timeout | undefined;
  private modelOf: ModelSource = noModel;
  private readonly shown = new vscode.EventEmitter<void>();
  /** A Strato view became visible (the extension starts its language server then, if it has not yet). */
  readonly onDidShow = this.shown.event;

  constructor() {
    this.jobs = new NodeTreeProvider((n) => ({ title: 'Show output', command: 'strato.showJob', arguments: [n.id.replace(/^job:/, '')] }));
    this.endpointsView = vscode.window.createTreeView(VIEW_IDS.endpoints, { treeDataProvider: this.endpoints, showCollapseAll: true });
    const views = (this.treeViews = [
      this.endpointsView,
      vscode.window.createTreeView(VIEW_IDS.jobs, { treeDataProvider: this.jobs }),
      vscode.window.createTreeView(VIEW_IDS.environments, { treeDataProvider: this.environments, showCollapseAll: true }),
    ]);
    this.disposables.push(
      ...views,
      this.shown,
      ...views.map((v) => v.onDidChangeVisibility((e) => e.visible && this.shown.fire())),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.refreshSoon()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('strato') && this.refreshSoon()),
    );
  }

  /** Whether one of the views is on screen now. */
  anyVisible(): boolean {
    return this.treeViews.some((v) => v.visible);
  }

  /** Where project models come from from now on (the language server, started by the source on first use). */
  useModelSource(source: ModelSource): void {
    this.modelOf = source;
  }

  /** One folder's state, read now (for a folder the views have not listed). */
  loadFolder(folder: vscode.WorkspaceFolder): Promise<FolderState> {
    return loadFolder(folder, this.modelOf);
  }

  /** The last state the views were built from. */
  state(): FolderState[] {
    return this.folders;
  }

  refreshSoon(delayMs = 300): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh().catch(() => undefined), delayMs);
  }

  /** Re-reads the code and the control plane; overlapping calls share runs (coalesced.ts). */
  refresh(): Promise<FolderState[]> {
    return this.refreshing.run();
  }

  private async readAll(): Promise<FolderState[]> {
    const folders = await loadWorkspace(this.modelOf);
    this.folders = folders;
    const deployed = new Map<string, DeployedState>(folders.map((f) => [f.model.root, deployedStateOf(f.environments ?? [])]));
    this.endpoints.set(buildEndpointTree(folders, deployed));
    const envs = folders.flatMap((f) => f.environments ?? []);
    const previews = folders.flatMap((f) => {
      const p = readPreviewState(f.model.root);
      return p ? [buildPreviewNode(path.basename(f.model.root), p, f.model.root)] : [];
    });
    const roots = new Map(folders.map((f) => [f.app, f.model.root]));
    this.environments.set([...previews, ...(envs.length ? buildEnvironmentTree(envs, roots) : previews.length ? [] : [this.emptyEnvironments(folders)])]);
    await this.refreshJobs();
    return folders;
  }

  /**
   * Re-reads the code side only: the project model of each folder from the language server, with the deployed state
   * read last (the language server said that endpoints changed: the control plane did not).
   */
  async refreshModel(folderUris?: readonly string[]): Promise<void> {
    const known = new Set(this.folders.map((f) => f.folder.uri.toString()));
    if (this.refreshing.running || folderUris?.some((u) => !known.has(u))) return void (await this.refresh());
    const folders = await Promise.all(this.folders.map(async (f) => ({ ...f, model: await this.modelOf(f.folder) })));
    if (!folders.length) return void (await this.refresh());
    this.folders = folders;
    this.endpoints.set(buildEndpointTree(folders, new Map(folders.map((f) => [f.model.root, deployedStateOf(f.environments ?? [])]))));
  }

  /** Asks the platform for the status of the jobs still in the queue or running. */
  async refreshJobs(): Promise<void> {
    const fallback = this.folders[0]?.folder;
    for (const j of this.jobList.pending()) {
      const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.toString() === j.folder) ?? fallback;
      const target = folder && (await passiveApiTarget(folder.uri).catch(() => undefined));
      if (!target) continue;
      const s = await new JobsClient(target).status(j.endpointId, j.id).catch(() => undefined);
      if (s) this.jobList.upsert({ ...j, status: s.status, output: s.output, error: s.error, executionTime: s.executionTime });
    }
    this.jobs.set(jobNodes(this.jobList));
    if (this.jobList.pending().length) this.watchJobs();
  }

  /** Polls the jobs still queued or running every second or so, until none is left. */
  watchJobs(): void {
    if (this.jobTimer) return;
    this.jobTimer = setTimeout(() => {
      this.jobTimer = undefined;
      void this.refreshJobs().catch(() => undefined);
    }, 1000);
  }

  /** Selects an endpoint in the Endpoints view. */
  async reveal(endpoint: string): Promise<boolean> {
    const node = this.endpoints.find((n) => n.contextValue?.startsWith('strato.endpoint.') === true && n.label === endpoint);
    if (!node) return false;
    await this.endpointsView.reveal(node, { select: true, focus: true, expand: true });
    return true;
  }

  private emptyEnvironments(folders: FolderState[]): TreeNode {
    const settings = folders.find((f) => f.settingsError)?.settingsError;
    if (settings) return { id: 'env:settings', label: 'Platform settings need a fix', description: settings, tooltip: settings, icon: 'warning' };
    const err = folders.find((f) => f.remoteError)?.remoteError;
    if (err) return { id: 'env:error', label: 'Platform unreachable', description: err, tooltip: err, icon: 'warning' };
    if (folders.some((f) => f.environments)) return { id: 'env:none', label: 'Not deployed yet', description: 'run Strato: Deploy', icon: 'info' };
    return { id: 'env:offline', label: 'No platform running', description: 'deploy or start the dev server to start one', icon: 'info' };
  }

  dispose(): void {
    clearTimeout(this.timer);
    clearTimeout(this.jobTimer);
    for (const d of this.disposables) d.dispose();
  }
}
