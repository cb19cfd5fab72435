// `strato dev` (or `strato deploy --preview`) in an integrated terminal the extension owns: started once and
// reused, stopped with Ctrl+C so that the command removes what it made (live- endpoints, containers) before it exits.
// One project at a time (one terminal, one dev server port): asked for another folder while it runs, it stops the
// running one first, once the user agrees.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Cancelled } from './errors';
import { bundledCli, cliProcessEnv } from './settings';
import { requireTrust } from './trust';

export class DevTerminal implements vscode.Disposable {
  constructor(
    private readonly name = 'Strato dev',
    private readonly args: readonly string[] = ['dev'],
    private readonly icon = 'server-process',
  ) {}

  private terminal: vscode.Terminal | undefined;
  /** The pid of the terminal's process: the CLI itself (the terminal runs it with no shell). */
  private pid: number | undefined;
  /** The project the terminal was started for. */
  private folder: vscode.WorkspaceFolder | undefined;
  /** The arguments after the command the running terminal was started with (`--debug`). */
  extraArgs: readonly string[] = [];
  private readonly closed = new vscode.EventEmitter<void>();
  /** The terminal went away (its command ended and the terminal was closed, or it was disposed). */
  readonly onDidClose = this.closed.event;
  private readonly sub = vscode.window.onDidCloseTerminal((t) => {
    if (t === this.terminal) {
      this.terminal = undefined;
      this.closed.fire();
    }
  });

  get running(): boolean {
    return !!this.terminal && this.terminal.exitStatus === undefined;
  }

  /** Whether the terminal runs for the project in this folder (a path). */
  runsFor(root: string): boolean {
    return this.running && !!this.folder && path.relative(this.folder.uri.fsPath, root) === '';
  }

  /** Shows the running terminal of this folder, or starts one; the running terminal of another folder is stopped first. */
  async start(folder: vscode.WorkspaceFolder, extraArgs: readonly string[] = []): Promise<vscode.Terminal> {
    const command = `strato ${this.args.join(' ')}`;
    requireTrust(`run \`${command}\``);
    if (this.terminal && this.runsFor(folder.uri.fsPath)) {
      this.terminal.show();
      return this.terminal;
    }
    if (this.running) {
      const other = this.folder?.name ?? 'another project';
      const yes = await vscode.window.showWarningMessage(
        `\`${command}\` runs for ${other} in this window. Stop it and start it for ${folder.name}?`,
        { modal: true },
        'Stop and Start',
      );
      if (yes !== 'Stop and Start') throw new Cancelled(`\`${command}\` keeps running for ${other}`);
      await this.stop();
    }
    const vars = cliProcessEnv(folder);
    this.terminal = vscode.window.createTerminal({
      name: this.name,
      cwd: folder.uri.fsPath,
      // VS Code's own executable runs as Node with ELECTRON_RUN_AS_NODE (in code-server it is Node already).
      shellPath: process.execPath,
      shellArgs: [bundledCli(), ...this.args, ...extraArgs],
      env: vars,
      iconPath: new vscode.ThemeIcon(this.icon),
      // Not restored on a reload (which would leave its server running, out of this extension's reach, and write the
      // key in its environment to the saved session): dispose hangs it up, and the command cleans up and exits.
      isTransient: true,
    });
    this.folder = folder;
    this.extraArgs = extraArgs;
    this.pid = undefined;
    const started = this.terminal;
    void Promise.resolve(started.processId).then(
      (pid) => this.terminal === started && (this.pid = pid),
      () => undefined,
    );
    this.terminal.show();
    return this.terminal;
  }

  /** Ctrl+C, then waits (bounded) for the dev server to clean up and exit; disposes the terminal if it does not. */
  async stop(timeoutMs = 15_000): Promise<boolean> {
    const t = this.terminal;
    if (!t) return false;
    if (t.exitStatus === undefined) t.sendText('\x03', false);
    const closed = await new Promise<boolean>((resolve) => {
      if (t.exitStatus !== undefined) return resolve(true);
      const timer = setTimeout(() => (sub.dispose(), resolve(false)), timeoutMs);
      const sub = vscode.window.onDidCloseTerminal((x) => {
        if (x === t) {
          clearTimeout(timer);
          sub.dispose();
          resolve(true);
        }
      });
    });
    t.dispose();
    if (this.terminal === t) {
      this.terminal = undefined;
      this.closed.fire();
    }
    return closed;
  }

  /** Brings the terminal to the front, if there is one. */
  show(): boolean {
    this.terminal?.show();
    return !!this.terminal;
  }

  /**
   * The window is going (closed, reloaded, another folder opened): the command is told so, as a hang-up (SIGHUP), and
   * cleans up and exits. A terminal process can outlive its window (code-server keeps them for a reconnection), and a
   * dev server nobody sees would keep its live endpoints and port.
   */
  dispose(): void {
    if (this.running && this.pid) {
      try {
        process.kill(this.pid, 'SIGHUP');
      } catch {
        // already gone
      }
    }
    this.sub.dispose();
    this.closed.dispose();
  }
}
