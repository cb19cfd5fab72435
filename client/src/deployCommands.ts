// Deploy, undeploy and deploy-from-a-code-lens: the engine's deployProject/undeployEnvironment with the
// environment asked through a quick pick (or given as an argument), and a progress notification of the four steps.
// A project's endpoints deploy together (one build per environment): every message names all of them, and the
// "Deploy" lens above one endpoint says "Deploy all N endpoints" (server/src/codeLens.ts).
import * as vscode from 'vscode';
import type { ApiTarget } from '../../engine/src/api';
import { undeployEnvironment, type DeployResult, type WorkerProblem } from '../../engine/src/deploy';
import { UserError } from '../../engine/src/util';
import { Commands, isEndpointCommandArgs } from '../../engine/src/protocol';
import { endpointArgsOf, environmentItemOf, environmentOf, flagOf, folderHintOf } from './commandArgs';
import { Cancelled, extensionLog, guarded } from './errors';
import { existingEnvironments, pickEnvironment } from './environmentQuickPick';
import { projectFolder } from './folders';
import { heavy } from './heavy';
import { projectContext } from './settings';
import { requireTrust } from './trust';
import type { StratoViews } from './views';

/** `strato.deploy` argument: an environment name, options (scripts and tests), or whatever a menu or view passes. */
export type TargetArg = string | { environment?: string; folder?: string } | undefined;

/** Undeploy also takes `confirm: false` to skip the modal (scripts and tests). */
export type UndeployArg = string | { environment?: string; folder?: string; confirm?: boolean } | undefined;

export interface DeploySummary {
  app: string;
  environment: string;
  endpoints: Array<{ name: string; url: string }>;
  problems: Array<{ endpoint: string; error: string }>;
}

/** `3 endpoints (cpu-stats, gpu-hello, lb-api)`; the names come from the language server's model. */
export function endpointList(names: readonly string[]): string {
  const sorted = [...names].sort();
  return `${sorted.length} endpoint${sorted.length === 1 ? '' : 's'}${sorted.length ? ` (${sorted.join(', ')})` : ''}`;
}

export async function deploy(views: StratoViews, arg: unknown): Promise<DeploySummary> {
  requireTrust('build and deploy');
  const folder = await projectFolder(views, arg);
  const { app, target } = await projectContext(folder.uri);
  const names = (await views.loadFolder(folder)).model.endpoints.map((e) => e.name);
  const what = endpointList(names);
  const environment =
    environmentOf(arg) ??
    (await pickEnvironment(await existingEnvironments(target, app), { allowNew: true, forDeploy: true, title: `Deploy ${app}, all ${what}, to` }));
  const { deployProject, DEPLOY_STEPS } = heavy();
  extensionLog()?.info(`deploying ${app} to ${environment}: ${what}`);
  const result: DeployResult = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Strato: deploying ${app} (${what}) to ${environment}`, cancellable: false },
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
  const deployed = endpointList(summary.endpoints.map((e) => e.name));
  extensionLog()?.info(`deployed ${app} to ${environment}: ${deployed}`);
  void vscode.window
    .showInformationMessage(`Deployed ${deployed} of ${app} to ${environment}.`, 'Show environment')
    .then((a) => a && vscode.commands.executeCommand('strato.envGet', { environment }));
  // The deploy returned while the minimum workers start: a worker that cannot start is reported when the platform knows.
  if (result.starting.length) void reportWorkers(target, result, app, environment);
  return summary;
}

async function reportWorkers(target: ApiTarget, result: DeployResult, app: string, environment: string): Promise<void> {
  const { problems } = await heavy()
    .waitForWorkers(target, result.endpoints)
    .catch(() => ({ problems: [] as WorkerProblem[] }));
  if (!problems.length) return;
  const text = problems.map((p) => `${p.endpoint}: ${p.error}`).join('; ');
  extensionLog()?.warn(`deployed ${app} to ${environment}, but ${text}`);
  void vscode.window.showWarningMessage(`Deployed ${app} to ${environment}, but ${text}`);
}

export async function undeploy(views: StratoViews, arg: unknown): Promise<string[]> {
  const folder = await projectFolder(views, arg);
  const { app, target } = await projectContext(folder.uri);
  const existing = await existingEnvironments(target, app);
  const environment = environmentItemOf(arg) ?? (await pickEnvironment(existing, { allowNew: false, forDeploy: false, title: `Undeploy ${app} from` }));
  const count = existing.find((e) => e.name === environment)?.endpoints;
  if (flagOf(arg, 'confirm') !== false) {
    const yes = await vscode.window.showWarningMessage(
      `Remove ${count ?? 'all'} endpoint(s) of ${app} from ${environment}?`,
      { modal: true, detail: 'Their workers stop and their queued jobs are dropped.' },
      'Undeploy',
    );
    if (yes !== 'Undeploy') throw new Cancelled(`${environment} of ${app} was left as it was`);
  }
  const r = await undeployEnvironment(target, app, environment);
  await views.refresh();
  void vscode.window.showInformationMessage(
    r.removed.length ? `Removed ${r.removed.join(', ')} from ${r.environment}.` : `${r.environment} had no endpoint to remove.`,
  );
  return r.removed;
}

/**
 * The code lens "Deploy all N endpoints" (or "Deploy <name>" when it is the only one): endpoints deploy together, so
 * this deploys the project, saying so in the pick and the messages, then selects that endpoint in the view.
 */
export async function deployEndpoint(views: StratoViews, args: unknown, env?: string): Promise<DeploySummary | undefined> {
  args = endpointArgsOf(args);
  if (!isEndpointCommandArgs(args)) throw new UserError('strato.deployEndpoint needs the endpoint of a code lens.');
  const summary = await deploy(views, { environment: env, folder: folderHintOf(args) });
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
