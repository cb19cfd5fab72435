// Entry point of the Strato VS Code extension: starts the language server client, the Strato views and the
// commands (deploy, undeploy, env get, typed client, dev server, run/deploy from code lenses). Returns a small API for tests.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { ProjectModel } from '../../engine/src/project';
import { Commands, PROJECT_CHANGED_NOTIFICATION, PROJECT_MODEL_REQUEST, type ProjectModelParams } from '../../engine/src/protocol';
import { noModel } from './workspaceState';
import { generateClient, type GenerateClientArg } from './clientCommand';
import { registerDeployCommands } from './deployCommands';
import { DevTerminal } from './devTerminal';
import { envGet, showJob } from './envCommands';
import { guarded, setErrorLog } from './errors';
import { UserError } from '../../engine/src/util';
import { projectFolder } from './folders';
import { startLanguageClient } from './languageClient';
import { runEndpoint, type RunOptions } from './runCommand';
import { applyPythonSetting } from './settings';
import { StratoViews } from './views';
import { StratoDebugger } from './debugLaunch';
import { setInputMemory } from './inputPrompt';
import { newProject, type NewProjectOptions } from './onboarding';
import { registerSecrets } from './secrets';
import { registerTasks } from './tasks';
import { onTrustGranted, restrictedNotice } from './trust';
import type { TreeNode } from './endpointTree';

let client: LanguageClient | undefined;

export interface StratoExtensionApi {
  views: StratoViews;
  languageClient: () => LanguageClient | undefined;
  dev: DevTerminal;
  /** `strato deploy --preview` in its terminal. */
  preview: DevTerminal;
  debugger: StratoDebugger;
}

export async function activate(context: vscode.ExtensionContext): Promise<StratoExtensionApi> {
  applyPythonSetting();
  const output = vscode.window.createOutputChannel('Strato');
  setErrorLog(output);
  const views = new StratoViews();
  const dev = new DevTerminal();
  const preview = new DevTerminal('Strato preview', ['deploy', '--preview'], 'vm-running');
  // The preview records itself in .strato/preview.json while it runs: the Environments view follows that file.
  const previewWatch = vscode.workspace.createFileSystemWatcher('**/.strato/preview.json');
  for (const on of [previewWatch.onDidCreate, previewWatch.onDidChange, previewWatch.onDidDelete]) context.subscriptions.push(on(() => views.refreshSoon()));
  context.subscriptions.push(
    preview,
    previewWatch,
    vscode.commands.registerCommand('strato.deployPreview', (folder?: string) =>
      guarded('deploy preview', async () => preview.start(await projectFolder(views, folder)).name),
    ),
    vscode.commands.registerCommand('strato.stopPreview', () => guarded('stop preview', () => preview.stop())),
    output,
    views,
    dev,
    ...registerDeployCommands(views),
    vscode.commands.registerCommand('strato.refresh', () =>
      guarded('refresh', async () => (await views.refresh()).map((f) => f.model.endpoints.map((e) => e.name)).flat()),
    ),
    vscode.commands.registerCommand('strato.refreshJobs', () => guarded('refresh jobs', () => views.refreshJobs())),
    vscode.commands.registerCommand('strato.envGet', (arg?: string | { environment?: string; folder?: string }) =>
      guarded('env get', () => envGet(views, output, arg)),
    ),
    vscode.commands.registerCommand('strato.showJob', (id: string) => guarded('show job', async () => showJob(views, output, id))),
    vscode.commands.registerCommand('strato.generateClient', (arg?: GenerateClientArg) =>
      guarded('generate TypeScript client', () => generateClient(views, output, arg)),
    ),
    vscode.commands.registerCommand(Commands.runEndpoint, (args: unknown, o?: RunOptions) => guarded('run', () => runEndpoint(views, output, args, o))),
    vscode.commands.registerCommand('strato.startDev', (folder?: string) =>
      guarded('start dev server', async () => dev.start(await projectFolder(views, folder)).name),
    ),
    vscode.commands.registerCommand('strato.stopDev', () => guarded('stop dev server', () => dev.stop())),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('strato.pythonPath') && applyPythonSetting()),
  );
  // Debugging, onboarding, the stored API key, tasks and Workspace Trust.
  setInputMemory(context.workspaceState);
  const debug = new StratoDebugger(views, output, dev);
  context.subscriptions.push(
    ...debug.register(),
    ...(await registerSecrets(context, () => views.refreshSoon())),
    registerTasks(),
    onTrustGranted(() => client),
    restrictedNotice(views.endpointsView),
    vscode.commands.registerCommand('strato.newProject', (o?: NewProjectOptions) => guarded('new project', () => newProject(o))),
    vscode.commands.registerCommand('strato.copyUrl', (n?: TreeNode) =>
      guarded('copy URL', async () => {
        if (!n?.url) throw new UserError('Copy URL works on an endpoint, deployment or route of the Strato views.');
        await vscode.env.clipboard.writeText(n.url);
        return n.url;
      }),
    ),
  );
  try {
    const started = await startLanguageClient();
    client = started;
    context.subscriptions.push({ dispose: () => void client?.stop() });
    views.useModelSource(async (folder) => {
      const model = await started.sendRequest<ProjectModel | null>(PROJECT_MODEL_REQUEST, { folderUri: folder.uri.toString() } satisfies ProjectModelParams);
      return model ?? noModel(folder);
    });
    context.subscriptions.push(started.onNotification(PROJECT_CHANGED_NOTIFICATION, () => views.refreshSoon()));
  } catch (e) {
    output.appendLine(`the Strato language server did not start: ${(e as Error).message}`);
    views.refreshSoon(0); // the views still show the deployed environments
    void vscode.window.showErrorMessage(`Strato: the language server did not start (${(e as Error).message}); see the Strato output.`);
  }
  return { views, languageClient: () => client, dev, preview, debugger: debug };
}

export async function deactivate(): Promise<void> {
  await client?.stop();
  client = undefined;
}
