// Pure logic of debugging (docs/debugging.md): the `strato` debug configurations as launch.json holds them, the
// function they name, and the debugpy launch request that runs it once from the project's sources
// (`python -m strato._debug`, engine/python/strato/_debug.py) or attaches to a worker of `strato dev --debug`.
import type { EndpointSpec, ProjectModel } from '../../engine/src/project';
import type { DebugAnnouncement, EndpointCommandArgs } from '../../engine/src/protocol';
import type { JobState } from './jobs';

export const DEBUG_TYPE = 'strato';

/** `"request": "launch"`: one call of a function (or route) on this machine, under the debugger. */
export interface StratoLaunchConfig {
  type: typeof DEBUG_TYPE;
  request: 'launch';
  name: string;
  /** The endpoint's name (`name=` of `Endpoint(...)`). */
  endpoint: string;
  /** The function or class; default: the endpoint's only queue function, or the route's function. */
  function?: string;
  /** A load-balanced endpoint's route, `"POST /process"`; default: its first route. */
  route?: string;
  /** The input object (a route's body); asked for when absent. */
  input?: Record<string, unknown>;
  /** Breakpoints only in the project's files (default true). */
  justMyCode?: boolean;
  /** Extra environment variables of the run. */
  env?: Record<string, string>;
}

/** `"request": "attach"`: the workers of `strato dev --debug`, attached as they start. */
export interface StratoAttachConfig {
  type: typeof DEBUG_TYPE;
  request: 'attach';
  name: string;
  /** Start the extension's dev server with --debug when it does not run with it (default true). */
  startDev?: boolean;
  /** More arguments of `strato dev`, e.g. ["--port", "8890"]. */
  devArgs?: string[];
  justMyCode?: boolean;
}

/** The launch configuration a Debug code lens (or a node of the Endpoints view) starts. */
export function launchConfigOf(a: EndpointCommandArgs, input?: Record<string, unknown>): StratoLaunchConfig {
  const route = a.method && a.path ? `${a.method} ${a.path}` : undefined;
  return {
    type: DEBUG_TYPE,
    request: 'launch',
    name: `Debug ${route ? `${a.endpoint} ${route}` : a.endpoint}`,
    endpoint: a.endpoint,
    function: a.function,
    ...(route ? { route } : {}),
    ...(input ? { input } : {}),
  };
}

/** The function a launch configuration names, as a code lens would name it; or a sentence saying what is wrong. */
export function targetOf(
  model: ProjectModel,
  c: Pick<StratoLaunchConfig, 'endpoint' | 'function' | 'route'>,
  uri: (file: string) => string,
): EndpointCommandArgs | string {
  const ep = model.endpoints.find((e) => e.name === c.endpoint);
  if (!ep) {
    const names = model.endpoints.map((e) => e.name).join(', ') || 'none';
    return `no endpoint named "${c.endpoint}" in this project (it has: ${names}); fix "endpoint" in the debug configuration.`;
  }
  const base = { endpoint: ep.name, file: ep.file, uri: uri(ep.file), kind: ep.kind };
  if (ep.kind === 'QUEUE') {
    const fn = c.function ? ep.functions.find((f) => f.name === c.function) : ep.functions[0];
    if (!fn) return `${ep.name} has no function "${c.function}" (it has: ${ep.functions.map((f) => f.name).join(', ')}).`;
    return { ...base, function: fn.name };
  }
  const [method, path] = (c.route ?? '').split(' ', 2);
  const route = c.route
    ? ep.routes.find((r) => r.method === method.toUpperCase() && r.path === path)
    : c.function
      ? ep.routes.find((r) => r.function.name === c.function)
      : ep.routes[0];
  if (!route) {
    const routes = ep.routes.map((r) => `"${r.method} ${r.path}"`).join(', ') || 'none';
    return `${ep.name} has no route ${c.route ? `"${c.route}"` : `of function "${c.function}"`} (its routes: ${routes}).`;
  }
  return { ...base, function: route.function.name, method: route.method, path: route.path };
}

/** Every function and route of the project, for the palette's pick and launch.json's first configurations. */
export function debugTargets(model: ProjectModel, uri: (file: string) => string): Array<{ label: string; description: string; args: EndpointCommandArgs }> {
  const out: Array<{ label: string; description: string; args: EndpointCommandArgs }> = [];
  for (const ep of model.endpoints) {
    const base = { endpoint: ep.name, file: ep.file, uri: uri(ep.file), kind: ep.kind };
    if (ep.kind === 'QUEUE')
      for (const f of ep.functions) out.push({ label: ep.name, description: `${f.name}() · ${ep.file}`, args: { ...base, function: f.name } });
    else
      for (const r of ep.routes)
        out.push({
          label: `${ep.name} ${r.method} ${r.path}`,
          description: `${r.function.name}() · ${ep.file}`,
          args: { ...base, function: r.function.name, method: r.method, path: r.path },
        });
  }
  return out;
}

