// The language server: capabilities, and the wiring of each LSP message to the workspace index and the feature
// modules. Transport-agnostic: main.ts passes a stdio or IPC connection, tests an in-memory one.
import {
  CodeActionKind,
  DiagnosticRefreshRequest,
  DidChangeWatchedFilesNotification,
  FileChangeType,
  TextDocumentSyncKind,
  WatchKind,
  type ClientCapabilities,
  type Connection,
  type InitializeResult,
  type ServerCapabilities,
  type WorkspaceFolder,
} from 'vscode-languageserver/node';
import { createPythonParser } from '../../engine/src/project';
import { codeActions } from './codeActions';
import { codeLenses } from './codeLens';
import { completion, COMPLETION_TRIGGERS } from './completion';
import { DiagnosticsService } from './diagnostics';
import { hover } from './hover';
import {
  DIAGNOSTIC_SOURCE,
  LANGUAGE_ID,
  PROJECT_CHANGED_NOTIFICATION,
  PROJECT_MODEL_REQUEST,
  type ProjectChangedParams,
  type ProjectModelParams,
} from '../../engine/src/protocol/lsp';
import { documentSymbols } from './symbols';
import { yamlCodeActions, yamlCompletion, yamlHover, yamlLspDiagnostics, yamlSymbols } from './dstack/yamlFeatures';
import { YamlWorkspace } from './dstack/yamlWorkspace';
import { WorkspaceIndex, type FileChange, type IndexedFile } from './workspaceIndex';
import { OutlineWatch } from './outline';

interface State {
  index: WorkspaceIndex;
  diagnostics: DiagnosticsService;
  capabilities: ClientCapabilities;
  folders: WorkspaceFolder[];
  yaml: YamlWorkspace;
  pull: boolean;
  /** Orchestration YAML files whose diagnostics were pushed non-empty (push mode): cleared when they pass. */
  yamlPushed: Set<string>;
  /** Says when a folder's endpoints changed (the extension's Endpoints view). */
  outline: OutlineWatch;
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
  /**
   * Runs a change of the index, then brings diagnostics up to date (push, or refresh of other files): at once, or for
   * typing (`soon`) once it pauses (diagnostics.ts EDIT_SETTLE_MS).
   */
  const mutate = <P>(what: string, change: (p: P, s: State) => string[], soon = false) =>
    guard<P, void>(what, undefined, (p, s) => {
      const edited = change(p, s);
      if (soon) s.diagnostics.settleSoon(edited);
      else s.diagnostics.settle(edited);
      if (edited.length) s.outline.schedule();
    });
  const withFile = <P extends { textDocument: { uri: string } }, R>(what: string, fallback: R, handler: (p: P, f: IndexedFile, s: State) => R) =>
    guard<P, R>(what, fallback, (p, s) => {
      const f = s.index.get(p.textDocument.uri);
      return f ? handler(p, f, s) : fallback;
    });
  /** A request on an orchestration YAML document goes to its own handler. */
  const withYaml = <P extends { textDocument: { uri: string } }, R>(
    what: string,
    fallback: R,
    handler: (p: P, doc: import('vscode-languageserver-textdocument').TextDocument, s: State) => R,
    other: (p: P) => R,
  ) =>
    guard<P, R>(what, fallback, (p, s) => {
      if (!YamlWorkspace.handles(p.textDocument.uri)) return other(p);
      const doc = s.yaml.document(p.textDocument.uri);
      return doc ? handler(p, doc, s) : fallback;
    });

