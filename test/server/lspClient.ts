// A small LSP client for tests: drives the real server over stdio or IPC (a child process) or in-memory streams
// (the server in this process), keeps the documents it opened, and records what the server sends on its own.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  createConnection,
  createMessageConnection,
  IPCMessageReader,
  IPCMessageWriter,
  ProposedFeatures,
  StreamMessageReader,
  StreamMessageWriter,
  type ClientCapabilities,
  type CodeAction,
  type CodeLens,
  type CompletionItem,
  type CompletionList,
  type Diagnostic,
  type DocumentSymbol,
  type FileEvent,
  type Hover,
  type InitializeResult,
  type MessageConnection,
  type Position,
  type PublishDiagnosticsParams,
  type Range,
  type TextDocumentContentChangeEvent,
  type TextEdit,
  type WorkspaceDiagnosticReport,
  type WorkspaceEdit,
} from 'vscode-languageserver/node';
import { startServer } from '../../server/src/server';

export const REPO = path.resolve(__dirname, '..', '..');
export const FIXTURES = path.join(REPO, 'test', 'fixtures', 'lsp');

export const uriOf = (file: string): string => pathToFileURL(file).href;

export interface InitOptions {
  /** Workspace folder paths (none: no folder at all). */
  folders?: string[];
  /** Pull diagnostics (default) or push only. */
  pull?: boolean;
  /** Whether the client supports workspace/diagnostic/refresh (default true). */
  refresh?: boolean;
  documentChanges?: boolean;
}

export class TestClient {
  readonly published = new Map<string, PublishDiagnosticsParams>();
  /** Every publication, in order (how many a burst of edits caused). */
  readonly publications: PublishDiagnosticsParams[] = [];
  readonly logs: Array<{ type: number; message: string }> = [];
  readonly registrations: Array<{ method: string; registerOptions?: unknown }> = [];
  refreshes = 0;
  private readonly docs = new Map<string, TextDocument>();
  private listeners: Array<() => void> = [];

