// The Strato activity-bar views: Endpoints (code + deployed state), Jobs (submitted by this extension) and
// Environments (of the app). Refreshed on save, after deploys and runs, and by the refresh command.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { JobsClient } from '../../engine/src/api';
import { readPreviewState } from '../../engine/src/preview';
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
  private readonly disposables: vscode.Disposable[] = [];
  private folders: FolderState[] = [];
  private running: Promise<FolderState[]> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private modelOf: ModelSource = noModel;

  constructor() {
    this.jobs = new NodeTreeProvider((n) => ({ title: 'Show output', command: 'strato.showJob', arguments: [n.id.replace(/^job:/, '')] }));
    this.endpointsView = vscode.window.createTreeView(VIEW_IDS.endpoints, { treeDataProvider: this.endpoints, showCollapseAll: true });
    this.disposables.push(
      this.endpointsView,
      vscode.window.createTreeView(VIEW_IDS.jobs, { treeDataProvider: this.jobs }),
      vscode.window.createTreeView(VIEW_IDS.environments, { treeDataProvider: this.environments, showCollapseAll: true }),
      vscode.workspace.onDidSaveTextDocument((d) => d.languageId === 'python' && this.refreshSoon()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.refreshSoon()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('strato') && this.refreshSoon()),
    );
  }

  /** Takes project models from the language server from now on (and refreshes). */
  useModelSource(source: ModelSource): void {
    this.modelOf = source;
    this.refreshSoon(0);
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

  /** Re-reads the code and the control plane; concurrent calls share one run (and one follow-up). */
  async refresh(): Promise<FolderState[]> {
    if (this.running) {
      this.again = true;
      return this.running.then(() => this.refresh());
    }
    this.running = (async () => {
      try {
        const folders = await loadWorkspace(this.modelOf);
        this.folders = folders;
        const deployed = new Map<string, DeployedState>(folders.map((f) => [f.model.root, deployedStateOf(f.environments ?? [])]));
        this.endpoints.set(buildEndpointTree(folders, deployed));
        const envs = folders.flatMap((f) => f.environments ?? []);
        const previews = folders.flatMap((f) => {
          const p = readPreviewState(f.model.root);
          return p ? [buildPreviewNode(path.basename(f.model.root), p)] : [];
        });
        this.environments.set([...previews, ...(envs.length ? buildEnvironmentTree(envs) : previews.length ? [] : [this.emptyEnvironments(folders)])]);
        await this.refreshJobs();
        return folders;
      } finally {
        this.running = undefined;
      }
    })();
    const r = await this.running;
    if (this.again) {
      this.again = false;
      return this.refresh();
    }
    return r;
  }

  /** Asks the platform for the status of the jobs still in the queue or running. */
  async refreshJobs(): Promise<void> {
    const folder = this.folders[0]?.folder;
    const pending = this.jobList.pending();
    if (folder && pending.length) {
      const target = await passiveApiTarget(folder.uri);
      if (target) {
        const client = new JobsClient(target);
        for (const j of pending) {
          const s = await client.status(j.endpointId, j.id).catch(() => undefined);
          if (s) this.jobList.upsert({ ...j, status: s.status, output: s.output, error: s.error, executionTime: s.executionTime });
        }
      }
    }
    this.jobs.set(jobNodes(this.jobList));
  }

  /** Selects an endpoint in the Endpoints view. */
  async reveal(endpoint: string): Promise<boolean> {
    const node = this.endpoints.find((n) => n.contextValue?.startsWith('strato.endpoint.') === true && n.label === endpoint);
    if (!node) return false;
    await this.endpointsView.reveal(node, { select: true, focus: true, expand: true });
    return true;
  }

  private emptyEnvironments(folders: FolderState[]): TreeNode {
    const err = folders.find((f) => f.remoteError)?.remoteError;
    if (err) return { id: 'env:error', label: 'Platform unreachable', description: err, tooltip: err, icon: 'warning' };
    if (folders.some((f) => f.environments)) return { id: 'env:none', label: 'Not deployed yet', description: 'run Strato: Deploy', icon: 'info' };
    return { id: 'env:offline', label: 'No platform running', description: 'deploy or start the dev server to start one', icon: 'info' };
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
