// Entry point of the Strato VS Code extension: the Strato views, the commands (deploy, undeploy, env get, typed
// client, dev server, run/deploy from code lenses, jobs, logs) and the language server client. Returns a small API
// for tests. Activation stays cheap (it happens in any Python workspace): this bundle holds the views and commands
// only; the language client (dist/extension-lsp.js) loads when the workspace shows a sign of Strato
// (stratoSignals.ts), a Strato view opens or a command needs the project model, and the build, deploy and client
// generator (dist/extension-heavy.js, heavy.ts) when a command uses them.
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { ProjectModel } from '../../engine/src/project';
import { Commands, PROJECT_CHANGED_NOTIFICATION, PROJECT_MODEL_REQUEST, type ProjectChangedParams, type ProjectModelParams } from '../../engine/src/protocol';
import { noModel } from './workspaceState';
import { generateClient } from './clientCommand';
import { registerDeployCommands } from './deployCommands';
import { DevServerState } from './devServer';
import { DevTerminal } from './devTerminal';
import { envGet } from './envCommands';
import { commandOutcomes, guarded, setErrorLog, type CommandOutcome } from './errors';
import { UserError } from '../../engine/src/util';
import { projectFolder } from './folders';
import { stopPreview } from './previewCommands';
import { cancelJob, retryJob, showJob, streamJob } from './jobCommands';
import { runEndpoint, type RunOptions } from './runCommand';
import { applyPythonSetting } from './settings';
import { folderLooksLikeStrato, importsStrato, isOrchestrationFile } from './stratoSignals';
import { StratoViews } from './views';
import { StratoDebugger } from './debugLaunch';
import { setInputMemory } from './inputPrompt';
import { newProject, type NewProjectOptions } from './onboarding';
import { registerSecrets } from './secrets';
import { registerTasks } from './tasks';
import { onTrustGranted, restrictedNotice } from './trust';
import type { TreeNode } from './endpointTree';
import { WorkerLogs } from './workerLogs';

let client: LanguageClient | undefined;

export interface StratoExtensionApi {
  views: StratoViews;
  languageClient: () => LanguageClient | undefined;
  /** Starts the language server if it has not started yet; resolves once it runs (undefined when it could not). */
  startLanguageServer: () => Promise<LanguageClient | undefined>;
  dev: DevTerminal;
  devServer: DevServerState;
  /** `strato deploy --preview` in its terminal. */
  preview: DevTerminal;
  debugger: StratoDebugger;
  logs: WorkerLogs;
  /** How the commands run so far ended (ok, cancelled, failed with the message shown). */
  commandOutcomes: () => readonly CommandOutcome[];
}

/** A document that shows this workspace uses Strato: a Python file importing strato, or an orchestration file. */
function isStratoDocument(d: vscode.TextDocument): boolean {
  if (d.uri.scheme !== 'file' && d.uri.scheme !== 'untitled') return false;
  if (isOrchestrationFile(path.basename(d.uri.fsPath))) return true;
  return d.languageId === 'python' && importsStrato(d.getText());
}

