// "Show Logs" and "Follow Logs" of an endpoint (its items in the Endpoints and Environments views, or the palette):
// its workers' log from the platform's logs API (so a remote platform works too) in a LogOutputChannel per endpoint
// and environment, each line at its level; and the traceback a failed job left there, its frames linked to the
// project's files, for the Strato log.
import fs from 'node:fs';
import * as vscode from 'vscode';
import { FAILURE_SEARCH_TAIL, jobFailureLines, LogsClient, missingNodesNote, type ApiTarget } from '../../engine/src/api';
import { logMessage, type WorkerLogLine, type WorkerLogPage } from '../../engine/src/protocol';
import { UserError } from '../../engine/src/util';
import { endpointTargetOf, type EndpointTarget } from './commandArgs';
import { pickEnvironment } from './environmentQuickPick';
import { Cancelled } from './errors';
import { projectFolder } from './folders';
import type { SubmittedJob } from './jobs';
import { projectContext } from './settings';
import { lastTraceback, linkTraceback, projectLocator } from './traceback';
import type { StratoViews } from './views';
import { deploymentsOf } from './workspaceState';

/** Lines a "Show Logs" prints: the last ones, as `strato logs` does without --tail, and more. */
const SHOW_TAIL = 300;
export const FOLLOWING_LOGS_CONTEXT = 'strato.followingLogs';

export interface LogsShown {
  channel: string;
  endpointId: string;
  environment: string;
  lines: number;
}

const isFile = (p: string) => {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
};

export class WorkerLogs implements vscode.Disposable {
  private readonly channels = new Map<string, vscode.LogOutputChannel>();
  private readonly follows = new Map<string, AbortController>();

  constructor(private readonly views: StratoViews) {}

  /** The last lines of an endpoint's log; with `follow`, then every new line until stopped. */
  async show(arg: unknown, follow: boolean): Promise<LogsShown> {
    const folder = await projectFolder(this.views, arg);
    const { app, target } = await projectContext(folder.uri);
    const t = endpointTargetOf(arg) ?? (await this.pickEndpoint(folder));
    const deployments = await deploymentsOf(target, app, t.endpoint);
    if (!deployments.length)
      throw new UserError(`${t.endpoint} is not deployed in any environment of ${app}, so it has no logs yet: deploy it, or start the dev server and call it.`);
    const environment =
      t.environment ??
      (deployments.length === 1
        ? deployments[0].environment
        : await pickEnvironment(
            deployments.map((d) => ({ name: d.environment })),
            { allowNew: false, forDeploy: false, title: `Logs of ${t.endpoint} in` },
          ));
    const d = deployments.find((x) => x.environment === environment);
    if (!d) throw new UserError(`${t.endpoint} is not deployed in ${environment} of ${app} (it is in ${deployments.map((x) => x.environment).join(', ')}).`);
    const name = `Strato Logs: ${t.endpoint} (${environment})`;
    const channel = this.channel(name);
    const locate = projectLocator(folder.uri.fsPath, isFile);
    const write = (lines: readonly WorkerLogLine[]) => {
      const texts = linkTraceback(
        lines.map((l) => logMessage(l.text)),
        locate,
      );
      lines.forEach((l, i) => channel[l.level](`${l.time.slice(11, 23)} ${l.worker} ${texts[i]}`));
    };
    // A cluster node that did not answer: said once, and again only when that changes.
    let missing: string | null = null;
    const warn = (page: WorkerLogPage) => {
      const note = missingNodesNote(page);
      if (note && note !== missing) channel.warn(note);
      missing = note;
    };
    const client = new LogsClient(target);
    this.stop(name);
    if (!follow) {
      const page = await client.read(d.endpointId, { tail: SHOW_TAIL });
      channel.clear();
      channel.info(`${t.endpoint} in ${app}/${environment} (${d.endpointId}): ${page.lines.length ? `the last ${page.lines.length} line(s)` : 'no line yet'}`);
      warn(page);
      write(page.lines);
      channel.show(true);
      return { channel: name, endpointId: d.endpointId, environment, lines: page.lines.length };
    }
    const ac = new AbortController();
    this.follows.set(name, ac);
    void this.updateContext();
    let started = false;
    const pages = client.follow(d.endpointId, { tail: SHOW_TAIL, signal: ac.signal, onPage: (p) => started && warn(p) });
    const first = await pages.next();
    const lines = first.done ? 0 : first.value.lines.length;
    channel.clear();
    channel.info(`following ${t.endpoint} in ${app}/${environment} (${d.endpointId}); Strato: Stop Following Logs ends it`);
    started = true;
    if (!first.done) warn(first.value);
    if (!first.done) write(first.value.lines);
    channel.show(true);
    void (async () => {
      try {
        for await (const page of { [Symbol.asyncIterator]: () => pages }) write(page.lines);
      } catch (e) {
        if (!ac.signal.aborted) channel.warn(`stopped following: ${(e as Error).message}`);
      } finally {
        if (this.follows.get(name) === ac) this.follows.delete(name);
        void this.updateContext();
      }
    })();
    return { channel: name, endpointId: d.endpointId, environment, lines };
  }

