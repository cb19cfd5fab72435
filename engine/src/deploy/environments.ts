// Reading and removing what an environment holds: `env get`, `env list` and `undeploy`, against the control
// plane's state. The JSON shapes here are what `--json` prints.
import type { EndpointKind } from '../protocol/endpointKind';
import { ControlPlaneClient, type Endpoint, type EndpointHealth, type Volume } from '../api/controlPlane';
import type { ApiTarget } from '../api/http';
import { UserError } from '../util/errors';
import { DEV_ENVIRONMENT, findEnvironment, LIVE_PREFIX } from './context';

export interface EndpointSummary {
  name: string;
  type: EndpointKind;
  id: string;
  url: string;
  routes: Array<{ method: string; path: string; function: string }>;
  /** The endpoint's execution_timeout_ms, when it declares one: the client time-out of /runsync calls. */
  executionTimeoutMs: number | null;
  /** Its workers now (what `env get` shows): deploy returns while the minimum workers start, and this says when they are up. */
  workers?: WorkersSummary;
}

export interface WorkersSummary {
  min: number;
  max: number;
  /** Workers up: idle or running a job. */
  ready: number;
  starting: number;
  /** Why workers cannot start, when the last attempt failed. */
  error: string | null;
  /** Why workers do not start here or wait (the hardware, GPUs held by other workers), as the platform's health says. */
  note: string | null;
}

export interface VolumeSummary {
  name: string;
  datacenter: string;
  sizeGb: number;
  usedBytes: number;
  /** The endpoints that mount it (of every environment of the app). */
  endpoints: string[];
}

export interface EnvironmentSummary {
  app: string;
  environment: string;
  buildId: string | null;
  endpoints: EndpointSummary[];
  /** The app's network volumes that this environment's endpoints mount. */
  volumes: VolumeSummary[];
}

const volumeSummary = (v: Volume): VolumeSummary => ({
  name: v.name,
  datacenter: v.datacenter,
  sizeGb: v.sizeGb,
  usedBytes: v.usedBytes,
  endpoints: v.endpoints,
});

/** The workers of an endpoint in words, as `env get` and the extension show them. */
export function workersText(w: WorkersSummary): string {
  if (w.error) return `workers cannot start: ${w.error}`;
  const now = `${w.ready} ready${w.starting ? `, ${w.starting} starting` : ''}`;
  return `workers ${now} (min ${w.min}, max ${w.max})${w.note ? `; ${w.note}` : ''}`;
}

export function summarize(e: Endpoint, health?: EndpointHealth): EndpointSummary {
  const s: EndpointSummary = { name: e.name, type: e.type, id: e.id, url: e.url, routes: e.routes, executionTimeoutMs: e.declaredExecutionTimeoutMs };
  if (health)
    s.workers = {
      min: e.workersMin,
      max: e.workersMax,
      ready: health.idle + health.running,
      starting: health.initializing,
      error: health.lastError,
      note: health.hardwareNote,
    };
  return s;
}

/** `choose`: how the caller names an environment (findEnvironment). */
export async function getEnvironment(target: ApiTarget, appName: string, envName: string | undefined, choose?: string): Promise<EnvironmentSummary> {
  const client = new ControlPlaneClient(target);
  const env = findEnvironment(await client.findApp(appName), appName, envName, choose);
  const [deployed, health] = await Promise.all([client.listEndpoints(env.id), client.environmentHealth(env.id)]);
  const endpoints = deployed.map((e) => summarize(e, health.get(e.id))).sort((a, b) => a.name.localeCompare(b.name));
  const mounted = new Set(deployed.flatMap((e) => e.volumes.map((v) => `${v.datacenter}/${v.name}`)));
  const volumes = mounted.size ? (await client.listVolumes(env.appId)).filter((v) => mounted.has(`${v.datacenter}/${v.name}`)).map(volumeSummary) : [];
  return { app: appName, environment: env.name, buildId: env.activeBuildId, endpoints, volumes };
}

/** The app's network volumes, mounted or not. */
export async function listVolumes(target: ApiTarget, appName: string): Promise<VolumeSummary[]> {
  const client = new ControlPlaneClient(target);
  const app = await client.findApp(appName);
  if (!app) throw new UserError(`app "${appName}" has not been deployed yet, so it has no volumes: run strato deploy first.`);
  return (await client.listVolumes(app.id)).map(volumeSummary);
}

/** Deletes one of the app's volumes with its files (refused while an endpoint mounts it). */
export async function deleteVolume(target: ApiTarget, appName: string, name: string, datacenter?: string): Promise<void> {
  const client = new ControlPlaneClient(target);
  const app = await client.findApp(appName);
  if (!app) throw new UserError(`app "${appName}" has not been deployed yet, so it has no volumes.`);
  await client.deleteVolume(app.id, name, datacenter);
}

export async function listEnvironments(
  target: ApiTarget,
  appName: string,
): Promise<Array<{ app: string; environment: string; buildId: string | null; endpoints: number }>> {
  const client = new ControlPlaneClient(target);
  const app = await client.findApp(appName);
  if (!app)
    throw new UserError(`app "${appName}" has not been deployed yet: run strato deploy first (the app name comes from the project directory, or STRATO_APP).`);
  const out = [];
  for (const e of app.environments)
    out.push({ app: appName, environment: e.name, buildId: e.activeBuildId, endpoints: (await client.listEndpoints(e.id)).length });
  return out.sort((a, b) => a.environment.localeCompare(b.environment));
}

/** Deletes every endpoint of the environment (their workers stop, their jobs go), then the emptied environment. */
export async function undeployEnvironment(
  target: ApiTarget,
  appName: string,
  envName: string | undefined,
): Promise<{ environment: string; removed: string[] }> {
  const client = new ControlPlaneClient(target);
  const env = findEnvironment(await client.findApp(appName), appName, envName);
  const endpoints = await client.listEndpoints(env.id);
  for (const e of endpoints) await client.deleteEndpoint(e.id);
  await client.deleteEnvironment(env.id);
  return { environment: env.name, removed: endpoints.map((e) => e.name).sort() };
}

/**
 * A deployed endpoint by name in an environment of the app (the only one when none is named). In the dev server's
 * environment the endpoints are named `live-<name>` (LIVE_PREFIX): either name finds them.
 */
export async function findDeployedEndpoint(target: ApiTarget, appName: string, envName: string | undefined, name: string): Promise<Endpoint> {
  const client = new ControlPlaneClient(target);
  const env = findEnvironment(await client.findApp(appName), appName, envName);
  const endpoints = await client.listEndpoints(env.id);
  const found =
    endpoints.find((e) => e.name === name) ?? (env.name === DEV_ENVIRONMENT ? endpoints.find((e) => e.name === `${LIVE_PREFIX}${name}`) : undefined);
  if (found) return found;
  const names = endpoints.map((e) => e.name).sort();
  throw new UserError(
    `${appName}/${env.name} has no endpoint "${name}"${names.length ? ` (it has ${names.join(', ')})` : ' (it has none)'}: check the name, or choose ` +
      `the environment with --env NAME.`,
  );
}
