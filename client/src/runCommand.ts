// The code lens "Run": the input (prefilled from the function's parameters) goes to where the endpoint runs: the
// dev server when one runs for the project (through its route, on a live- endpoint), or a deployed environment (a
// queue job through /run, followed in the Jobs view until it ends; a load-balanced route called directly).
import * as vscode from 'vscode';
import { callRoute } from '../../engine/src/api';
import { JobsClient } from '../../engine/src/api';
import { devRoutes, readDevState, type DevState } from '../../engine/src/dev';
import type { ProjectModel } from '../../engine/src/project';
import { UserError } from '../../engine/src/util';
import { DEV_ENVIRONMENT } from '../../engine/src/deploy';
import { Commands, isEndpointCommandArgs, type EndpointCommandArgs } from '../../engine/src/protocol';
import type { DevServerState } from './devServer';
import { Cancelled } from './errors';
import { askInput, rememberInput } from './inputPrompt';
import { projectFolder } from './folders';
import { awaitJob, reportJob, type JobContext } from './jobCommands';
import type { SubmittedJob } from './jobs';
import { projectContext } from './settings';
import { requireTrust } from './trust';
import { endpointArgsOf } from './commandArgs';
import { deploymentsOf } from './workspaceState';

/** Optional second argument (scripts and tests): where to run and the input, so that no UI is needed. */
export interface RunOptions {
  environment?: string;
  /** Run through the project's running dev server. */
  dev?: boolean;
  input?: Record<string, unknown>;
}

export interface RunContext extends JobContext {
  dev: DevServerState;
}

/** The label of the dev server among the places Run offers. */
export const DEV_TARGET = 'dev server';

/** Where the user may run it: the dev server first when it runs, then the environments it is deployed in. */
async function chooseTarget(targets: Array<{ name: string; detail: string }>, a: EndpointCommandArgs): Promise<string> {
  if (targets.length === 1) return targets[0].name;
  const picked = await vscode.window.showQuickPick(
    targets.map((t) => ({ label: t.name === DEV_TARGET ? `$(server-process) ${DEV_TARGET}` : t.name, description: t.detail, name: t.name })),
    { title: `Run ${a.endpoint}${a.method ? ` ${a.method} ${a.path}` : ''} on`, placeHolder: 'the dev server or an environment' },
  );
  if (!picked) throw new Cancelled('no environment chosen');
  return picked.name;
}