/** What the extension needs to run a launch: the files it exchanges with `python -m strato._debug`. */
export interface RunFiles {
  input: string;
  result: string;
}

/**
 * The debugpy launch request of one call: `python -m strato._debug` in the project folder with the bundled package
 * `strato` first on the path, so that a breakpoint in the function or in any project file it imports stops.
 */
export function debugpyLaunch(o: {
  config: StratoLaunchConfig;
  target: EndpointCommandArgs;
  spec: EndpointSpec;
  root: string;
  python: string;
  /** The folder holding the bundled Python package (dist/python). */
  packageRoot: string;
  files: RunFiles;
  pathSeparator: string;
  inheritedPythonPath?: string;
}): Record<string, unknown> {
  const args = ['--module', o.spec.module, '--function', o.target.function, '--input', o.files.input, '--result', o.files.result];
  if (o.target.method) args.push('--route', `${o.target.method} ${o.target.path}`);
  return {
    type: DEBUG_TYPE,
    request: 'launch',
    name: o.config.name,
    python: o.python,
    module: 'strato._debug',
    args,
    cwd: o.root,
    env: {
      ...o.spec.config.env,
      ...o.config.env,
      PYTHONPATH: [o.packageRoot, o.inheritedPythonPath].filter(Boolean).join(o.pathSeparator),
      PYTHONUNBUFFERED: '1',
    },
    console: 'internalConsole',
    justMyCode: o.config.justMyCode ?? true,
    // The runner and the runtime it calls are not the user's code: no stepping into them, no frames of theirs.
    rules: [{ path: o.packageRoot, include: false }],
  };
}

/** The attach request of one worker of `strato dev --debug`: its debugpy port, its build mapped onto the project. */
export function workerAttach(a: DebugAnnouncement, root: string, justMyCode = true): Record<string, unknown> {
  return {
    type: DEBUG_TYPE,
    request: 'attach',
    name: `${a.endpoint} (worker ${a.pid})`,
    connect: { host: a.host, port: a.port },
    pathMappings: [{ localRoot: root, remoteRoot: a.root }],
    justMyCode,
    strato: { worker: a.pid },
  };
}

/** What `python -m strato._debug` wrote, as the fields of a job; a missing or unreadable file says why. */
export function outcomeOf(text: string | undefined): { status: JobState; output?: unknown; error?: string; traceback?: string; executionTime?: number } {
  if (text === undefined) return { status: 'CANCELLED', error: 'the debug session ended before the function returned' };
  try {
    const r = JSON.parse(text) as { status?: string; output?: unknown; error?: string; traceback?: string; executionTime?: number };
    if (r.status === 'COMPLETED') return { status: 'COMPLETED', output: r.output, executionTime: r.executionTime };
    return { status: 'FAILED', error: r.error ?? 'no detail', traceback: r.traceback ?? undefined, executionTime: r.executionTime };
  } catch (e) {
    return { status: 'ERROR', error: `the result of the run could not be read: ${(e as Error).message}` };
  }
}

/** How to get debugpy; the same words as the Python package's (engine/python/strato/_debug.py INSTALL_HINT). */
export function debugpyInstallHint(python: string): string {
  return `install debugpy for this interpreter: \`${python} -m pip install debugpy\`, or on Debian/Ubuntu \`apt-get install python3-debugpy\``;
}

/** What is wrong when `python -c "import debugpy"` failed (undefined: it worked), as one sentence with the fix. */
export function debugpyProblem(python: string, failure: { errno?: string | number; stderr: string; message: string } | undefined): string | undefined {
  if (!failure) return undefined;
  if (failure.errno === 'ENOENT') return `Strato: debugging needs Python 3, and ${python} was not found: set strato.pythonPath to your interpreter.`;
  if (/No module named .?debugpy/.test(failure.stderr))
    return `Strato: debugging needs debugpy, which ${python} does not have: ${debugpyInstallHint(python)}; or set strato.pythonPath.`;
  return `Strato: ${python} could not check for debugpy: ${failure.stderr.trim().split('\n').pop() || failure.message}`;
}
