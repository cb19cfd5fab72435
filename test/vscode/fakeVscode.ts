// A stand-in for the `vscode` module, just enough for the client modules the logic tests load with plain node (project
// folders, settings, the dev and preview terminals): importing this file registers it under that name, so import it
// before them. Tests set its state (folders, settings, the active editor, a dialog's answer) and read what it was asked.
import Module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkspaceFolder } from 'vscode';

type Listener<T> = (e: T) => unknown;

class EventEmitter<T> {
  private readonly listeners = new Set<Listener<T>>();
  readonly event = (l: Listener<T>) => {
    this.listeners.add(l);
    return { dispose: () => void this.listeners.delete(l) };
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

class Uri {
  private constructor(
    readonly scheme: string,
    readonly fsPath: string,
  ) {}
  static file(p: string): Uri {
    return new Uri('file', path.resolve(p));
  }
  static parse(s: string): Uri {
    return s.startsWith('file:') ? Uri.file(fileURLToPath(s)) : new Uri(s.slice(0, s.indexOf(':')), s);
  }
  toString(): string {
    return this.scheme === 'file' ? pathToFileURL(this.fsPath).href : this.fsPath;
  }
}

class ThemeIcon {
  constructor(readonly id: string) {}
}

const closed = new EventEmitter<FakeTerminal>();

export class FakeTerminal {
  exitStatus: { code: number } | undefined;
  /** The pid of its process: `fake.terminalPid` when it was made. */
  readonly processId = Promise.resolve(fake.terminalPid);
  /** What was typed into it (Ctrl+C is '\x03'). */
  readonly sent: string[] = [];
  constructor(
    readonly name: string,
    readonly options: { cwd?: string; shellArgs?: string[] },
  ) {}
  show(): void {}
  /** Ctrl+C ends the command and closes the terminal, as `strato dev` does once it has cleaned up. */
  sendText(text: string): void {
    this.sent.push(text);
    if (text === '\x03') setImmediate(() => this.dispose());
  }
  dispose(): void {
    const i = fake.terminals.indexOf(this);
    if (i < 0) return;
    fake.terminals.splice(i, 1);
    this.exitStatus ??= { code: 0 };
    closed.fire(this);
  }
}

export const fake = {
  folders: [] as WorkspaceFolder[],
  /** Settings by full name (`strato.pythonPath`), the same in every scope. */
  settings: {} as Record<string, unknown>,
  /** The file of the active editor. */
  activeFile: undefined as string | undefined,
  terminals: [] as FakeTerminal[],
  /** Every message shown (information, warning, error). */
  messages: [] as string[],
  /** What the user answers to the next warning dialogs (undefined: dismissed). */
  answer: undefined as string | undefined,
  /** The pid the next terminal's process has. */
  terminalPid: undefined as number | undefined,
  /** Debug sessions stopped with vscode.debug.stopDebugging. */
  stoppedSessions: [] as unknown[],
  /** The status bar items made, by name, as last set. */
  statusBar: new Map<string, { text: string; visible: boolean }>(),
};

export const folderOf = (root: string, index = 0) => ({ uri: Uri.file(root), name: path.basename(root), index }) as unknown as WorkspaceFolder;

const shown = async (message: string) => {
  fake.messages.push(message);
  return undefined;
};

class MarkdownString {
  constructor(readonly value: string) {}
}

const noEvent = () => ({ dispose: () => undefined });

const vscode = {
  EventEmitter,
  Uri,
  ThemeIcon,
  MarkdownString,
  StatusBarAlignment: { Left: 1, Right: 2 },
  commands: { executeCommand: async () => undefined },
  debug: {
    stopDebugging: async (session: unknown) => void fake.stoppedSessions.push(session),
    startDebugging: async () => true,
  },
  workspace: {
    isTrusted: true,
    createFileSystemWatcher: () => ({ onDidCreate: noEvent, onDidChange: noEvent, onDidDelete: noEvent, dispose: () => undefined }),
    onDidChangeWorkspaceFolders: noEvent,
    get workspaceFolders() {
      return fake.folders;
    },
    getWorkspaceFolder: (uri: { fsPath: string }) =>
      fake.folders.find((f) => {
        const rel = path.relative(f.uri.fsPath, uri.fsPath);
        return !rel.startsWith('..') && !path.isAbsolute(rel);
      }),
    getConfiguration: (section: string) => ({
      get: <T>(key: string, fallback: T) => (fake.settings[`${section}.${key}`] as T | undefined) ?? fallback,
      inspect: (key: string) => ({ globalValue: fake.settings[`${section}.${key}`] }),
    }),
  },
  window: {
    get activeTextEditor() {
      return fake.activeFile ? { document: { uri: Uri.file(fake.activeFile) } } : undefined;
    },
    onDidCloseTerminal: closed.event,
    createStatusBarItem: () => {
      const item = {
        name: '',
        text: '',
        visible: false,
        show: () => void fake.statusBar.set(item.name, { text: item.text, visible: (item.visible = true) }),
        hide: () => void fake.statusBar.set(item.name, { text: item.text, visible: (item.visible = false) }),
        dispose: () => undefined,
      };
      return item;
    },
    createTerminal: (o: { name: string; cwd?: string; shellArgs?: string[] }) => {
      const t = new FakeTerminal(o.name, o);
      fake.terminals.push(t);
      return t;
    },
    showWarningMessage: async (message: string) => {
      fake.messages.push(message);
      return fake.answer;
    },
    showInformationMessage: shown,
    showErrorMessage: shown,
    showWorkspaceFolderPick: async () => undefined,
  },
};

// Node's module loader resolves every `require('vscode')` to this module.
const id = path.join(__dirname, 'vscode');
const m = new Module(id);
m.filename = id;
m.loaded = true;
m.exports = vscode;
require.cache[id] = m;
const loader = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
const resolve = loader._resolveFilename;
loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
  return request === 'vscode' ? id : resolve.call(this, request, ...rest);
};
