// `strato deploy`: build -> upload -> provision -> configure, against the control plane's state (never a
// local cache): endpoints are reconciled by name in the app and environment, removed ones are deleted.
import { performance } from 'node:perf_hooks';
import { ControlPlaneClient, type App, type Build, type Endpoint, type Environment } from '../api/controlPlane';
import type { ApiTarget } from '../api/http';
import { buildProject, secretsLine, type BuildResult } from '../build';
import type { Diagnostic } from '../project';
import { UserError } from '../util/errors';
import { endpointInput } from './endpointInput';
import { appNameFor, checkNames, chooseEnvironment } from './context';

export type DeployStep = 'build' | 'upload' | 'provision' | 'configure';
export const DEPLOY_STEPS: readonly DeployStep[] = ['build', 'upload', 'provision', 'configure'];

export interface DeployOptions {
  target: ApiTarget;
  env?: string;
  exclude?: string[];
  /** Called when a step starts and when it ends (with its duration). */
  onStep?: (step: DeployStep, phase: 'start' | 'done', detail?: string, ms?: number) => void;
  onProgress?: (message: string) => void;
  onWarning?: (d: Diagnostic) => void;
  /**
   * How long configure waits for the minimum workers to be ready. Absent or 0: it does not wait. Deploy then returns
   * once the endpoints are saved and found by name; their workers start in the background, calls made meanwhile wait
   * for them (queued jobs, or the router's cold start), and `env get` or waitForWorkers() report them ready.
   */
  readyTimeoutMs?: number;
  /** Asked while that wait goes on: true ends it at once (the preview was stopped with Ctrl+C). */
  cancelled?: () => boolean;
  /** Runs between the build and the upload (the preview checks images and makes its network there). */
  afterBuild?: (b: BuildResult) => Promise<void>;
  /** Workers of every endpoint, instead of the configuration's (the preview runs exactly one each). */
  workers?: { min: number; max: number };
}

export interface DeployResult {
  app: App;
  environment: Environment;
  build: Build;
  buildResult: BuildResult;
  endpoints: Endpoint[];
  created: string[];
  updated: string[];
  /** Saved again as they were (same build and configuration): left alone, their workers too. */
  unchanged: string[];
  deleted: string[];
  /** Endpoints whose workers could not start, with the reason (only known when deploy waited for them). */
  problems: WorkerProblem[];
  /** Endpoints whose minimum workers were still starting when deploy returned (all that have some, when it did not wait). */
  starting: string[];
  durations: Record<DeployStep, number>;
}

