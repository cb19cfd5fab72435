// What the Jobs view offers on a job: show its output, stream its chunks as they come, cancel it, retry it; and
// what Run and Retry share: waiting for a job's end under a cancellable progress notification, then reporting it
// (results to the Strato Results channel; a failure, with the traceback its worker logged, to the Strato log).
import * as vscode from 'vscode';
import { JobsClient, type ApiTarget } from '../../engine/src/api';
import { limits } from '../../engine/src/catalog';
import { UserError } from '../../engine/src/util';
import { jobIdOf } from './commandArgs';
import { extensionLog } from './errors';
import { isEnded, jobReport, type SubmittedJob } from './jobs';
import { projectContext } from './settings';
import type { StratoViews } from './views';
import type { WorkerLogs } from './workerLogs';

export interface JobContext {
  views: StratoViews;
  results: vscode.OutputChannel;
  logs: WorkerLogs;
}

function jobOf(ctx: JobContext, arg: unknown): SubmittedJob {
  const id = jobIdOf(arg);
  const j = id ? ctx.views.jobList.get(id) : undefined;
  if (!j) throw new UserError(id ? `job ${id} is not in this window's list any more.` : 'pick a job in the Jobs view first.');
  return j;
}

async function targetOf(ctx: JobContext, j: SubmittedJob): Promise<{ target: ApiTarget; root: string }> {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.toString() === j.folder) ?? vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new UserError('open the project folder of this job first.');
  return { target: (await projectContext(folder.uri)).target, root: folder.uri.fsPath };
}

/** The job's report in the results channel; a failed job's traceback (from its worker's log) in the Strato log. */
export async function reportJob(ctx: JobContext, j: SubmittedJob, o: { notify: boolean }): Promise<string[]> {
  // Completed, cancelled (by the user) or not ended yet: results, not errors.
  if (j.status === 'COMPLETED' || j.status === 'CANCELLED' || !isEnded(j.status)) {
    ctx.results.appendLine(jobReport(j));
    ctx.results.appendLine('');
    ctx.results.show(true);
    if (o.notify && !isEnded(j.status))
      void vscode.window.showInformationMessage(`${j.endpoint}: job ${j.id} is ${j.status.toLowerCase()}; the Jobs view follows it.`);
    return [];
  }
  const log = extensionLog();
  let traceback: string[] = [];
  if (j.status === 'FAILED' || (j.kind === 'LOAD_BALANCED' && j.status === 'ERROR')) {
    const { target, root } = await targetOf(ctx, j);
    traceback = await ctx.logs.failure(target, j, root).catch((e: Error) => [`(the traceback could not be read: ${e.message})`]);
  }
  log?.error(
    [`${j.endpoint}${j.route ? ` ${j.route}` : ''} (${j.environment}) job ${j.id} ${j.status.toLowerCase()}: ${j.error ?? 'no detail'}`, ...traceback].join(
      '\n',
    ),
  );
  if (o.notify) {
    void vscode.window
      .showErrorMessage(`${j.endpoint} ${j.status.toLowerCase()}: ${j.error ?? 'no detail'}`, traceback.length ? 'Show Traceback' : 'Show Log')
      .then((a) => a && log?.show(true));
  }
  return traceback;
}