  connection.onInitialize(async (params): Promise<InitializeResult> => {
    const capabilities = params.capabilities;
    const pull = capabilities.textDocument?.diagnostic !== undefined;
    const index = new WorkspaceIndex(await createPythonParser());
    const diagnostics = new DiagnosticsService(index, {
      mode: pull ? 'pull' : 'push',
      publish: (uri, items, version) =>
        void connection.sendDiagnostics({ uri, diagnostics: items, version }).catch((e: unknown) => logError('publishing diagnostics', e)),
      refresh: capabilities.workspace?.diagnostics?.refreshSupport
        ? () => void connection.sendRequest(DiagnosticRefreshRequest.type).catch((e: unknown) => logError('diagnostic refresh', e))
        : undefined,
    });
    const folders = params.workspaceFolders ?? (params.rootUri ? [{ uri: params.rootUri, name: '' }] : []);
    const yaml = new YamlWorkspace();
    for (const f of folders) yaml.addFolder(f.uri);
    const outline = new OutlineWatch(index, (folderUris) =>
      connection
        .sendNotification(PROJECT_CHANGED_NOTIFICATION, { folderUris } satisfies ProjectChangedParams)
        .catch((e: unknown) => logError('project change notice', e)),
    );
    state = { index, diagnostics, capabilities, folders, yaml, pull, yamlPushed: new Set(), outline };
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

  /** After a YAML change: push every YAML file's diagnostics, or ask a pulling client to pull again. */
  const settleYaml = (s: State) => {
    if (s.pull) {
      if (s.capabilities.workspace?.diagnostics?.refreshSupport)
        void connection.sendRequest(DiagnosticRefreshRequest.type).catch((e: unknown) => logError('diagnostic refresh', e));
      return;
    }
    const now = s.yaml.all();
    for (const [uri, items] of now) {
      if (!items.length && !s.yamlPushed.has(uri)) continue;
      void connection
        .sendDiagnostics({ uri, diagnostics: yamlLspDiagnostics(s.yaml, uri), version: s.yaml.document(uri)?.version })
        .catch((e: unknown) => logError('publishing diagnostics', e));
      if (items.length) s.yamlPushed.add(uri);
      else s.yamlPushed.delete(uri);
    }
    for (const uri of [...s.yamlPushed]) {
      if (now.has(uri)) continue;
      s.yamlPushed.delete(uri);
      void connection.sendDiagnostics({ uri, diagnostics: [] }).catch((e: unknown) => logError('publishing diagnostics', e));
    }
  };

  connection.onInitialized(
    guard('indexing the workspace', undefined, (_p: unknown, s) => {
      const started = performance.now();
      const indexed = s.folders.flatMap((f) => s.index.addFolder(f.uri));
      s.diagnostics.settle(indexed);
      settleYaml(s);
      s.outline.schedule(); // a moment later: what later changes compare with
      connection.console.info(`strato: indexed ${indexed.length} Python files in ${Math.round(performance.now() - started)} ms`);
      if (s.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration) {
        void connection.client
          .register(DidChangeWatchedFilesNotification.type, {
            watchers: [
              { globPattern: '**/*.py' },
              { globPattern: '**/{.dstack.yml,*.dstack.yml,.dstack.yaml,*.dstack.yaml,.dstack/server/config.yml}' },
              { globPattern: '**/.gitignore' },
              { globPattern: '**/*', kind: WatchKind.Create | WatchKind.Delete }, // folders moved in or removed
            ],
          })
          .catch((e: unknown) => logError('registering file watchers', e));
      }
      if (s.capabilities.workspace?.workspaceFolders) {
        connection.workspace.onDidChangeWorkspaceFolders(
          mutate('changing workspace folders', (e, st) => {
            for (const f of e.removed) st.yaml.removeFolder(f.uri);
            for (const f of e.added) st.yaml.addFolder(f.uri);
            settleYaml(st);
            return [...e.removed.flatMap((f) => st.index.removeFolder(f.uri)), ...e.added.flatMap((f) => st.index.addFolder(f.uri))];
          }),
        );
      }
    }),
  );

  connection.onDidOpenTextDocument(
    mutate('opening a document', ({ textDocument: d }, s) => {
      if (YamlWorkspace.handles(d.uri)) {
        s.yaml.open(d.uri, d.text, d.version);
        settleYaml(s);
        return [];
      }
      return d.languageId === LANGUAGE_ID || d.uri.endsWith('.py') ? s.index.open(d.uri, d.text, d.version) : [];
    }),
  );
  connection.onDidChangeTextDocument(
    mutate(
      'editing a document',
      (p, s) => {
        if (s.yaml.change(p.textDocument.uri, p.contentChanges, p.textDocument.version)) {
          settleYaml(s);
          return [];
        }
        return s.index.change(p.textDocument.uri, p.contentChanges, p.textDocument.version);
      },
      true,
    ),
  );
  connection.onDidCloseTextDocument(
    mutate('closing a document', (p, s) => {
      if (s.yaml.close(p.textDocument.uri)) {
        settleYaml(s);
        return [];
      }
      return s.index.close(p.textDocument.uri);
    }),
  );
  connection.onDidChangeWatchedFiles(
    mutate('watched files', (p, s) => {
      // The YAML analysis keeps the folder's listing between keystrokes: a YAML file changed, a file or folder came
      // or went, or an ignore file changed (what is listed) make it list again.
      const relists = (c: (typeof p.changes)[number]) => YamlWorkspace.handles(c.uri) || c.type !== FileChangeType.Changed || c.uri.endsWith('/.gitignore');
      if (p.changes.some(relists)) {
        s.yaml.invalidate();
        settleYaml(s);
      }
      const changed = s.index.fileEvents(
        p.changes.map((c): FileChange => ({
          uri: c.uri,
          type: c.type === FileChangeType.Created ? 'created' : c.type === FileChangeType.Deleted ? 'deleted' : 'changed',
        })),
      );
      return changed;
    }),
  );

  connection.languages.diagnostics.on(
    guard('diagnostics', { kind: 'full', items: [] }, (p, s) =>
      YamlWorkspace.handles(p.textDocument.uri)
        ? { kind: 'full', items: yamlLspDiagnostics(s.yaml, p.textDocument.uri) }
        : s.diagnostics.documentReport(p.textDocument.uri, p.previousResultId),
    ),
  );
  connection.languages.diagnostics.onWorkspace(
    guard('workspace diagnostics', { items: [] }, (p, s) => {
      const report = s.diagnostics.workspaceReport(p.previousResultIds);
      const had = new Set(p.previousResultIds.map((r) => r.uri));
      for (const [uri, items] of s.yaml.all()) {
        if (!items.length && !had.has(uri)) continue;
        report.items.push({ kind: 'full', uri, version: s.yaml.document(uri)?.version ?? null, items: yamlLspDiagnostics(s.yaml, uri) });
      }
      return report;
    }),
  );
  connection.onCodeAction(
    withYaml(
      'code actions',
      [],
      (p, doc, s) => yamlCodeActions(s.yaml, doc, p),
      withFile('code actions', [], (p, f, s) =>
        codeActions(s.index, f, p, { documentChanges: s.capabilities.workspace?.workspaceEdit?.documentChanges === true }),
      ),
    ),
  );
  connection.onHover(
    withYaml(
      'hover',
      null,
      (p, doc) => yamlHover(doc, p.position),
      withFile('hover', null, (p, f, s) => hover(s.index, f, p.position)),
    ),
  );
  connection.onCompletion(
    withYaml(
      'completion',
      [],
      (p, doc) => yamlCompletion(doc, p.position),
      withFile('completion', [], (p, f, s) => completion(s.index, f, p.position)),
    ),
  );
  connection.onCodeLens(withFile('code lenses', [], (_p, f, s) => codeLenses(s.index, f)));
  connection.onDocumentSymbol(
    withYaml(
      'document symbols',
      [],
      (_p, doc) => yamlSymbols(doc),
      withFile('document symbols', [], (_p, f, s) => documentSymbols(s.index, f)),
    ),
  );
  connection.onRequest(
    PROJECT_MODEL_REQUEST,
    guard('project model', null, (p: ProjectModelParams, s) => {
      const gone = s.index.vanishedEndpointFiles(p.folderUri);
      if (gone.length) {
        s.diagnostics.settle(s.index.fileEvents(gone));
        s.outline.schedule();
      }
      return s.index.projectModel(p.folderUri);
    }),
  );

  connection.onShutdown(() => {
    state?.outline.dispose();
    state?.diagnostics.dispose();
    state?.index.dispose();
    state = undefined;
  });
  connection.listen();
}