  private constructor(
    readonly connection: MessageConnection,
    private readonly dispose: () => Promise<void>,
    readonly child?: ChildProcess,
  ) {
    connection.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      this.published.set(p.uri, p);
      this.publications.push(p);
      this.notify();
    });
    connection.onNotification('window/logMessage', (p: { type: number; message: string }) => {
      this.logs.push(p);
      this.notify();
    });
    connection.onRequest('client/registerCapability', (p: { registrations: Array<{ method: string; registerOptions?: unknown }> }) => {
      this.registrations.push(...p.registrations);
      this.notify();
      return null;
    });
    connection.onRequest('client/unregisterCapability', () => null);
    connection.onRequest('workspace/diagnostic/refresh', () => {
      this.refreshes++;
      this.notify();
      return null;
    });
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.listen();
  }

  /** The server in this process, over in-memory streams (fast; the server never calls process.exit). */
  static inMemory(): TestClient {
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    const server = createConnection(ProposedFeatures.all, new StreamMessageReader(toServer), new StreamMessageWriter(toClient));
    startServer(server);
    const client = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
    return new TestClient(client, async () => {
      client.dispose();
      server.dispose();
      toServer.end();
      toClient.end();
    });
  }

  /** A server process over stdio, e.g. `node --import tsx server/src/main.ts --stdio`. */
  static stdio(args: string[]): TestClient {
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] });
    const client = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    return new TestClient(client, async () => client.dispose(), child);
  }

  /** A server process over Node IPC, the way vscode-languageclient starts it (`--node-ipc`). */
  static ipc(args: string[]): TestClient {
    const child = spawn(process.execPath, [...args, '--node-ipc'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const client = createMessageConnection(new IPCMessageReader(child), new IPCMessageWriter(child));
    return new TestClient(client, async () => client.dispose(), child);
  }

  async initialize(options: InitOptions = {}): Promise<InitializeResult> {
    const pull = options.pull ?? true;
    const capabilities: ClientCapabilities = {
      textDocument: {
        synchronization: { dynamicRegistration: false },
        publishDiagnostics: { relatedInformation: true, versionSupport: true },
        codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix'] } }, isPreferredSupport: true },
        hover: { contentFormat: ['markdown', 'plaintext'] },
        completion: { completionItem: { snippetSupport: false, documentationFormat: ['markdown'] } },
        documentSymbol: { hierarchicalDocumentSymbolSupport: true },
        codeLens: {},
        ...(pull ? { diagnostic: { dynamicRegistration: false, relatedDocumentSupport: true } } : {}),
      },
      workspace: {
        workspaceFolders: true,
        didChangeWatchedFiles: { dynamicRegistration: true },
        workspaceEdit: { documentChanges: options.documentChanges ?? false },
        ...((options.refresh ?? true) ? { diagnostics: { refreshSupport: true } } : {}),
      },
    };
    const folders = (options.folders ?? []).map((f) => ({ uri: uriOf(f), name: path.basename(f) }));
    const result = (await this.connection.sendRequest('initialize', {
      processId: null,
      rootUri: folders[0]?.uri ?? null,
      workspaceFolders: folders.length ? folders : null,
      capabilities,
    })) as InitializeResult;
    await this.connection.sendNotification('initialized', {});
    return result;
  }

  async open(uri: string, text: string): Promise<void> {
    this.docs.set(uri, TextDocument.create(uri, 'python', 1, text));
    await this.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text } });
  }

  text(uri: string): string {
    return this.doc(uri).getText();
  }

  /** Sends content changes (incremental when they have ranges), keeping the local copy in step. */
  async change(uri: string, changes: TextDocumentContentChangeEvent[]): Promise<void> {
    const doc = this.doc(uri);
    const version = doc.version + 1;
    this.docs.set(uri, TextDocument.update(doc, changes, version));
    await this.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges: changes });
  }

  /** Replaces the range between two offsets with `text`, as one incremental change. */
  async replace(uri: string, start: number, end: number, text: string): Promise<void> {
    const doc = this.doc(uri);
    await this.change(uri, [{ range: { start: doc.positionAt(start), end: doc.positionAt(end) }, text }]);
  }

  /** Applies a workspace edit to the open documents it touches, as the editor would. */
  async apply(edit: WorkspaceEdit): Promise<void> {
    const byUri = new Map<string, TextEdit[]>();
    for (const [uri, edits] of Object.entries(edit.changes ?? {})) byUri.set(uri, edits);
    for (const dc of edit.documentChanges ?? []) if ('edits' in dc) byUri.set(dc.textDocument.uri, dc.edits as TextEdit[]);
    for (const [uri, edits] of byUri) {
      const doc = this.doc(uri);
      // Send from the end, so that each change's range is valid against the text left by the previous one.
      const sorted = [...edits].sort((a, b) => doc.offsetAt(b.range.start) - doc.offsetAt(a.range.start));
      await this.change(
        uri,
        sorted.map((e) => ({ range: e.range, text: e.newText })),
      );
    }
  }

  async close(uri: string): Promise<void> {
    this.docs.delete(uri);
    await this.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }

  async watched(changes: FileEvent[]): Promise<void> {
    await this.connection.sendNotification('workspace/didChangeWatchedFiles', { changes });
  }

  async foldersChanged(added: string[], removed: string[]): Promise<void> {
    const f = (p: string) => ({ uri: uriOf(p), name: path.basename(p) });
    await this.connection.sendNotification('workspace/didChangeWorkspaceFolders', { event: { added: added.map(f), removed: removed.map(f) } });
  }

  async diagnostics(uri: string): Promise<Diagnostic[]> {
    const report = (await this.connection.sendRequest('textDocument/diagnostic', { textDocument: { uri } })) as { kind: string; items?: Diagnostic[] };
    return report.items ?? [];
  }

  async report(uri: string, previousResultId?: string): Promise<{ kind: string; resultId?: string; items?: Diagnostic[] }> {
    return this.connection.sendRequest('textDocument/diagnostic', { textDocument: { uri }, previousResultId });
  }

  async workspaceDiagnostics(previousResultIds: Array<{ uri: string; value: string }> = []): Promise<WorkspaceDiagnosticReport> {
    return this.connection.sendRequest('workspace/diagnostic', { previousResultIds });
  }

  async codeActions(uri: string, range: Range, diagnostics: Diagnostic[] = []): Promise<CodeAction[]> {
    return ((await this.connection.sendRequest('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics } })) ?? []) as CodeAction[];
  }

  async hover(uri: string, position: Position): Promise<Hover | null> {
    return this.connection.sendRequest('textDocument/hover', { textDocument: { uri }, position });
  }

  async completion(uri: string, position: Position): Promise<CompletionItem[]> {
    const r = (await this.connection.sendRequest('textDocument/completion', { textDocument: { uri }, position })) as CompletionItem[] | CompletionList | null;
    return Array.isArray(r) ? r : (r?.items ?? []);
  }

  async codeLenses(uri: string): Promise<CodeLens[]> {
    return ((await this.connection.sendRequest('textDocument/codeLens', { textDocument: { uri } })) ?? []) as CodeLens[];
  }

  async symbols(uri: string): Promise<DocumentSymbol[]> {
    return ((await this.connection.sendRequest('textDocument/documentSymbol', { textDocument: { uri } })) ?? []) as DocumentSymbol[];
  }

  /** Position of the first occurrence of `needle` in an open document (plus `delta` characters). */
  position(uri: string, needle: string, delta = 0): Position {
    const text = this.text(uri);
    const at = text.indexOf(needle);
    if (at < 0) throw new Error(`"${needle}" not found in ${uri}`);
    return this.doc(uri).positionAt(at + delta);
  }

  /** Resolves once `check` holds, re-checked on every message the server sends on its own. */
  async until<T>(check: () => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
    const first = check();
    if (first) return first;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners = this.listeners.filter((l) => l !== listener);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const listener = () => {
        const v = check();
        if (!v) return;
        clearTimeout(timer);
        this.listeners = this.listeners.filter((l) => l !== listener);
        resolve(v);
      };
      this.listeners.push(listener);
    });
  }

  /** Errors the server logged (a handler that threw). */
  errors(): string[] {
    return this.logs.filter((l) => l.type === 1).map((l) => l.message);
  }

  /** shutdown + exit for a child process (returns its exit code); shutdown and dispose in memory. */
  async stop(): Promise<number | null> {
    await this.connection.sendRequest('shutdown');
    if (!this.child) {
      await this.dispose();
      return null;
    }
    const exited = new Promise<number | null>((resolve) => this.child!.once('exit', (code) => resolve(code)));
    await this.connection.sendNotification('exit');
    const code = await exited;
    await this.dispose();
    return code;
  }

  private doc(uri: string): TextDocument {
    const d = this.docs.get(uri);
    if (!d) throw new Error(`${uri} is not open`);
    return d;
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }
}

/** The stdio command that runs the server from source. */
export const SOURCE_SERVER = ['--import', 'tsx', 'server/src/main.ts'];
