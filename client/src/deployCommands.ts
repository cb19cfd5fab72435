// Deploy, undeploy and deploy-from-a-code-lens: the engine's deployProject/undeployEnvironment with the
// environment asked through a quick pick (or given as an argument), and a progress notification of the four steps.
import * as vscode from 'vscode';
import { DEPLOY_STEPS, deployProject, undeployEnvironment, waitForWorkers, type DeployResult, type WorkerProblem } from '../../engine/src/deploy';
import type { ApiTarget } from '../../engine/src/api';
import { UserError } from '../../engine/src/util';
import { Commands, isEndpointCommandArgs } from '../../engine/src/protocol';
import { guarded } from './errors';
import { existingEnvironments, pickEnvironment } from './environmentQuickPick';
import { projectFolder } from './folders';
import { projectContext } from './settings';
import { requireTrust } from './trust';
import { endpointArgsOf } from './endpointTree';
import type { StratoViews } from './views';

/** `strato.deploy` / `strato.undeploy` argument: an environment name, or options (for scripts and tests). */
export type TargetArg = string | { environment?: string; folder?: string } | undefined;

/** Undeploy also takes `confirm: false` to skip the modal (scripts and tests). */
export type UndeployArg = string | { environment?: string; folder?: string; confirm?: boolean } | undefined;

function parseArg<T extends object>(arg: string | T | undefined): T & { environment?: string } {
  if (typeof arg === 'string') return { environment: arg } as T & { environment?: string };
  return (arg && typeof arg === 'object' && !(arg instanceof vscode.Uri) ? arg : {}) as T & { environment?: string };
}

export interface DeploySummary {
  app: string;
  environment: string;
  endpoints: Array<{ name: string; url: string }>;
  problems: Array<{ endpoint: string; error: string }>;
}

export async function deploy(views: StratoViews, arg: TargetArg): Promise<DeploySummary> {
  requireTrust('build and deploy');
  const o = parseArg<{ environment?: string; folder?: string }>(arg);
  const folder = await projectFolder(views, o.folder);
  const { app, target } = await projectContext(folder.uri);
  const environment =
    o.environment ?? (await pickEnvironment(await existingEnvironments(target, app), { allowNew: true, forDeploy: true, title: `Deploy ${app} to` }));
  const result: DeployResult = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Strato: deploying ${app} to ${environment}`, cancellable: false },
    (progress) =>
      deployProject(folder.uri.fsPath, {
        target,
        env: environment,
        onStep: (step, phase, detail) => {
          const n = DEPLOY_STEPS.indexOf(step) + 1;
          if (phase === 'start') progress.report({ message: `${n}/${DEPLOY_STEPS.length} ${step}...` });
          else progress.report({ increment: 100 / DEPLOY_STEPS.length, message: `${n}/${DEPLOY_STEPS.length} ${step}: ${detail ?? 'done'}` });
        },
      }),
  );
  const summary: DeploySummary = {
    app: result.app.name,
    environment: result.environment.name,
    endpoints: result.endpoints.map((e) => ({ name: e.name, url: e.url })),
    problems: result.problems,
  };
  await views.refresh();
  void vscode.window
    .showInformationMessage(`Deployed ${summary.endpoints.length} endpoint(s) of ${app} to ${environment}.`, 'Show environment')
    .then((a) => a && vscode.commands.executeCommand('strato.envGet', { environment }));
  // The deploy returned while the minimum workers start: a worker that cannot start is reported when the platform knows.
  if (result.starting.length) void reportWorkers(target, result, app, environment);
  return summary;
}

async function reportWorkers(target: ApiTarget, result: DeployResult, app: string, environment: string): Promise<void> {
  const { problems } = await waitForWorkers(target, result.endpoints).catch(() => ({ problems: [] as WorkerProblem[] }));
  if (problems.length)
    void vscode.window.showWarningMessage(`Deployed ${app} to ${environment}, but ${problems.map((p) => `${p.endpoint}: ${p.error}`).join('; ')}`);
}

export async function undeploy(views: StratoViews, arg: UndeployArg): Promise<string[] | undefined> {
  const o: { environment?: string; folder?: string; confirm?: boolean } = parseArg(arg);
  const folder = await projectFolder(views, o.folder);
  const { app, target } = await projectContext(folder.uri);
  const existing = await existingEnvironments(target, app);
  const environment = o.environment ?? (await pickEnvironment(existing, { allowNew: false, forDeploy: false, title: `Undeploy ${app} from` }));
  const count = existing.find((e) => e.name === environment)?.endpoints;
  if (o.confirm !== false) {
    const yes = await vscode.window.showWarningMessage(
      `Remove ${count ?? 'all'} endpoint(s) of ${app} from ${environment}?`,
      { modal: true, detail: 'Their workers stop and their queued jobs are dropped.' },
      'Undeploy',
    );
    if (yes !== 'Undeploy') return undefined;
  }
  const r = await undeployEnvironment(target, app, environment);
  await views.refresh();
  void vscode.window.showInformationMessage(
    r.removed.length ? `Removed ${r.removed.join(', ')} from ${r.environment}.` : `${r.environment} had no endpoint to remove.`,
  );
  return r.removed;
}

/** The code lens "Deploy <name>": endpoints deploy together, so this deploys the project, then shows that endpoint. */
export async function deployEndpoint(views: StratoViews, args: unknown, env?: string): Promise<DeploySummary | undefined> {
  args = endpointArgsOf(args);
  if (!isEndpointCommandArgs(args)) throw new UserError('strato.deployEndpoint needs the endpoint of a code lens.');
  const summary = await deploy(views, { environment: env, folder: args.uri });
  await views.reveal(args.endpoint).catch(() => false);
  return summary;
}

export function registerDeployCommands(views: StratoViews): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand('strato.deploy', (arg?: TargetArg) => guarded('deploy', () => deploy(views, arg))),
    vscode.commands.registerCommand('strato.undeploy', (arg?: UndeployArg) => guarded('undeploy', () => undeploy(views, arg))),
    vscode.commands.registerCommand(Commands.deployEndpoint, (args: unknown, env?: string) => guarded('deploy', () => deployEndpoint(views, args, env))),
  ];
}
