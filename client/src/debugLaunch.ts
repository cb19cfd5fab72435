// Debugging from VS Code (docs/debugging.md): the `strato` debug type. "launch" (the Debug code lens) runs one
// function from the project's sources under debugpy, whose own debug adapter (`python -m debugpy.adapter`) VS Code
// talks to, so no other extension is needed; its result is shown like Run's. "attach" is debugAttach.ts.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { Commands, isEndpointCommandArgs, type EndpointCommandArgs } from '../../engine/src/protocol';
import { pythonPackageRoot, UserError } from '../../engine/src/util';
import { DevAttach } from './debugAttach';
import {
  DEBUG_TYPE,
  debugpyLaunch,
  debugpyProblem,
  debugTargets,
  launchConfigOf,
  outcomeOf,
  targetOf,
  type StratoAttachConfig,
  type StratoLaunchConfig,
} from './debugConfig';
import type { DevTerminal } from './devTerminal';
import { endpointArgsOf } from './commandArgs';
import { Cancelled, extensionLog, guarded, isCancelled, messageOf } from './errors';
import { projectFolder } from './folders';
import { askInput, rememberInput } from './inputPrompt';
import { jobReport, type SubmittedJob } from './jobs';
import { effectiveEnv } from './settings';
import { requireTrust } from './trust';
import type { StratoViews } from './views';

/** Fails with what to install when the interpreter cannot import debugpy (or cannot run at all). */
function checkDebugpy(python: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(python, ['-c', 'import debugpy'], { timeout: 20_000 }, (err, _out, stderr) => {
      const problem = debugpyProblem(python, err ? { errno: (err as NodeJS.ErrnoException).code, stderr, message: err.message } : undefined);
      if (problem) reject(new UserError(problem));
      else resolve();
    });
  });
}

interface PendingRun {
  target: EndpointCommandArgs;
  input: Record<string, unknown>;
  dir: string;
  resultFile: string;
  submittedAt: number;
}

/** A command's optional second argument (scripts and tests): the input, so that no input box is shown. */
export interface DebugOptions {
  input?: Record<string, unknown>;
}

export class StratoDebugger implements vscode.DebugConfigurationProvider, vscode.DebugAdapterDescriptorFactory, vscode.Disposable {
  private readonly runs = new Map<string, PendingRun>();
  private readonly waiting = new Map<string, (job: SubmittedJob | undefined) => void>();
  private nextId = 1;
  readonly attach: DevAttach;

  constructor(
    private readonly views: StratoViews,
    private readonly results: vscode.OutputChannel,
    dev: DevTerminal,
  ) {
    this.attach = new DevAttach(views, dev);
  }

