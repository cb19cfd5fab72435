// The code lens "Run": a queue endpoint gets its input (prefilled from the function's parameters) and runs
// through /runsync on the deployed endpoint of the chosen environment; a load-balanced route is called directly.
import * as vscode from 'vscode';
import { ControlPlaneClient } from '../../engine/src/api';
import { JobsClient } from '../../engine/src/api';
import { callRoute } from '../../engine/src/api';
import { UserError } from '../../engine/src/util';
import { Commands, isEndpointCommandArgs } from '../../engine/src/protocol';
import { pickEnvironment } from './environmentQuickPick';
import { askInput, rememberInput } from './inputPrompt';
import { isEnded, jobReport, type SubmittedJob } from './jobs';
import { projectFolder } from './folders';
import { projectContext } from './settings';
import { requireTrust } from './trust';
import { endpointArgsOf } from './endpointTree';
import type { StratoViews } from './views';

/** Optional second argument (scripts and tests): the environment and the input, so that no UI is needed. */
export interface RunOptions {
  environment?: string;
  input?: Record<string, unknown>;
}

export async function runEndpoint(views: StratoViews, output: vscode.OutputChannel, args: unknown, o: RunOptions = {}): Promise<SubmittedJob | undefined> {
  requireTrust('run a function');
  args = endpointArgsOf(args);
  if (!isEndpointCommandArgs(args)) throw new UserError('strato.runEndpoint needs the endpoint of a code lens or of the Endpoints view.');
  const folder = await projectFolder(views, args.uri);
  const { app, target } = await projectContext(folder.uri);
  const cp = new ControlPlaneClient(target);
  const found = await cp.findApp(app);
  const deployedIn: Array<{ name: string; endpointId: string }> = [];
  for (const env of found?.environments ?? []) {
    const ep = (await cp.listEndpoints(env.id)).find((e) => e.name === args.endpoint);
    if (ep) deployedIn.push({ name: env.name, endpointId: ep.id });
  }
  const wanted = o.environment ? deployedIn.filter((d) => d.name === o.environment) : deployedIn;
  if (wanted.length === 0) {
    const where = o.environment ? `in ${o.environment}` : 'in any environment';
    const choice = await vscode.window.showWarningMessage(
      `${args.endpoint} is not deployed ${where} of ${app}: deploy the project first, then run it.`,
      'Deploy',
    );
    if (choice === 'Deploy') await vscode.commands.executeCommand(Commands.deployEndpoint, args, o.environment);
    return undefined;
  }
  const envName =
    wanted.length === 1
      ? wanted[0].name
      : await pickEnvironment(
          wanted.map((w) => ({ name: w.name })),
          { allowNew: false, forDeploy: false, title: `Run ${args.endpoint} in` },
        );
  const endpointId = wanted.find((w) => w.name === envName)!.endpointId;
  const input = o.input ?? (await askInput(views, folder, args));
  if (o.input) rememberInput(args, o.input);

  let job: SubmittedJob;
  if (args.kind === 'QUEUE') {
    job = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Strato: running ${args.endpoint} in ${envName}` },
      async () => {
        const r = await new JobsClient(target).runsync(endpointId, input);
        return views.jobList.upsert({
          id: r.id,
          endpoint: args.endpoint,
          endpointId,
          environment: envName,
          kind: 'QUEUE',
          input,
          status: r.status,
          output: r.output,
          error: r.error,
          executionTime: r.executionTime,
          submittedAt: Date.now(),
        });
      },
    );
  } else {
    const route = `${args.method ?? 'POST'} ${args.path ?? '/'}`;
    const base = {
      id: `call-${Date.now().toString(36)}`,
      endpoint: args.endpoint,
      endpointId,
      environment: envName,
      kind: 'LOAD_BALANCED' as const,
      route,
      input,
      submittedAt: Date.now(),
    };
    try {
      const body = await callRoute(target, endpointId, args.method ?? 'POST', args.path ?? '/', input);
      job = views.jobList.upsert({ ...base, status: 'COMPLETED', output: body });
    } catch (e) {
      job = views.jobList.upsert({ ...base, status: 'ERROR', error: (e as Error).message });
    }
  }
  await views.refreshJobs();
  output.appendLine(jobReport(job));
  output.appendLine('');
  output.show(true);
  if (!isEnded(job.status))
    void vscode.window.showInformationMessage(`${args.endpoint}: job ${job.id} is ${job.status.toLowerCase()}; refresh the Jobs view for its result.`);
  else if (job.status !== 'COMPLETED') void vscode.window.showErrorMessage(`${args.endpoint} ${job.status.toLowerCase()}: ${job.error ?? 'no detail'}`);
  return job;
}