export async function deployProject(root: string, o: DeployOptions): Promise<DeployResult> {
  const client = new ControlPlaneClient(o.target);
  const durations = {} as Record<DeployStep, number>;
  const step = async <T>(name: DeployStep, run: () => Promise<T>, detail?: (r: T) => string): Promise<T> => {
    o.onStep?.(name, 'start');
    const t = performance.now();
    const r = await run();
    durations[name] = performance.now() - t;
    o.onStep?.(name, 'done', detail?.(r), durations[name]);
    return r;
  };

  const appName = appNameFor(root);
  checkNames(appName, o.env);
  const buildResult = await step(
    'build',
    () => buildProject(root, { exclude: o.exclude, onProgress: o.onProgress, onWarning: o.onWarning }),
    (b) =>
      `${Object.keys(b.manifest.resources).length} endpoint${Object.keys(b.manifest.resources).length === 1 ? '' : 's'}, ${(b.sizeBytes / 1024).toFixed(0)} ` +
      `KB${b.excluded.length ? `; not installed (in the base image or --exclude): ${b.excluded.join(', ')}` : ''}` +
      `${b.secretsLeftOut.length ? `; ${secretsLine(b.secretsLeftOut)}` : ''}`,
  );

  await o.afterBuild?.(buildResult);
  const { app, environment, build } = await step(
    'upload',
    async () => {
      let app = await client.findApp(appName);
      const choice = chooseEnvironment(app, o.env);
      if (!app) app = await client.createApp(appName);
      const environment = 'existing' in choice ? choice.existing : await client.createEnvironment(app.id, choice.create);
      const build = await client.uploadBuild(app.id, buildResult.artifactPath, buildResult.manifest);
      await client.deployBuild(environment.id, build.id);
      return { app, environment, build };
    },
    (r) => `app ${r.app.name}, environment ${r.environment.name}, build ${r.build.id}`,
  );

  const { endpoints, created, updated, unchanged, deleted } = await step(
    'provision',
    async () => {
      const existing = await client.listEndpoints(environment.id);
      const byName = new Map(existing.map((e) => [e.name, e]));
      const names = Object.keys(buildResult.manifest.resources);
      const created: string[] = [];
      const updated: string[] = [];
      const unchanged: string[] = [];
      const endpoints: Endpoint[] = [];
      // One at a time keeps the platform's rolling release orderly and the output deterministic.
      for (const name of names) {
        const overrides = o.workers ? { workersMin: o.workers.min, workersMax: o.workers.max } : undefined;
        const ep = await client.saveEndpoint(
          endpointInput({ environmentId: environment.id, buildId: build.id, name, model: buildResult.model, apiKey: o.target.apiKey, overrides }),
        );
        const before = byName.get(name);
        // The platform leaves an endpoint saved again as it is alone (same build, same configuration).
        (!before ? created : before.updatedAt === ep.updatedAt ? unchanged : updated).push(name);
        endpoints.push(ep);
      }
      const deleted: string[] = [];
      for (const e of existing) {
        if (names.includes(e.name)) continue;
        await client.deleteEndpoint(e.id);
        deleted.push(e.name);
      }
      return { endpoints, created, updated, unchanged, deleted };
    },
    (r) =>
      `${r.created.length} created, ${r.updated.length} updated, ${r.deleted.length} deleted${r.unchanged.length ? `, ${r.unchanged.length} unchanged` : ''}`,
  );

  const { problems, starting } = await step(
    'configure',
    async () => {
      await discoverable(client, app.name, environment.name, endpoints);
      if (o.readyTimeoutMs) return waitWith(client, endpoints, o.readyTimeoutMs, o.cancelled);
      return { problems: [] as WorkerProblem[], starting: endpoints.filter((e) => e.workersMin > 0).map((e) => e.name) };
    },
    (r) =>
      r.problems.length
        ? `${r.problems.length} endpoint(s) cannot start workers`
        : `endpoints discoverable by name${r.starting.length ? ', minimum workers starting' : o.readyTimeoutMs ? ', minimum workers ready' : ''}`,
  );
  return { app, environment, build, buildResult, endpoints, created, updated, unchanged, deleted, problems, starting, durations };
}

/** How long `deploy --wait` (and the preview, for longer) waits for the minimum workers. */
export const READY_TIMEOUT_MS = 20_000;

export interface WorkerProblem {
  endpoint: string;
  error: string;
}

export interface WorkersReadiness {
  /** Endpoints whose workers cannot start. */
  problems: WorkerProblem[];
  /** Endpoints whose minimum workers are still starting. */
  starting: string[];
}

/** Checks that every endpoint is found by name (service discovery): what the workers and the samples use. */
async function discoverable(client: ControlPlaneClient, app: string, env: string, endpoints: Endpoint[]): Promise<void> {
  const found = await Promise.all(endpoints.map((ep) => client.findEndpoint(app, env, ep.name)));
  endpoints.forEach((ep, i) => {
    if (found[i]?.id !== ep.id) throw new UserError(`endpoint ${ep.name} was saved but cannot be looked up by name in ${app}/${env}; deploy again.`);
  });
}

/**
 * Waits until each endpoint's minimum workers are up (one ready worker is enough) or cannot start, for at most
 * `timeoutMs`: what `deploy --wait` does, and what the extension runs after a deploy to report a worker that fails.
 */
export function waitForWorkers(target: ApiTarget, endpoints: Endpoint[], timeoutMs = READY_TIMEOUT_MS): Promise<WorkersReadiness> {
  return waitWith(new ControlPlaneClient(target), endpoints, timeoutMs);
}

async function waitWith(client: ControlPlaneClient, endpoints: Endpoint[], timeoutMs: number, cancelled?: () => boolean): Promise<WorkersReadiness> {
  const problems: WorkerProblem[] = [];
  const deadline = Date.now() + timeoutMs;
  const waiting = new Set(endpoints.filter((e) => e.workersMin > 0).map((e) => e.id));
  while (waiting.size && Date.now() < deadline && !cancelled?.()) {
    for (const id of [...waiting]) {
      const h = await client.endpointHealth(id);
      const ep = endpoints.find((e) => e.id === id)!;
      const ready = !!h && h.idle + h.running >= Math.min(ep.workersMin, 1);
      const cannot = h?.lastError ?? (ready ? null : h?.blocked);
      if (cannot) problems.push({ endpoint: ep.name, error: cannot });
      if (cannot || ready) waiting.delete(id);
    }
    if (waiting.size) await new Promise((r) => setTimeout(r, 100));
  }
  return { problems, starting: endpoints.filter((e) => waiting.has(e.id)).map((e) => e.name) };
}