  register(): vscode.Disposable[] {
    return [
      this,
      this.attach,
      vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, this),
      // The Run and Debug view's list offers every function and route, and the dev server's attach.
      vscode.debug.registerDebugConfigurationProvider(
        DEBUG_TYPE,
        { provideDebugConfigurations: (folder) => this.allConfigurations(folder) },
        vscode.DebugConfigurationProviderTriggerKind.Dynamic,
      ),
      vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, this),
      vscode.debug.onDidStartDebugSession((s) => s.type === DEBUG_TYPE && this.attach.started(s)),
      vscode.debug.onDidTerminateDebugSession((s) => {
        if (s.type !== DEBUG_TYPE) return;
        this.attach.ended(s);
        const run = (s.configuration.strato as { run?: string } | undefined)?.run;
        if (run) void this.finish(run);
      }),
      vscode.commands.registerCommand(Commands.debugEndpoint, (arg?: unknown, o?: DebugOptions) => guarded('debug', () => this.debugEndpoint(arg, o))),
      vscode.commands.registerCommand('strato.attachDev', (folder?: string) =>
        guarded('attach to the dev server', async () => {
          requireTrust('debug the dev server');
          const f = await projectFolder(this.views, typeof folder === 'string' ? folder : undefined);
          const config: StratoAttachConfig = { type: DEBUG_TYPE, request: 'attach', name: 'Attach to Dev Server' };
          return vscode.debug.startDebugging(f, config);
        }),
      ),
    ];
  }

  /** The Debug code lens (or a function's menu, or the palette): one run under the debugger; resolves with its job. */
  async debugEndpoint(arg: unknown, o: DebugOptions = {}): Promise<SubmittedJob | undefined> {
    requireTrust('debug a function');
    let a = endpointArgsOf(arg);
    if (!isEndpointCommandArgs(a)) a = await this.pickTarget();
    const args = a as EndpointCommandArgs;
    const folder = await projectFolder(this.views, args.uri);
    const id = `debug-${Date.now().toString(36)}-${this.nextId++}`;
    const done = new Promise<SubmittedJob | undefined>((resolve) => this.waiting.set(id, resolve));
    const config = { ...launchConfigOf(args, o.input), strato: { run: id } };
    if (!(await vscode.debug.startDebugging(folder, config))) {
      this.waiting.delete(id);
      return undefined; // resolving the configuration said why (or the input was cancelled)
    }
    return done;
  }

  private async pickTarget(): Promise<EndpointCommandArgs> {
    const folder = await projectFolder(this.views);
    const state = await this.views.loadFolder(folder);
    const items = debugTargets(state.model, (file) => vscode.Uri.joinPath(folder.uri, file).toString());
    if (!items.length) throw new UserError('this project has no @Endpoint function to debug yet.');
    const picked = items.length === 1 ? items[0] : await vscode.window.showQuickPick(items, { title: 'Debug which function?' });
    if (!picked) throw new Cancelled('no function chosen');
    return picked.args;
  }

  provideDebugConfigurations(folder: vscode.WorkspaceFolder | undefined): vscode.ProviderResult<vscode.DebugConfiguration[]> {
    const state = this.views.state().find((s) => s.folder.uri.toString() === folder?.uri.toString()) ?? this.views.state()[0];
    const first = state ? debugTargets(state.model, (f) => f)[0] : undefined;
    const attach: StratoAttachConfig = { type: DEBUG_TYPE, request: 'attach', name: 'Attach to Dev Server' };
    return [...(first ? [launchConfigOf(first.args)] : []), attach];
  }

  private async allConfigurations(folder: vscode.WorkspaceFolder | undefined): Promise<vscode.DebugConfiguration[]> {
    const f = folder ?? vscode.workspace.workspaceFolders?.find((w) => w.uri.scheme === 'file');
    if (!f) return [];
    const state = await this.views.loadFolder(f);
    const attach: StratoAttachConfig = { type: DEBUG_TYPE, request: 'attach', name: 'Attach to Dev Server' };
    return [...debugTargets(state.model, (file) => vscode.Uri.joinPath(f.uri, file).toString()).map((t) => launchConfigOf(t.args)), attach];
  }

  async resolveDebugConfiguration(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): Promise<vscode.DebugConfiguration | undefined> {
    if ((config.strato as { worker?: number } | undefined)?.worker) return config; // a worker of the dev server, from DevAttach
    try {
      requireTrust('debug');
      if (!config.type && !config.request && !config.name) config = await this.configAtCursor();
      if (config.request === 'attach') return await this.attach.resolve(folder, config);
      return await this.resolveLaunch(folder, config as vscode.DebugConfiguration & StratoLaunchConfig);
    } catch (e) {
      const id = (config.strato as { run?: string } | undefined)?.run;
      if (id) this.waiting.get(id)?.(undefined);
      const msg = messageOf(e);
      if (!isCancelled(e)) void vscode.window.showErrorMessage(msg);
      return undefined;
    }
  }

  /** F5 without a launch.json: the function under the cursor of the active worker file. */
  private async configAtCursor(): Promise<vscode.DebugConfiguration> {
    const ed = vscode.window.activeTextEditor;
    const folder = ed && vscode.workspace.getWorkspaceFolder(ed.document.uri);
    if (!ed || !folder) throw new UserError('open a worker file with an @Endpoint function to debug it, or add a "strato" configuration to launch.json.');
    const state = await this.views.loadFolder(folder);
    const rel = path.relative(folder.uri.fsPath, ed.document.uri.fsPath).split(path.sep).join('/');
    const line = ed.selection.active.line;
    const here = state.model.endpoints.filter((e) => e.file === rel);
    type Candidate = { range: { start: { line: number }; end: { line: number } }; c: Pick<StratoLaunchConfig, 'endpoint' | 'function' | 'route'> };
    const candidates = here.flatMap((ep): Candidate[] =>
      ep.kind === 'QUEUE'
        ? ep.functions.map((f) => ({ range: f.range, c: { endpoint: ep.name, function: f.name } }))
        : ep.routes.map((r) => ({ range: { start: r.range.start, end: r.function.range.end }, c: { endpoint: ep.name, route: `${r.method} ${r.path}` } })),
    );
    const at = candidates.find((x) => x.range.start.line <= line && line <= x.range.end.line) ?? candidates[0];
    if (!at) throw new UserError(`${rel} declares no @Endpoint function: open a worker file to debug one of its functions.`);
    const t = targetOf(state.model, at.c, (f) => vscode.Uri.joinPath(folder.uri, f).toString());
    if (typeof t === 'string') throw new UserError(t);
    return launchConfigOf(t);
  }

  private async resolveLaunch(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration & StratoLaunchConfig,
  ): Promise<vscode.DebugConfiguration> {
    if (typeof config.endpoint !== 'string' || !config.endpoint)
      throw new UserError('a "strato" launch configuration needs "endpoint": the name= of the endpoint to debug.');
    const f = folder ?? (await projectFolder(this.views));
    const state = await this.views.loadFolder(f);
    const target = targetOf(state.model, config, (file) => vscode.Uri.joinPath(f.uri, file).toString());
    if (typeof target === 'string') throw new UserError(target);
    const spec = state.model.endpoints.find((e) => e.name === target.endpoint)!;
    const python = effectiveEnv(f.uri).STRATO_PYTHON || 'python3';
    await checkDebugpy(python);
    const input = config.input ?? (await askInput(this.views, f, target));
    if (config.input) rememberInput(target, config.input);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'strato-debug-'));
    const files = { input: path.join(dir, 'input.json'), result: path.join(dir, 'result.json') };
    writeFileSync(files.input, JSON.stringify(input));
    const id = (config.strato as { run?: string } | undefined)?.run ?? `debug-${Date.now().toString(36)}-${this.nextId++}`;
    this.runs.set(id, { target, input, dir, resultFile: files.result, submittedAt: Date.now() });
    const launch = debugpyLaunch({
      config,
      target,
      spec,
      root: f.uri.fsPath,
      python,
      packageRoot: pythonPackageRoot(),
      files,
      pathSeparator: path.delimiter,
      inheritedPythonPath: process.env.PYTHONPATH,
    });
    return { ...launch, strato: { run: id } } as unknown as vscode.DebugConfiguration;
  }

  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    const c = session.configuration;
    const parent = this.attach.adapterFor(session);
    if (parent) return parent;
    const connect = c.connect as { host?: string; port?: number } | undefined;
    if (connect?.port) return new vscode.DebugAdapterServer(connect.port, connect.host ?? '127.0.0.1');
    return new vscode.DebugAdapterExecutable(String(c.python || 'python3'), ['-m', 'debugpy.adapter']);
  }

  /** A launch ended: its result is shown like Run's (Jobs view, Strato output, an error message when it failed). */
  private async finish(id: string): Promise<void> {
    const run = this.runs.get(id);
    if (!run) return;
    this.runs.delete(id);
    let text: string | undefined;
    try {
      text = readFileSync(run.resultFile, 'utf8');
    } catch {
      text = undefined;
    }
    rmSync(run.dir, { recursive: true, force: true });
    const outcome = outcomeOf(text);
    const a = run.target;
    const job = this.views.jobList.upsert({
      id,
      endpoint: a.endpoint,
      endpointId: '',
      environment: 'local (debug)',
      kind: a.kind,
      ...(a.method ? { route: `${a.method} ${a.path}` } : {}),
      input: run.input,
      status: outcome.status,
      output: outcome.output,
      error: outcome.error,
      executionTime: outcome.executionTime,
      submittedAt: run.submittedAt,
    });
    await this.views.refreshJobs().catch(() => undefined);
    if (job.status === 'FAILED' || job.status === 'ERROR') {
      // Errors go to the Strato log with the traceback (its file paths are links), results to Strato Results.
      const log = extensionLog();
      log?.error([jobReport(job), outcome.traceback?.trimEnd()].filter(Boolean).join('\n'));
      void vscode.window
        .showErrorMessage(`${a.endpoint} failed: ${job.error ?? 'no detail'}`, outcome.traceback ? 'Show Traceback' : 'Show Log')
        .then((x) => x && log?.show(true));
    } else {
      this.results.appendLine(jobReport(job));
      this.results.appendLine('');
      this.results.show(true);
    }
    this.waiting.get(id)?.(job);
    this.waiting.delete(id);
  }

  dispose(): void {
    for (const r of this.runs.values()) rmSync(r.dir, { recursive: true, force: true });
    this.runs.clear();
  }
}
