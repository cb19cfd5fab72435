// The dev server as the window sees it: starting (its terminal runs, no state file yet), running (the project's
// .strato/dev.json names its URL: also a `strato dev` started in another terminal), stopping, or stopped. Shown in a
// status bar item (port and state; a click offers /docs, the terminal and stop), as the context key strato.devRunning
// (the Endpoints view's play button becomes stop), and to Run (which can call functions through it). The
// Environments view is refreshed when its live- endpoints come and go.
import * as vscode from 'vscode';
import { readDevState, type DevState } from '../../engine/src/dev';
import { Cancelled } from './errors';
import type { DevTerminal } from './devTerminal';

export type DevPhase = 'stopped' | 'starting' | 'running' | 'stopping';

/** What the status bar item says in each phase (state: the running server's file). */
export function devStatusText(phase: DevPhase, state?: Pick<DevState, 'port'>): string {
  if (phase === 'running' && state) return `$(server-process) Strato dev :${state.port}`;
  if (phase === 'starting') return '$(loading~spin) Strato dev starting';
  if (phase === 'stopping') return '$(loading~spin) Strato dev stopping';
  return '';
}

export const DEV_RUNNING_CONTEXT = 'strato.devRunning';

export class DevServerState implements vscode.Disposable {
  private phaseNow: DevPhase = 'stopped';
  /** The dev servers of the window's folders (state files), and the one shown: the terminal's, else the first. */
  private all: Array<{ folder: vscode.WorkspaceFolder; state: DevState }> = [];
  private current: { folder: vscode.WorkspaceFolder; state: DevState } | undefined;
  private requested: 'start' | 'stop' | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly item = vscode.window.createStatusBarItem('strato.dev', vscode.StatusBarAlignment.Left, 50);
  private readonly changed = new vscode.EventEmitter<DevPhase>();
  /** The phase changed, or the running server's endpoints did. */
  readonly onDidChange = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly terminal: DevTerminal) {
    this.item.name = 'Strato dev server';
    this.item.command = 'strato.devActions';
    const watch = vscode.workspace.createFileSystemWatcher('**/.strato/dev.json');
    for (const on of [watch.onDidCreate, watch.onDidChange, watch.onDidDelete]) this.disposables.push(on(() => this.update()));
    this.disposables.push(
      watch,
      this.item,
      this.changed,
      terminal.onDidClose(() => this.update()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.update()),
    );
    this.update();
  }

  get phase(): DevPhase {
    return this.phaseNow;
  }

  /** The running server of a folder (or of any folder), as its state file says. */
  running(folder?: vscode.WorkspaceFolder): DevState | undefined {
    if (!folder) return this.current?.state;
    return this.all.find((x) => x.folder.uri.toString() === folder.uri.toString())?.state;
  }

  async start(folder: vscode.WorkspaceFolder): Promise<string> {
    const { name } = await this.terminal.start(folder);
    this.requested = 'start';
    this.update();
    return name;
  }

  /** Ctrl+C to our terminal, or SIGINT to a server started elsewhere; waits (bounded) until it has cleaned up. */
  async stop(): Promise<boolean> {
    const shown = this.current;
    const pid = shown?.state.pid;
    if (!this.terminal.running && !pid) {
      void vscode.window.showInformationMessage('Strato: no dev server is running in this window.');
      return false;
    }
    this.requested = 'stop';
    this.update();
    try {
      if (this.terminal.running) return await this.terminal.stop();
      if (!pid) return false;
      process.kill(pid, 'SIGINT');
      const deadline = Date.now() + 15_000;
      const gone = () => !this.read().some((x) => x.state.pid === pid);
      while (Date.now() < deadline && !gone()) await new Promise((r) => setTimeout(r, 200));
      return gone();
    } finally {
      this.requested = undefined;
      this.update();
    }
  }

  /** The status bar item's click: open the API explorer, show the terminal, or stop. */
  async actions(): Promise<string | undefined> {
    const s = this.current?.state;
    const items: Array<vscode.QuickPickItem & { id: string }> = [];
    if (s) items.push({ id: 'docs', label: '$(globe) Open the API explorer', description: `${s.url}/docs` });
    if (this.terminal.running) items.push({ id: 'terminal', label: '$(terminal) Show the dev server terminal' });
    if (this.phaseNow === 'running' || this.phaseNow === 'starting') items.push({ id: 'stop', label: '$(debug-stop) Stop the dev server' });
    else items.push({ id: 'start', label: '$(play) Start the dev server' });
    const picked = await vscode.window.showQuickPick(items, {
      title: s ? `Strato dev server at ${s.url} (${s.app}, ${s.endpoints.length} live endpoint(s))` : 'Strato dev server',
    });
    if (!picked) throw new Cancelled('no dev server action chosen');
    if (picked.id === 'docs' && s) await vscode.env.openExternal(vscode.Uri.parse(`${s.url}/docs`));
    else if (picked.id === 'terminal') this.terminal.show();
    else if (picked.id === 'stop') await vscode.commands.executeCommand('strato.stopDev');
    else await vscode.commands.executeCommand('strato.startDev');
    return picked.id;
  }

  private read(): Array<{ folder: vscode.WorkspaceFolder; state: DevState }> {
    const out: Array<{ folder: vscode.WorkspaceFolder; state: DevState }> = [];
    for (const folder of vscode.workspace.workspaceFolders ?? []) {
      if (folder.uri.scheme !== 'file') continue;
      const state = readDevState(folder.uri.fsPath);
      if (state) out.push({ folder, state });
    }
    return out;
  }

  private update(): void {
    const before = JSON.stringify([this.phaseNow, this.current?.state]);
    this.all = this.read();
    // The status bar follows the terminal this window started, when it runs; another project's dev server (started in
    // another terminal) is still seen by Run for that project.
    this.current = this.all.find((x) => this.terminal.runsFor(x.folder.uri.fsPath)) ?? (this.terminal.running ? undefined : this.all[0]);
    if (this.requested === 'start' && (this.current || !this.terminal.running)) this.requested = undefined;
    this.phaseNow =
      this.requested === 'stop' ? 'stopping' : this.current ? 'running' : this.requested === 'start' || this.terminal.running ? 'starting' : 'stopped';
    const s = this.current?.state;
    this.item.text = devStatusText(this.phaseNow, s);
    this.item.tooltip = s
      ? new vscode.MarkdownString(
          `**Strato dev server** at ${s.url} for ${s.app}\n\n${s.endpoints.length} live endpoint(s)` +
            `${s.endpoints.length ? `: ${s.endpoints.map((e) => e.liveName).join(', ')}` : ' (provisioned on first call)'}\n\nClick to open /docs or stop it.`,
        )
      : 'Strato dev server';
    if (this.phaseNow === 'stopped') this.item.hide();
    else this.item.show();
    void vscode.commands.executeCommand('setContext', DEV_RUNNING_CONTEXT, this.phaseNow === 'running' || this.phaseNow === 'starting');
    // While starting, look again each second: the terminal's command may end before writing its state file.
    clearTimeout(this.timer);
    if (this.phaseNow === 'starting') this.timer = setTimeout(() => this.update(), 1000);
    if (JSON.stringify([this.phaseNow, this.current?.state]) !== before) this.changed.fire(this.phaseNow);
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
