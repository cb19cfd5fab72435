// The language server: capabilities, and the wiring of each LSP message to the workspace index and the feature
// modules. Transport-agnostic: main.ts passes a stdio or IPC connection, tests an in-memory one.
import {
  CodeActionKind, DiagnosticRefreshRequest, DidChangeWatchedFilesNotification, FileChangeType, TextDocumentSyncKind, WatchKind,
  type ClientCapabilities, type Connection, type InitializeResult, type ServerCapabilities, type WorkspaceFolder,
} from 'vscode-languageserver/node';
import { createPythonParser } from '../../engine/src/project';
import { codeActions } from './codeActions';
import { codeLenses } from './codeLens';
import { completion, COMPLETION_TRIGGERS } from './completion';
import { DiagnosticsService } from './diagnostics';
import { hover } from './hover';
import { DIAGNOSTIC_SOURCE, LANGUAGE_ID, PROJECT_CHANGED_NOTIFICATION, PROJECT_MODEL_REQUEST, type ProjectModelParams } from '../../engine/src/protocol/lsp';
import { documentSymbols } from './symbols';
import { WorkspaceIndex, type FileChange, type IndexedFile } from './workspaceIndex';

interface State {
  index: WorkspaceIndex;
  diagnostics: DiagnosticsService;
  capabilities: ClientCapabilities;
  folders: WorkspaceFolder[];
}