  /** Stops following one channel's endpoint (or every one); returns the channels stopped. */
  stop(name?: string): string[] {
    const stopped = [...this.follows.keys()].filter((k) => name === undefined || k === name);
    for (const k of stopped) {
      this.follows.get(k)!.abort();
      this.follows.delete(k);
      this.channels.get(k)?.info('stopped following');
    }
    void this.updateContext();
    return stopped;
  }

  following(): string[] {
    return [...this.follows.keys()];
  }

  /**
   * The traceback a failed job left in its endpoint's log, with the frames of project files linked: a queue job's by
   * its id (the runtime logs it as the job fails; read again briefly when it is not there yet), a route call's as the
   * last traceback its endpoint logged since the call. Empty when the log does not hold it.
   */
  async failure(target: ApiTarget, job: SubmittedJob, root: string): Promise<string[]> {
    if (!job.endpointId) return [];
    const client = new LogsClient(target);
    for (let attempt = 0; attempt < 5; attempt++) {
      const all = (await client.read(job.endpointId, { tail: FAILURE_SEARCH_TAIL })).lines;
      // A queue job's first line (`job <id> failed: <error>`) says what the job's error says already.
      const lines = job.kind === 'QUEUE' ? jobFailureLines(all, job.id).slice(1) : lastTraceback(all, job.submittedAt);
      if (lines.length)
        return linkTraceback(
          lines.map((l) => logMessage(l.text)),
          projectLocator(root, isFile),
        );
      await new Promise((r) => setTimeout(r, 300));
    }
    return [];
  }

  private channel(name: string): vscode.LogOutputChannel {
    let c = this.channels.get(name);
    if (!c) this.channels.set(name, (c = vscode.window.createOutputChannel(name, { log: true })));
    return c;
  }

  private async pickEndpoint(folder: vscode.WorkspaceFolder): Promise<EndpointTarget> {
    const names = (await this.views.loadFolder(folder)).model.endpoints.map((e) => e.name).sort();
    if (!names.length) throw new UserError('this project declares no endpoint yet: add @Endpoint(...) to a function first.');
    const picked = names.length === 1 ? names[0] : await vscode.window.showQuickPick(names, { title: 'Logs of which endpoint?' });
    if (!picked) throw new Cancelled('no endpoint chosen');
    return { endpoint: picked };
  }

  private updateContext(): Thenable<unknown> {
    return vscode.commands.executeCommand('setContext', FOLLOWING_LOGS_CONTEXT, this.follows.size > 0);
  }

  dispose(): void {
    for (const ac of this.follows.values()) ac.abort();
    this.follows.clear();
    for (const c of this.channels.values()) c.dispose();
  }
}
