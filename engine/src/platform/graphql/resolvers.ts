// Resolvers of the control plane schema: a root object for Query/Mutation and small view classes whose
// fields and methods graphql-js resolves by name. All state lives in ControlPlane; views only present it.
import type { ControlPlane, DeployedEndpoint } from '../controlPlane/service';
import type { AppRow, BuildRow, EnvironmentRow } from '../store/types';
import type { EndpointHealth } from '../../protocol/controlPlane';
import { badRequest } from '../errors';
import { INSTANCE_ID } from '../jobs/jobEngine';

/** The wire shape is the client's (engine/src/api): one definition for both ends of the API. */
export type EndpointHealthView = EndpointHealth;

export interface GraphqlContext {
  cp: ControlPlane;
  baseUrl: string;
  version: string;
  health(endpointId: string): EndpointHealthView;
  /** Host notes of an endpoint (missing system packages, a driver below min_cuda_version). */
  notes(ep: DeployedEndpoint): string[];
}

type Args = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const optStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const optNum = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

class AppView {
  constructor(
    private readonly row: AppRow,
    private readonly ctx: GraphqlContext,
  ) {}
  id = () => this.row.id;
  name = () => this.row.name;
  createdAt = () => this.row.created_at;
  environments = () => this.ctx.cp.environmentsOf(this.row.id).map((e) => new EnvironmentView(e, this.ctx));
  environment = (a: Args) => {
    const e = this.ctx.cp.environmentsOf(this.row.id).find((x) => x.name === a.name);
    return e ? new EnvironmentView(e, this.ctx) : null;
  };
  builds = () => this.ctx.cp.buildsOf(this.row.id).map((b) => new BuildView(b));
  volumes = () => this.ctx.cp.volumes(this.row.id);
}

class EnvironmentView {
  constructor(
    private readonly row: EnvironmentRow,
    private readonly ctx: GraphqlContext,
  ) {}
  id = () => this.row.id;
  name = () => this.row.name;
  appId = () => this.row.app_id;
  app = () => new AppView(this.ctx.cp.mustApp(this.row.app_id), this.ctx);
  createdAt = () => this.row.created_at;
  activeBuild = () => {
    const b = this.row.active_build_id ? this.ctx.cp.build(this.row.active_build_id) : undefined;
    return b ? new BuildView(b) : null;
  };
  endpoints = () => this.ctx.cp.endpointsOf(this.row.id).map((e) => new EndpointView(e, this.ctx));
  endpoint = (a: Args) => {
    const e = this.ctx.cp.endpointsOf(this.row.id).find((x) => x.name === a.name);
    return e ? new EndpointView(e, this.ctx) : null;
  };
}

class BuildView {
  constructor(private readonly row: BuildRow) {}
  id = () => this.row.id;
  appId = () => this.row.app_id;
  createdAt = () => this.row.created_at;
  size = () => this.row.size;
  sha256 = () => this.row.sha256;
  manifest = () => this.row.manifest;
  private parsed(): { project_name?: string; source_fingerprint?: string } {
    try {
      return JSON.parse(this.row.manifest) as { project_name?: string; source_fingerprint?: string };
    } catch {
      return {};
    }
  }
  projectName = () => this.parsed().project_name ?? null;
  sourceFingerprint = () => this.parsed().source_fingerprint ?? null;
}

export function endpointUrl(baseUrl: string, ep: DeployedEndpoint): string {
  return `${baseUrl}/${ep.config.kind === 'LOAD_BALANCED' ? 'lb' : 'v2'}/${ep.id}`;
}

class EndpointView {
  constructor(
    private readonly ep: DeployedEndpoint,
    private readonly ctx: GraphqlContext,
  ) {}
  id = () => this.ep.id;
  name = () => this.ep.name;
  type = () => this.ep.config.kind;
  appId = () => this.ep.appId;
  environmentId = () => this.ep.environmentId;
  buildId = () => this.ep.buildId;
  url = () => endpointUrl(this.ctx.baseUrl, this.ep);
  routes = () => this.ep.config.routes;
  workersMin = () => this.ep.config.workersMin;
  workersMax = () => this.ep.config.workersMax;
  idleTimeout = () => this.ep.config.idleTimeout;
  maxConcurrency = () => this.ep.config.maxConcurrency;
  executionTimeoutMs = () => this.ep.config.executionTimeoutMs;
  declaredExecutionTimeoutMs = () => this.ep.config.declaredExecutionTimeoutMs ?? null;
  gpuIds = () => this.ep.config.gpuIds ?? null;
  gpuCount = () => this.ep.config.gpuCount;
  cpu = () => this.ep.config.cpu ?? null;
  env = () => Object.entries(this.ep.config.env).map(([name, value]) => ({ name, value }));
  sourceFingerprint = () => this.ep.config.sourceFingerprint;
  createdAt = () => this.ep.createdAt;
  updatedAt = () => this.ep.updatedAt;
  health = () => this.ctx.health(this.ep.id);
  datacenters = () => this.ep.config.datacenters ?? null;
  volumes = () => this.ep.config.volumes.map((v) => ({ name: v.name, datacenter: v.datacenter, sizeGb: v.size }));
  scalerType = () => this.ep.config.scalerType;
  scalerValue = () => this.ep.config.scalerValue;
  minCudaVersion = () => this.ep.config.minCudaVersion;
  systemDependencies = () => this.ep.config.systemDependencies;
  image = () => this.ep.config.image ?? null;
  notes = () => this.ctx.notes(this.ep);
}