/** One call through the dev server: the queue function's runsync route (the job object back), or the route itself. */
async function runOnDev(dev: DevState, model: ProjectModel, a: EndpointCommandArgs, input: Record<string, unknown>): Promise<Partial<SubmittedJob>> {
  const route = devRoutes(model).find(
    (r) =>
      r.endpoint.name === a.endpoint &&
      (a.kind === 'QUEUE' ? r.function.name === a.function || r.endpoint.functions.length === 1 : r.method === a.method && r.routePath === a.path),
  );
  if (!route)
    throw new UserError(
      `the dev server at ${dev.url} serves no route for ${a.endpoint}${a.method ? ` ${a.method} ${a.path}` : ''}: save the file and try again.`,
    );
  const hasBody = a.kind === 'QUEUE' || !['GET', 'DELETE'].includes(route.method);
  let url = `${dev.url}${route.path}`;
  if (!hasBody && Object.keys(input).length)
    url += `?${new URLSearchParams(Object.entries(input).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)]))}`;
  const res = await fetch(url, {
    method: route.method,
    headers: hasBody ? { 'content-type': 'application/json' } : {},
    body: hasBody ? JSON.stringify(a.kind === 'QUEUE' ? { input } : input) : undefined,
  }).catch((e: Error) => {
    throw new UserError(`the dev server at ${dev.url} did not answer (${e.message}); is it still running?`);
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: kept as text
  }
  if (a.kind === 'QUEUE' && res.ok) {
    const j = body as { id?: string; status?: SubmittedJob['status']; output?: unknown; error?: string; executionTime?: number };
    return { id: j.id, status: j.status ?? 'ERROR', output: j.output, error: j.error, executionTime: j.executionTime };
  }
  if (res.ok) return { status: 'COMPLETED', output: body };
  const b = (body ?? {}) as { error?: unknown; detail?: unknown };
  return {
    status: 'ERROR',
    error: `${typeof b.error === 'string' ? b.error : text} ${typeof b.detail === 'string' ? `: ${b.detail}` : ''} (HTTP ${res.status})`.trim(),
  };
}

export async function runEndpoint(ctx: RunContext, args: unknown, o: RunOptions = {}): Promise<SubmittedJob | undefined> {
  requireTrust('run a function');
  args = endpointArgsOf(args);
  if (!isEndpointCommandArgs(args)) throw new UserError('strato.runEndpoint needs the endpoint of a code lens or of the Endpoints view.');
  const { views } = ctx;
  const folder = await projectFolder(views, args);
  const { app, target } = await projectContext(folder.uri);
  const state = views.state().find((s) => s.folder.uri.toString() === folder.uri.toString()) ?? (await views.loadFolder(folder));
  const dev = ctx.dev.running(folder);
  const deployed = (await deploymentsOf(target, app, args.endpoint)).filter((d) => d.environment !== DEV_ENVIRONMENT);
  const targets = [
    ...(dev && !o.environment ? [{ name: DEV_TARGET, detail: `${dev.url} (strato dev)` }] : []),
    ...deployed.filter((d) => !o.dev && (!o.environment || d.environment === o.environment)).map((d) => ({ name: d.environment, detail: d.url })),
  ].filter((t) => !o.dev || t.name === DEV_TARGET);
  if (targets.length === 0) {
    const where = o.dev ? 'and no dev server runs' : o.environment ? `in ${o.environment}` : 'in any environment and no dev server runs';
    const choice = await vscode.window.showWarningMessage(
      `${args.endpoint} is not deployed ${where} for ${app}: deploy the project (all its endpoints), or start the dev server, then run it.`,
      'Deploy',
      'Start Dev Server',
    );
    if (choice === 'Deploy') await vscode.commands.executeCommand(Commands.deployEndpoint, args, o.environment);
    if (choice === 'Start Dev Server') await vscode.commands.executeCommand('strato.startDev', { folder: folder.uri.toString() });
    return undefined;
  }
  const where = await chooseTarget(targets, args);
  const input = o.input ?? (await askInput(views, folder, args));
  if (o.input) rememberInput(args, o.input);
  const route = args.kind === 'LOAD_BALANCED' ? `${args.method ?? 'POST'} ${args.path ?? '/'}` : undefined;
  const base = {
    endpoint: args.endpoint,
    environment: where,
    kind: args.kind,
    route,
    input,
    submittedAt: Date.now(),
    folder: folder.uri.toString(),
  };

  let job: SubmittedJob;
  if (where === DEV_TARGET && dev) {
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Strato: running ${args.endpoint} on the dev server` },
      () => runOnDev(dev, state.model, args, input),
    );
    // The call may have provisioned the live endpoint: the state file names it now.
    const liveId = (readDevState(folder.uri.fsPath) ?? dev).endpoints.find((e) => e.name === args.endpoint)?.id ?? '';
    job = views.jobList.upsert({
      ...base,
      id: r.id ?? `dev-${Date.now().toString(36)}`,
      endpointId: liveId,
      viaDev: true,
      status: r.status ?? 'ERROR',
      ...r,
    } as SubmittedJob);
  } else {
    const endpointId = deployed.find((d) => d.environment === where)!.endpointId;
    if (args.kind === 'QUEUE') {
      const accepted = await new JobsClient(target).run(endpointId, input);
      const queued = views.jobList.upsert({ ...base, id: accepted.id, endpointId, status: accepted.status });
      await views.refreshJobs();
      const ep = state.model.endpoints.find((e) => e.name === args.endpoint);
      job = await awaitJob(ctx, queued, target, ep?.config.executionTimeoutMs ?? undefined);
    } else {
      const call = { ...base, id: `call-${Date.now().toString(36)}`, endpointId };
      try {
        job = views.jobList.upsert({
          ...call,
          status: 'COMPLETED',
          output: await callRoute(target, endpointId, args.method ?? 'POST', args.path ?? '/', input),
        });
      } catch (e) {
        job = views.jobList.upsert({ ...call, status: 'ERROR', error: (e as Error).message });
      }
    }
  }
  await views.refreshJobs();
  await reportJob(ctx, job, { notify: true });
  return job;
}