export function startServer(connection: Connection): void {
  let state: State | undefined;

  const logError = (what: string, error: unknown) => {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    try {
      connection.console.error(`strato: ${what} failed: ${detail}`);
    } catch {
      // The connection is gone (the client stopped): nobody is left to tell.
    }
  };
  /** Every handler goes through here: a failure is logged and answered with an empty result, never a crash. */
  function guard<P, R>(what: string, fallback: R, handler: (p: P, s: State) => R): (p: P) => R {
    return (p: P) => {
      if (!state) return fallback;
      try {
        return handler(p, state);
      } catch (error) {
        logError(what, error);
        return fallback;
      }
    };
  }
  /** Runs a change of the index, then brings diagnostics up to date (push, or refresh of other files). */
  const mutate = <P>(what: string, change: (p: P, s: State) => string[]) =>
    guard<P, void>(what, undefined, (p, s) => {
      const edited = change(p, s);
      s.diagnostics.settle(edited);
    });
  const withFile = <P extends { textDocument: { uri: string } }, R>(what: string, fallback: R, handler: (p: P, f: IndexedFile, s: State) => R) =>
    guard<P, R>(what, fallback, (p, s) => {
      const f = s.index.get(p.textDocument.uri);
      return f ? handler(p, f, s) : fallback;
    });

  connection.onInitialize(async (params): Promise<InitializeResult> => {
    const capabilities = params.capabilities;
    const pull = capabilities.textDocument?.diagnostic !== undefined;
    const index = new WorkspaceIndex(await createPythonParser());
    const diagnostics = new DiagnosticsService(index, {
      mode: pull ? 'pull' : 'push',
      publish: (uri, items, version) => void connection.sendDiagnostics({ uri, diagnostics: items, version }).catch((e: unknown) => logError('publishing diagnostics', e)),
      refresh: capabilities.workspace?.diagnostics?.refreshSupport
        ? () => void connection.sendRequest(DiagnosticRefreshRequest.type).catch((e: unknown) => logError('diagnostic refresh', e))
        : undefined,
    });
    const folders = params.workspaceFolders ?? (params.rootUri ? [{ uri: params.rootUri, name: '' }] : []);
    state = { index, diagnostics, capabilities, folders };
    const server: ServerCapabilities = {
      textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
      hoverProvider: true,
      completionProvider: { triggerCharacters: COMPLETION_TRIGGERS, resolveProvider: false },
      codeLensProvider: { resolveProvider: false },
      documentSymbolProvider: { label: 'Strato endpoints' },
      workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
    };
    if (pull) server.diagnosticProvider = { identifier: DIAGNOSTIC_SOURCE, interFileDependencies: true, workspaceDiagnostics: true };
    return { capabilities: server, serverInfo: { name: 'Strato language server' } };
  });

  connection.onInitialized(
    guard('indexing the workspace', undefined, (_p: unknown, s) => {
      const started = performance.now();
      const indexed = s.folders.flatMap((f) => s.index.addFolder(f.uri));
      s.diagnostics.settle(indexed);
      connection.console.info(`strato: indexed ${indexed.length} Python files in ${Math.round(performance.now() - started)} ms`);
      if (s.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration) {
        void connection.client
          .register(DidChangeWatchedFilesNotification.type, {
            watchers: [
              { globPattern: '**/*.py' },
              { globPattern: '**/.gitignore' },
              { globPattern: '**/*', kind: WatchKind.Create | WatchKind.Delete }, // folders moved in or removed
            ],
          })
          .catch((e: unknown) => logError('registering file watchers', e));
      }
      if (s.capabilities.workspace?.workspaceFolders) {
        connection.workspace.onDidChangeWorkspaceFolders(
          mutate('changing workspace folders', (e, st) => [
            ...e.removed.flatMap((f) => st.index.removeFolder(f.uri)),
            ...e.added.flatMap((f) => st.index.addFolder(f.uri)),
          ]),
        );
      }
    }),
  );

  connection.onDidOpenTextDocument(
    mutate('opening a document', ({ textDocument: d }, s) =>
      d.languageId === LANGUAGE_ID || d.uri.endsWith('.py') ? s.index.open(d.uri, d.text, d.version) : [],
    ),
  );
  connection.onDidChangeTextDocument(mutate('editing a document', (p, s) => s.index.change(p.textDocument.uri, p.contentChanges, p.textDocument.version)));
  connection.onDidCloseTextDocument(mutate('closing a document', (p, s) => s.index.close(p.textDocument.uri)));
  connection.onDidChangeWatchedFiles(
    mutate('watched files', (p, s) => {
      const changed = s.index.fileEvents(
        p.changes.map((c): FileChange => ({ uri: c.uri, type: c.type === FileChangeType.Created ? 'created' : c.type === FileChangeType.Deleted ? 'deleted' : 'changed' })),
      );
      // The extension's views show the project model: files that came or went on disk change it.
      if (changed.length) void connection.sendNotification(PROJECT_CHANGED_NOTIFICATION).catch((e: unknown) => logError('project change notice', e));
      return changed;
    }),
  );

  connection.languages.diagnostics.on(guard('diagnostics', { kind: 'full', items: [] }, (p, s) => s.diagnostics.documentReport(p.textDocument.uri, p.previousResultId)));
  connection.languages.diagnostics.onWorkspace(guard('workspace diagnostics', { items: [] }, (p, s) => s.diagnostics.workspaceReport(p.previousResultIds)));
  connection.onCodeAction(
    withFile('code actions', [], (p, f, s) => codeActions(s.index, f, p, { documentChanges: s.capabilities.workspace?.workspaceEdit?.documentChanges === true })),
  );
  connection.onHover(withFile('hover', null, (p, f, s) => hover(s.index, f, p.position)));
  connection.onCompletion(withFile('completion', [], (p, f, s) => completion(s.index, f, p.position)));
  connection.onCodeLens(withFile('code lenses', [], (_p, f, s) => codeLenses(s.index, f)));
  connection.onDocumentSymbol(withFile('document symbols', [], (_p, f, s) => documentSymbols(s.index, f)));
  connection.onRequest(
    PROJECT_MODEL_REQUEST,
    guard('project model', null, (p: ProjectModelParams, s) => {
      const gone = s.index.vanishedEndpointFiles(p.folderUri);
      if (gone.length) s.diagnostics.settle(s.index.fileEvents(gone));
      return s.index.projectModel(p.folderUri);
    }),
  );

  connection.onShutdown(() => {
    state?.index.dispose();
    state = undefined;
  });
  connection.listen();
}