/** Polls the job until it ends or `timeoutMs` passes; the notification's Cancel cancels the job itself. */
export async function awaitJob(ctx: JobContext, j: SubmittedJob, target: ApiTarget, timeoutMs = limits.defaultClientTimeoutMs): Promise<SubmittedJob> {
  const client = new JobsClient(target);
  ctx.views.watchJobs();
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Strato: running ${j.endpoint} in ${j.environment}`, cancellable: true },
    async (progress, token) => {
      const deadline = Date.now() + timeoutMs;
      let job = j;
      while (!isEnded(job.status) && Date.now() < deadline) {
        if (token.isCancellationRequested) {
          await client.cancel(job.endpointId, job.id).catch(() => undefined);
        }
        const s = await client.status(job.endpointId, job.id);
        job = ctx.views.jobList.upsert({ ...job, status: s.status, output: s.output, error: s.error, executionTime: s.executionTime });
        progress.report({ message: `job ${job.id.slice(0, 12)}: ${job.status.toLowerCase().replace('_', ' ')}` });
        if (!isEnded(job.status)) await new Promise((r) => setTimeout(r, 250));
      }
      await ctx.views.refreshJobs();
      return job;
    },
  );
}

export async function showJob(ctx: JobContext, arg: unknown): Promise<string> {
  const j = jobOf(ctx, arg);
  const traceback = await reportJob(ctx, j, { notify: false });
  if (traceback.length) extensionLog()?.show(true);
  return [jobReport(j), ...traceback].join('\n');
}

/** Prints the job's stream chunks as they come until it ends (the platform hands each chunk out once). */
export async function streamJob(ctx: JobContext, arg: unknown): Promise<unknown[]> {
  const j = jobOf(ctx, arg);
  if (j.kind !== 'QUEUE' || j.viaDev) throw new UserError(`${j.endpoint} ${j.route ?? ''} was a direct call: it has no stream.`);
  const { target } = await targetOf(ctx, j);
  const client = new JobsClient(target);
  const outputs: unknown[] = [];
  ctx.results.appendLine(`stream of ${j.endpoint} job ${j.id}:`);
  ctx.results.show(true);
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Strato: streaming ${j.endpoint} job ${j.id.slice(0, 12)}`, cancellable: true },
    async (_progress, token) => {
      for (;;) {
        const chunks = await client.stream(j.endpointId, j.id);
        for (const c of chunks) {
          outputs.push(c.output);
          ctx.results.appendLine(`  [${c.metrics.stream_index}] ${JSON.stringify(c.output)}`);
        }
        if (token.isCancellationRequested) return;
        if (!chunks.length) {
          const s = await client.status(j.endpointId, j.id);
          ctx.views.jobList.upsert({ ...j, status: s.status, output: s.output, error: s.error, executionTime: s.executionTime });
          if (isEnded(s.status)) return;
        }
      }
    },
  );
  ctx.results.appendLine(`  (${outputs.length} chunk(s); job ${ctx.views.jobList.get(j.id)?.status ?? j.status})`);
  await ctx.views.refreshJobs();
  return outputs;
}

export async function cancelJob(ctx: JobContext, arg: unknown): Promise<SubmittedJob> {
  const j = jobOf(ctx, arg);
  if (j.kind !== 'QUEUE' || j.viaDev) throw new UserError(`${j.endpoint} ${j.route ?? ''} was a direct call: there is nothing to cancel.`);
  const { target } = await targetOf(ctx, j);
  const r = await new JobsClient(target).cancel(j.endpointId, j.id);
  const job = ctx.views.jobList.upsert({ ...j, status: r.status });
  await ctx.views.refreshJobs();
  extensionLog()?.info(`cancelled ${j.endpoint} job ${j.id}`);
  return job;
}

/** Retries a FAILED or TIMED_OUT job (same id, same input) and waits for its end like Run. */
export async function retryJob(ctx: JobContext, arg: unknown): Promise<SubmittedJob> {
  const j = jobOf(ctx, arg);
  if (j.kind !== 'QUEUE' || j.viaDev) throw new UserError(`${j.endpoint} ${j.route ?? ''} was a direct call: run it again from its code lens.`);
  const { target } = await targetOf(ctx, j);
  const r = await new JobsClient(target).retry(j.endpointId, j.id);
  const queued = ctx.views.jobList.upsert({ ...j, status: r.status, output: undefined, error: undefined, executionTime: undefined });
  await ctx.views.refreshJobs();
  const job = await awaitJob(ctx, queued, target);
  await reportJob(ctx, job, { notify: true });
  return job;
}