export async function activate(context: vscode.ExtensionContext): Promise<StratoExtensionApi> {
  applyPythonSetting();
  // What the extension does and what fails, with levels; results (job outputs, environments) go to their own channel.
  const log = vscode.window.createOutputChannel('Strato', { log: true });
  const results = vscode.window.createOutputChannel('Strato Results');
  setErrorLog(log);
  const views = new StratoViews();
  const dev = new DevTerminal();
  const devServer = new DevServerState(dev);
  const preview = new DevTerminal('Strato preview', ['deploy', '--preview'], 'vm-running');
  const logs = new WorkerLogs(views);
  const ctx = { views, results, logs, dev: devServer };

  let server: Promise<LanguageClient | undefined> | undefined;
  const startLanguageServer = () =>
    (server ??= (async () => {
      try {
        const lsp = require(path.join(__dirname, 'extension-lsp.js')) as typeof import('./languageClient');
        const started = await lsp.startLanguageClient();
        client = started;
        context.subscriptions.push(
          { dispose: () => void client?.stop() },
          started.onNotification(PROJECT_CHANGED_NOTIFICATION, (p: ProjectChangedParams) => void views.refreshModel(p?.folderUris).catch(() => undefined)),
        );
        log.info('the Strato language server runs');
        return started;
      } catch (e) {
        log.error(`the Strato language server did not start: ${(e as Error).message}`);
        void vscode.window.showErrorMessage(`Strato: the language server did not start (${(e as Error).message}); see the Strato output.`);
        return undefined;
      }
    })());
  // The views' project model is the language server's: asking for it starts the server.
  // A busy or stuck language server must not hang the views: past MODEL_WAIT_MS the request is cancelled and the
  // folder shows as not loaded, until the next refresh asks again.
  const MODEL_WAIT_MS = 20_000;
  views.useModelSource(async (folder) => {
    const started = await startLanguageServer();
    const cancel = new vscode.CancellationTokenSource();
    const timer = setTimeout(() => cancel.cancel(), MODEL_WAIT_MS);
    try {
      const params = { folderUri: folder.uri.toString() } satisfies ProjectModelParams;
      const model = await started?.sendRequest<ProjectModel | null>(PROJECT_MODEL_REQUEST, params, cancel.token).catch((e: Error) => {
        log.warn(`the language server did not give the endpoints of ${folder.name} (${e.message}); the next refresh asks again`);
        return null;
      });
      return model ?? noModel(folder);
    } finally {
      clearTimeout(timer);
      cancel.dispose();
    }
  });
  let begun = false;
  const begin = (why: string) => {
    if (begun) return;
    begun = true;
    log.info(`starting: ${why}`);
    void views.refresh().catch(() => undefined);
  };

  // The preview records itself in .strato/preview.json while it runs: the Environments view follows that file.
  const previewWatch = vscode.workspace.createFileSystemWatcher('**/.strato/preview.json');
  for (const on of [previewWatch.onDidCreate, previewWatch.onDidChange, previewWatch.onDidDelete]) context.subscriptions.push(on(() => views.refreshSoon()));
  context.subscriptions.push(
    log,
    results,
    preview,
    previewWatch,
    views,
    dev,
    devServer,
    logs,
    // The dev server's live- endpoints come and go: the Environments view (and the Endpoints view's states) follow.
    devServer.onDidChange(() => views.refreshSoon(100)),
    views.onDidShow(() => begin('a Strato view is open')),
    vscode.workspace.onDidOpenTextDocument((d) => isStratoDocument(d) && begin(`${vscode.workspace.asRelativePath(d.uri)} uses Strato`)),
    vscode.commands.registerCommand('strato.deployPreview', (arg?: unknown) =>
      guarded('deploy preview', async () => (await preview.start(await projectFolder(views, arg))).name),
    ),
    vscode.commands.registerCommand('strato.stopPreview', (arg?: unknown) => guarded('stop preview', () => stopPreview(views, preview, arg))),
    ...registerDeployCommands(views),
    vscode.commands.registerCommand('strato.refresh', () =>
      guarded('refresh', async () => (await views.refresh()).map((f) => f.model.endpoints.map((e) => e.name)).flat()),
    ),
    vscode.commands.registerCommand('strato.refreshJobs', () => guarded('refresh jobs', () => views.refreshJobs())),
    vscode.commands.registerCommand('strato.envGet', (arg?: unknown) => guarded('env get', () => envGet(views, results, arg))),
    vscode.commands.registerCommand('strato.showJob', (arg?: unknown) => guarded('show job', () => showJob(ctx, arg))),
    vscode.commands.registerCommand('strato.streamJob', (arg?: unknown) => guarded('stream job', () => streamJob(ctx, arg))),
    vscode.commands.registerCommand('strato.cancelJob', (arg?: unknown) => guarded('cancel job', () => cancelJob(ctx, arg))),
    vscode.commands.registerCommand('strato.retryJob', (arg?: unknown) => guarded('retry job', () => retryJob(ctx, arg))),
    vscode.commands.registerCommand('strato.showLogs', (arg?: unknown) => guarded('show logs', () => logs.show(arg, false))),
    vscode.commands.registerCommand('strato.followLogs', (arg?: unknown) => guarded('follow logs', () => logs.show(arg, true))),
    vscode.commands.registerCommand('strato.stopFollowingLogs', () => guarded('stop following logs', async () => logs.stop())),
    vscode.commands.registerCommand('strato.generateClient', (arg?: unknown) =>
      guarded('generate TypeScript client', () => generateClient(views, results, arg)),
    ),
    vscode.commands.registerCommand(Commands.runEndpoint, (args: unknown, o?: RunOptions) => guarded('run', () => runEndpoint(ctx, args, o))),
    vscode.commands.registerCommand('strato.startDev', (arg?: unknown) =>
      guarded('start dev server', async () => devServer.start(await projectFolder(views, arg))),
    ),
    vscode.commands.registerCommand('strato.stopDev', () => guarded('stop dev server', () => devServer.stop())),
    vscode.commands.registerCommand('strato.devActions', () => guarded('dev server', () => devServer.actions())),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('strato.pythonPath') && applyPythonSetting()),
  );
  // Debugging, onboarding, the stored API key, tasks and Workspace Trust.
  setInputMemory(context.workspaceState);
  const debug = new StratoDebugger(views, results, dev);
  context.subscriptions.push(
    ...debug.register(),
    ...(await registerSecrets(context, () => views.refreshSoon())),
    registerTasks(),
    onTrustGranted(() => client),
    restrictedNotice(views.endpointsView),
    vscode.commands.registerCommand('strato.newProject', (o?: NewProjectOptions) => guarded('new project', () => newProject(o))),
    vscode.commands.registerCommand('strato.copyUrl', (n?: TreeNode) =>
      guarded('copy URL', async () => {
        if (!n?.url)
          throw new UserError(
            "Copy URL works on an item that shows a URL: an endpoint's deployment in the Endpoints view, or an endpoint or route of the Environments view.",
          );
        await vscode.env.clipboard.writeText(n.url);
        return n.url;
      }),
    ),
  );

  // In a Strato project the language server starts now (after activation returns); elsewhere it waits for a sign.
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file' && folderLooksLikeStrato(f.uri.fsPath));
  const doc = folder ? undefined : vscode.workspace.textDocuments.find(isStratoDocument);
  if (folder || doc || views.anyVisible()) {
    const why = folder ? `${folder.name} is a Strato project` : doc ? `${vscode.workspace.asRelativePath(doc.uri)} uses Strato` : 'a Strato view is open';
    setTimeout(() => begin(why), 0);
  } else log.info('no sign of Strato in this workspace yet: the language server starts with the first file that imports strato, a Strato view or command');
  return { views, languageClient: () => client, startLanguageServer, dev, devServer, preview, debugger: debug, logs, commandOutcomes };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