/** The root value: Query and Mutation fields. */
export function rootValue(ctx: GraphqlContext): Record<string, (a: Args) => unknown> {
  const { cp } = ctx;
  const app = (r: AppRow | undefined) => (r ? new AppView(r, ctx) : null);
  const env = (r: EnvironmentRow | undefined) => (r ? new EnvironmentView(r, ctx) : null);
  const ep = (e: DeployedEndpoint | undefined) => (e ? new EndpointView(e, ctx) : null);
  return {
    apps: () => cp.listApps().map((a) => new AppView(a, ctx)),
    app: (a) => {
      if ((a.id == null) === (a.name == null)) throw badRequest('app(...) needs exactly one of id and name');
      return app(a.id != null ? cp.app(str(a.id)) : cp.appByName(str(a.name)));
    },
    environment: (a) => env(cp.environment(str(a.id))),
    build: (a) => {
      const b = cp.build(str(a.id));
      return b ? new BuildView(b) : null;
    },
    endpoint: (a) => ep(cp.endpoint(str(a.id))),
    endpointByName: (a) => {
      const appRow = cp.appByName(str(a.app));
      const envRow = appRow && cp.environmentsOf(appRow.id).find((e) => e.name === a.environment);
      return ep(envRow ? cp.endpointsOf(envRow.id).find((e) => e.name === a.name) : undefined);
    },
    endpoints: (a) => (a.environmentId != null ? cp.endpointsOf(str(a.environmentId)) : cp.listEndpoints()).map((e) => ep(e)),
    volumes: (a) => cp.volumes(optStr(a.appId)),
    platform: () => ({ version: ctx.version, baseUrl: ctx.baseUrl, instanceId: INSTANCE_ID, datacenters: cp.capabilities.datacenters ?? null }),

    createApp: async (a) => app(await cp.createApp(str(a.name))),
    deleteApp: async (a) => {
      await cp.deleteApp(str(a.id));
      return true;
    },
    createEnvironment: async (a) => env(await cp.createEnvironment(str(a.appId), str(a.name))),
    deleteEnvironment: async (a) => {
      await cp.deleteEnvironment(str(a.id));
      return true;
    },
    requestBuildUpload: (a) => {
      cp.mustApp(str(a.appId));
      const up = cp.artifacts.beginUpload(str(a.appId), Number(a.size));
      return { uploadId: up.id, url: `${ctx.baseUrl}/_uploads/${up.id}`, expiresAt: up.expiresAt };
    },
    finalizeBuild: async (a) => new BuildView(await cp.finalizeBuild(str(a.appId), str(a.uploadId), optStr(a.manifest))),
    deployBuild: async (a) => env(await cp.deployBuild(str(a.environmentId), str(a.buildId))),
    saveEndpoint: async (a) => {
      const i = (a.input ?? {}) as Args;
      const envList = Array.isArray(i.env) ? (i.env as Array<{ name: string; value: string }>) : undefined;
      return ep(
        await cp.saveEndpoint({
          environmentId: str(i.environmentId),
          name: str(i.name),
          buildId: optStr(i.buildId),
          workersMin: optNum(i.workersMin),
          workersMax: optNum(i.workersMax),
          idleTimeout: optNum(i.idleTimeout),
          maxConcurrency: optNum(i.maxConcurrency),
          executionTimeoutMs: optNum(i.executionTimeoutMs),
          env: envList ? Object.fromEntries(envList.map((v) => [v.name, v.value])) : undefined,
        }),
      );
    },
    deleteEndpoint: async (a) => {
      await cp.deleteEndpoint(str(a.id));
      return true;
    },
    deleteVolume: async (a) => {
      await cp.deleteVolume(str(a.appId), str(a.name), optStr(a.datacenter));
      return true;
    },
  };
}
