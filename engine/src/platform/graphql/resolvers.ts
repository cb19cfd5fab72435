// Resolvers of the control plane schema: a root object for Query/Mutation and small view classes whose
// fields and methods graphql-js resolves by name. All state lives in ControlPlane and KeyRing; views only present
// it, and the guard keeps each key to its scope before anything is read or changed.
import type { HostView } from '../../protocol/agents';
import type { ControlPlane, DeployedEndpoint } from '../controlPlane/service';
import type { KeyRing } from '../controlPlane/keys';
import type { AppRow, BuildRow, EnvironmentRow } from '../store/types';
import type { AuditEntry, EndpointHealth, PlatformNode as PlatformNodeView } from '../../protocol/controlPlane';
import { AUDIT_DEFAULT_LIMIT, AUDIT_MAX_LIMIT, type AuditTarget } from '../controlPlane/audit';
import { mayReadSecrets } from '../auth';
import { badRequest } from '../errors';
import type { Guard } from './guard';
import { withoutErrorOutput } from '../workers/exitText';

/** The wire shape is the client's (engine/src/api): one definition for both ends of the API. */
export type EndpointHealthView = EndpointHealth;
export type { PlatformNodeView };

export interface GraphqlContext {
  cp: ControlPlane;
  keys: KeyRing;
  /** The key of this request and its scope. */
  guard: Guard;
  baseUrl: string;
  version: string;
  /** This node's instance id (job-id suffix). */
  instanceId: string;
  /** The nodes of the service: this one alone on the embedded database, every registered node in a cluster. */
  nodes(): Promise<PlatformNodeView[]>;
  /** The whole service's figures (those of REST /health) with this node's notes. */
  health(endpointId: string): Promise<EndpointHealthView>;
  /** Host notes of an endpoint (missing system packages, a driver below min_cuda_version). */
  notes(ep: DeployedEndpoint): string[];
  audit(q: { app?: string; keyName?: string; limit: number }): Promise<AuditEntry[]>;
  /** The machines workers run on (workers/hosts.ts), every node's in a cluster (serviceHosts.ts). */
  hosts(): Promise<HostView[]>;
}

/** The value of an endpoint's STRATO_API_KEY (the deployer's key, for calls to other endpoints) is never answered. */
const KEY_VARIABLES = new Set(['STRATO_API_KEY']);
const HIDDEN_KEY = '(hidden: an API key is never shown)';
/** An invoke key sees which variables an endpoint has, not their values. */
const HIDDEN_VALUE = '(hidden: reading values needs a deploy or admin key)';

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
  builds = () => this.ctx.cp.buildsOf(this.row.id).map((b) => new BuildView(b, this.ctx));
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
    return b ? new BuildView(b, this.ctx) : null;
  };
  endpoints = () => this.ctx.cp.endpointsOf(this.row.id).map((e) => new EndpointView(e, this.ctx));
  endpoint = (a: Args) => {
    const e = this.ctx.cp.endpointsOf(this.row.id).find((x) => x.name === a.name);
    return e ? new EndpointView(e, this.ctx) : null;
  };
}

