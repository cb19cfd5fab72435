// "Attach to Dev Server" (docs/debugging.md): a parent debug session that starts the extension's `strato dev` with
// --debug when needed, then attaches a child session to each worker as it announces its debugpy port in
// <project>/.strato/debug/<pid>.json. Workers come and go (scale to zero, reloads): the parent outlives them.
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readDevState } from '../../engine/src/dev';
import { DEBUG_ANNOUNCE_DIR, isDebugAnnouncement, type DebugAnnouncement } from '../../engine/src/protocol';
import { workerAttach, type StratoAttachConfig } from './debugConfig';
import type { DevTerminal } from './devTerminal';
import { projectFolder } from './folders';
import type { StratoViews } from './views';

const POLL_MS = 400;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The announcements of running workers in a project (files of workers that are gone are skipped). */
export function readAnnouncements(root: string): DebugAnnouncement[] {
  const dir = path.join(root, ...DEBUG_ANNOUNCE_DIR.split('/'));
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const out: DebugAnnouncement[] = [];
  for (const n of names) {
    try {
      const a: unknown = JSON.parse(readFileSync(path.join(dir, n), 'utf8'));
      if (isDebugAnnouncement(a) && alive(a.pid)) out.push(a);
    } catch {
      // being replaced, or gone: the next poll reads it
    }
  }
  return out;
}

/**
 * The parent session's own debug adapter: it debugs nothing itself (its children do), so it answers the protocol's
 * requests plainly and says in the Debug Console what it waits for.
 */
class DevParentAdapter implements vscode.DebugAdapter {
  private readonly emitter = new vscode.EventEmitter<vscode.DebugProtocolMessage>();
  readonly onDidSendMessage = this.emitter.event;
  private seq = 1;

  constructor(private readonly root: string) {}

  private send(m: Record<string, unknown>): void {
    this.emitter.fire({ seq: this.seq++, ...m } as vscode.DebugProtocolMessage);
  }

  private event(event: string, body?: unknown): void {
    this.send({ type: 'event', event, body });
  }

  handleMessage(message: vscode.DebugProtocolMessage): void {
    const m = message as { type?: string; seq: number; command?: string; arguments?: { breakpoints?: unknown[] } };
    if (m.type !== 'request') return;
    const reply = (body?: unknown) => this.send({ type: 'response', request_seq: m.seq, command: m.command, success: true, body });
    switch (m.command) {
      case 'initialize':
        reply({ supportsConfigurationDoneRequest: true });
        this.event('initialized');
        break;
      case 'attach':
        reply();
        this.event('output', {
          category: 'console',
          output: `Waiting for the workers of strato dev --debug in ${this.root}: each one is attached when it starts (call a function, e.g. from the dev server's /docs).\n`,
        });
        break;
      case 'setBreakpoints':
        // Breakpoints bind in the workers' sessions.
        reply({ breakpoints: (m.arguments?.breakpoints ?? []).map(() => ({ verified: false, message: 'bound when a worker is attached' })) });
        break;
      case 'threads':
        reply({ threads: [] });
        break;
      case 'disconnect':
      case 'terminate':
        reply();
        this.event('terminated');
        break;
      default:
        reply();
    }
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

interface ParentState {
  root: string;
  justMyCode: boolean;
  attached: Set<number>;
  timer: NodeJS.Timeout;
  /** The project's dev server was seen running (this window's terminal, or its state file). */
  devSeen: boolean;
}

export class DevAttach implements vscode.Disposable {
  private readonly parents = new Map<string, ParentState>();

  constructor(
    private readonly views: StratoViews,
    private readonly dev: DevTerminal,
  ) {}

  /** The parent session's configuration; starts (or restarts) the extension's dev server with --debug first. */
  async resolve(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Promise<vscode.DebugConfiguration> {
    const c = config as vscode.DebugConfiguration & Partial<StratoAttachConfig>;
    const f = folder ?? (await projectFolder(this.views));
    if (c.startDev !== false && !(this.dev.runsFor(f.uri.fsPath) && this.dev.extraArgs.includes('--debug'))) {
      if (this.dev.runsFor(f.uri.fsPath)) {
        void vscode.window.showInformationMessage('Strato: restarting the dev server with --debug, so that its workers can be debugged.');
        await this.dev.stop();
      }
      // Running for another project, it is stopped once the user agrees: this session waits on this project's workers.
      await this.dev.start(f, ['--debug', ...(c.devArgs ?? [])]);
    }
    return { ...c, strato: { parent: true, root: f.uri.fsPath } };
  }

  adapterFor(session: vscode.DebugSession): vscode.DebugAdapterDescriptor | undefined {
    const s = session.configuration.strato as { parent?: boolean; root?: string } | undefined;
    return s?.parent && s.root ? new vscode.DebugAdapterInlineImplementation(new DevParentAdapter(s.root)) : undefined;
  }

  /** A parent session started: attach to every worker that announces itself while it lives. */
  started(session: vscode.DebugSession): void {
    const s = session.configuration.strato as { parent?: boolean; root?: string } | undefined;
    if (!s?.parent || !s.root) return;
    const state: ParentState = {
      root: s.root,
      justMyCode: session.configuration.justMyCode !== false,
      attached: new Set(),
      timer: setInterval(() => this.poll(session, state), POLL_MS),
      devSeen: false,
    };
    this.parents.set(session.id, state);
    this.poll(session, state);
  }

  ended(session: vscode.DebugSession): void {
    const state = this.parents.get(session.id);
    if (state) {
      clearInterval(state.timer);
      this.parents.delete(session.id);
    }
  }

  /** Attached workers of running parent sessions (tests and the status of the session). */
  attachedWorkers(): number[] {
    return [...this.parents.values()].flatMap((p) => [...p.attached]);
  }

  private poll(parent: vscode.DebugSession, state: ParentState): void {
    // The dev server stopped (Stop Dev Server, its terminal closed, Ctrl+C in it): no worker will come, the session ends.
    const devUp = this.dev.runsFor(state.root) || !!readDevState(state.root);
    if (devUp) state.devSeen = true;
    else if (state.devSeen) {
      this.ended(parent);
      void vscode.debug.stopDebugging(parent);
      return;
    }
    for (const a of readAnnouncements(state.root)) {
      if (state.attached.has(a.pid)) continue;
      state.attached.add(a.pid); // once: a worker that refuses the attach says why, and is not asked again
      void vscode.debug.startDebugging(parent.workspaceFolder, workerAttach(a, state.root, state.justMyCode) as vscode.DebugConfiguration, {
        parentSession: parent,
        lifecycleManagedByParent: true,
      });
    }
  }

  dispose(): void {
    for (const p of this.parents.values()) clearInterval(p.timer);
    this.parents.clear();
  }
}