class BuildView {
  constructor(
    private readonly row: BuildRow,
    private readonly ctx: GraphqlContext,
  ) {}
  id = () => this.row.id;
  appId = () => this.row.app_id;
  createdAt = () => this.row.created_at;
  size = () => this.row.size;
  sha256 = () => this.row.sha256;
  manifest = () => {
    this.ctx.guard.secrets('build manifests');
    return this.row.manifest;
  };
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
  env = () => {
    const values = mayReadSecrets(this.ctx.guard.principal);
    return Object.entries(this.ep.config.env).map(([name, value]) => ({
      name,
      value: KEY_VARIABLES.has(name) ? HIDDEN_KEY : values ? value : HIDDEN_VALUE,
    }));
  };
  sourceFingerprint = () => this.ep.config.sourceFingerprint;
  createdAt = () => this.ep.createdAt;
  updatedAt = () => this.ep.updatedAt;
  /** An invoke key reads the counts and notes, not a worker's error output (exitText.ts). */
  health = async () => {
    const h = await this.ctx.health(this.ep.id);
    if (!h.lastError || mayReadSecrets(this.ctx.guard.principal)) return h;
    return { ...h, lastError: withoutErrorOutput(h.lastError, this.ep.name) };
  };
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
  const { cp, guard: g } = ctx;
  const by = g.principal;
  const appName = (appId: string) => cp.mustApp(appId).name;
  /** A record found by id is shown only to a key that reaches its app. */
  const visible = <T>(row: T | undefined, appId: (r: T) => string): T | undefined => {
    if (row) g.see(appName(appId(row)));
    return row;
  };
  const app = (r: AppRow | undefined) => (r ? new AppView(r, ctx) : null);
  const env = (r: EnvironmentRow | undefined) => (r ? new EnvironmentView(r, ctx) : null);
  const ep = (e: DeployedEndpoint | undefined) => (e ? new EndpointView(e, ctx) : null);
  /** `what` says the change in words for the refusal: `delete endpoints of`, followed by the app. */
  const changeApp = (operation: string, appId: string, what: string, target: AuditTarget = cp.target('app', appId)) => {
    const a = cp.mustApp(appId);
    return g.change(operation, { ...target, app: a.name }, `${what} app "${a.name}"`);
  };
  const changeEnvironment = (operation: string, environmentId: string, what: string) => {
    const e = cp.mustEnvironment(environmentId);
    return changeApp(operation, e.app_id, what, cp.target('environment', e.id));
  };
  return {
    apps: () =>
      cp
        .listApps()
        .filter((a) => g.canSee(a.name))
        .map((a) => new AppView(a, ctx)),
    app: (a) => {
      if ((a.id == null) === (a.name == null)) throw badRequest('app(...) needs exactly one of id and name');
      if (a.name != null) g.see(str(a.name));
      return app(a.id != null ? visible(cp.app(str(a.id)), (r) => r.id) : cp.appByName(str(a.name)));
    },
    environment: (a) => env(visible(cp.environment(str(a.id)), (r) => r.app_id)),
    build: (a) => {
      const b = visible(cp.build(str(a.id)), (r) => r.app_id);
      return b ? new BuildView(b, ctx) : null;
    },
    endpoint: (a) => ep(visible(cp.endpoint(str(a.id)), (r) => r.appId)),
    endpointByName: (a) => {
      g.see(str(a.app));
      const appRow = cp.appByName(str(a.app));
      const envRow = appRow && cp.environmentsOf(appRow.id).find((e) => e.name === a.environment);
      return ep(envRow ? cp.endpointsOf(envRow.id).find((e) => e.name === a.name) : undefined);
    },
    endpoints: (a) => {
      if (a.environmentId == null)
        return cp
          .listEndpoints()
          .filter((e) => g.canSee(appName(e.appId)))
          .map((e) => ep(e));
      const e = visible(cp.environment(str(a.environmentId)), (r) => r.app_id);
      return e ? cp.endpointsOf(e.id).map((x) => ep(x)) : [];
    },
    volumes: async (a) => {
      if (a.appId == null) return (await cp.volumes()).filter((v) => g.canSee(appName(v.appId)));
      const r = visible(cp.app(str(a.appId)), (x) => x.id);
      return r ? cp.volumes(r.id) : [];
    },
    platform: () => ({
      version: ctx.version,
      baseUrl: ctx.baseUrl,
      instanceId: ctx.instanceId,
      datacenters: cp.capabilities.datacenters ?? null,
      nodes: () => ctx.nodes(),
      hosts: () => {
        g.adminRead('listing worker hosts');
        return ctx.hosts();
      },
    }),
    keys: () => {
      g.adminRead('listing keys');
      return ctx.keys.list();
    },
    audit: (a) => {
      g.adminRead('reading the audit log');
      const limit = a.limit == null ? AUDIT_DEFAULT_LIMIT : Number(a.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_MAX_LIMIT)
        throw badRequest(`limit must be an integer from 1 to ${AUDIT_MAX_LIMIT}, got ${a.limit}`);
      return ctx.audit({ app: optStr(a.app), keyName: optStr(a.key), limit });
    },

    createApp: async (a) => {
      const name = str(a.name);
      await g.change('createApp', { type: 'app', id: null, name, app: name }, `create app "${name}"`);
      return app(await cp.createApp(by, name));
    },
    deleteApp: async (a) => {
      await changeApp('deleteApp', str(a.id), 'delete');
      await cp.deleteApp(by, str(a.id));
      return true;
    },
    createEnvironment: async (a) => {
      await changeApp('createEnvironment', str(a.appId), 'create environments in');
      return env(await cp.createEnvironment(by, str(a.appId), str(a.name)));
    },
    deleteEnvironment: async (a) => {
      await changeEnvironment('deleteEnvironment', str(a.id), 'delete environments of');
      await cp.deleteEnvironment(by, str(a.id));
      return true;
    },
    requestBuildUpload: async (a) => {
      await changeApp('requestBuildUpload', str(a.appId), 'upload builds to');
      const up = await cp.artifacts.beginUpload(str(a.appId), Number(a.size));
      return { uploadId: up.id, url: `${ctx.baseUrl}/_uploads/${up.id}`, expiresAt: up.expiresAt };
    },
    finalizeBuild: async (a) => {
      await changeApp('finalizeBuild', str(a.appId), 'upload builds to');
      return new BuildView(await cp.finalizeBuild(by, str(a.appId), str(a.uploadId), optStr(a.manifest)), ctx);
    },
    deployBuild: async (a) => {
      await changeEnvironment('deployBuild', str(a.environmentId), 'deploy builds of');
      return env(await cp.deployBuild(by, str(a.environmentId), str(a.buildId)));
    },
    saveEndpoint: async (a) => {
      const i = (a.input ?? {}) as Args;
      await changeEnvironment('saveEndpoint', str(i.environmentId), 'save endpoints in');
      const envList = Array.isArray(i.env) ? (i.env as Array<{ name: string; value: string }>) : undefined;
      return ep(
        await cp.saveEndpoint(by, {
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
      const e = cp.endpoint(str(a.id));
      if (e) await changeApp('deleteEndpoint', e.appId, 'delete endpoints of', cp.target('endpoint', e.id));
      await cp.deleteEndpoint(by, str(a.id));
      return true;
    },
    deleteVolume: async (a) => {
      const appId = str(a.appId);
      await changeApp('deleteVolume', appId, 'delete volumes of', { type: 'volume', id: null, name: str(a.name), app: null });
      await cp.deleteVolume(by, appId, str(a.name), optStr(a.datacenter));
      return true;
    },
    createKey: async (a) => {
      await g.admin('createKey', { type: 'key', id: null, name: str(a.name), app: null }, 'creating keys');
      const apps = Array.isArray(a.apps) ? (a.apps as string[]) : [];
      return ctx.keys.create(by, str(a.name), str(a.scope), apps);
    },
    revokeKey: async (a) => {
      await g.admin('revokeKey', { type: 'key', id: null, name: str(a.key), app: null }, 'revoking keys');
      return ctx.keys.revoke(by, str(a.key));
    },
  };
}
