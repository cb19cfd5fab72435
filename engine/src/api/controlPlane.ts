// Typed client of the control plane (GraphQL at {base_url}/graphql): apps, environments, build upload
// (request a location, PUT the artifact, finalize with the manifest), deploy, endpoints (save, delete, list,
// look up by name within an app and environment), API keys and the audit log.
import fs from 'node:fs';
import type {
  ApiKeyInfo,
  App,
  AuditEntry,
  Build,
  CreatedKey,
  Endpoint,
  EndpointHealth,
  EndpointInput,
  Environment,
  KeyScope,
  PlatformNode,
  Volume,
} from '../protocol/controlPlane';
import type { Manifest } from '../protocol/manifest';
import { DEFAULT_PORT } from '../protocol/layout';
import { UserError } from '../util/errors';
import { describeAnswer, errorText, send, type ApiTarget } from './http';

export type {
  ApiKeyInfo,
  App,
  AuditEntry,
  Build,
  CreatedKey,
  Endpoint,
  EndpointHealth,
  EndpointInput,
  Environment,
  KeyScope,
  PlatformNode,
  Volume,
} from '../protocol/controlPlane';

/** A GraphQL error of the control plane, with its code (BAD_REQUEST, NOT_FOUND, CONFLICT, ...). */
export class ControlPlaneError extends UserError {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ControlPlaneError';
  }
}

const ENV = 'id name appId createdAt activeBuild { id }';
const APP = `id name createdAt environments { ${ENV} }`;
const BUILD = 'id appId createdAt size sha256 projectName sourceFingerprint';
const KEY = 'id name scope apps prefix createdAt createdBy lastUsedAt revokedAt revokedBy builtin';
const AUDIT = 'seq at keyId keyName operation outcome app targetType targetId targetName detail';
const ENDPOINT = `id name type appId environmentId buildId url routes { method path function } workersMin workersMax
  idleTimeout maxConcurrency executionTimeoutMs declaredExecutionTimeoutMs gpuIds gpuCount cpu env { name value }
  sourceFingerprint createdAt updatedAt datacenters volumes { name datacenter sizeGb } scalerType scalerValue minCudaVersion
  systemDependencies image notes`;
const VOLUME = 'appId name datacenter sizeGb usedBytes createdAt endpoints';

type RawEnv = Omit<Environment, 'activeBuildId'> & { activeBuild: { id: string } | null };
type RawApp = Omit<App, 'environments'> & { environments: RawEnv[] };
type RawEndpoint = Omit<Endpoint, 'env'> & { env: Array<{ name: string; value: string }> };

const env = (e: RawEnv): Environment => ({
  id: e.id,
  name: e.name,
  appId: e.appId,
  createdAt: e.createdAt,
  activeBuildId: e.activeBuild?.id ?? null,
});
const app = (a: RawApp): App => ({ ...a, environments: a.environments.map(env) });
const endpoint = (e: RawEndpoint): Endpoint => ({ ...e, env: Object.fromEntries(e.env.map((v) => [v.name, v.value])) });

export class ControlPlaneClient {
  constructor(readonly target: ApiTarget) {}

  /** Runs one GraphQL operation; the first error becomes a ControlPlaneError. */
  async query<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const r = await send(this.target, 'POST', '/graphql', { body: { query, variables } });
    const body = (r.body ?? {}) as { data?: T; errors?: Array<{ message: string; extensions?: { code?: string } }> };
    if (body.errors?.length) {
      const e = body.errors[0];
      throw new ControlPlaneError(e.extensions?.code ?? 'ERROR', `the control plane refused the request: ${e.message}`);
    }
    if (r.status !== 200 || !body.data) {
      const platformJson = typeof r.body === 'object' && r.body !== null && 'error' in r.body;
      if (!platformJson || r.status === 404) throw new ControlPlaneError('HTTP', notAPlatform(this.target.baseUrl, r.status, r.body));
      throw new ControlPlaneError('HTTP', `the control plane answered HTTP ${r.status}: ${errorText(r.body)}`);
    }
    return body.data;
  }

  async listApps(): Promise<App[]> {
    return (await this.query<{ apps: RawApp[] }>(`{ apps { ${APP} } }`)).apps.map(app);
  }

  async findApp(name: string): Promise<App | null> {
    const d = await this.query<{ app: RawApp | null }>(`query($n: String) { app(name: $n) { ${APP} } }`, { n: name });
    return d.app ? app(d.app) : null;
  }

  async createApp(name: string): Promise<App> {
    const d = await this.query<{ createApp: RawApp }>(`mutation($n: String!) { createApp(name: $n) { ${APP} } }`, { n: name });
    return app(d.createApp);
  }

  async deleteApp(id: string): Promise<void> {
    await this.query(`mutation($id: ID!) { deleteApp(id: $id) }`, { id });
  }

  async createEnvironment(appId: string, name: string): Promise<Environment> {
    const d = await this.query<{ createEnvironment: RawEnv }>(`mutation($a: ID!, $n: String!) { createEnvironment(appId: $a, name: $n) { ${ENV} } }`, {
      a: appId,
      n: name,
    });
    return env(d.createEnvironment);
  }

  async deleteEnvironment(id: string): Promise<void> {
    await this.query(`mutation($id: ID!) { deleteEnvironment(id: $id) }`, { id });
  }

  /** Uploads an artifact (tar.gz) and registers it as a build of the app, with its manifest. */
  async uploadBuild(appId: string, artifactPath: string, manifest?: Manifest | string): Promise<Build> {
    const size = fs.statSync(artifactPath).size;
    const up = await this.query<{ requestBuildUpload: { uploadId: string; url: string } }>(
      `mutation($a: ID!, $s: Float!) { requestBuildUpload(appId: $a, size: $s) { uploadId url } }`,
      { a: appId, s: size },
    );
    const { uploadId, url } = up.requestBuildUpload;
    const path = url.startsWith(this.target.baseUrl) ? url.slice(this.target.baseUrl.length) : new URL(url).pathname;
    const put = await send(this.target, 'PUT', path, {
      raw: fs.createReadStream(artifactPath),
      headers: { 'content-type': 'application/gzip', 'content-length': String(size) },
      timeoutMs: 30 * 60_000,
    });
    if (put.status !== 200) throw new UserError(`uploading ${artifactPath} failed (HTTP ${put.status}): ${errorText(put.body)}`);
    const m = manifest === undefined ? null : typeof manifest === 'string' ? manifest : JSON.stringify(manifest);
    const d = await this.query<{ finalizeBuild: Build }>(
      `mutation($a: ID!, $u: ID!, $m: String) { finalizeBuild(appId: $a, uploadId: $u, manifest: $m) { ${BUILD} } }`,
      { a: appId, u: uploadId, m },
    );
    return d.finalizeBuild;
  }

  async deployBuild(environmentId: string, buildId: string): Promise<Environment> {
    const d = await this.query<{ deployBuild: RawEnv }>(`mutation($e: ID!, $b: ID!) { deployBuild(environmentId: $e, buildId: $b) { ${ENV} } }`, {
      e: environmentId,
      b: buildId,
    });
    return env(d.deployBuild);
  }

  /** Creates the endpoint, or updates the one with the same name in the environment. */
  async saveEndpoint(input: EndpointInput): Promise<Endpoint> {
    const vars = {
      ...input,
      env: input.env ? Object.entries(input.env).map(([name, value]) => ({ name, value })) : undefined,
    };
    const d = await this.query<{ saveEndpoint: RawEndpoint }>(`mutation($i: EndpointInput!) { saveEndpoint(input: $i) { ${ENDPOINT} } }`, { i: vars });
    return endpoint(d.saveEndpoint);
  }

  async deleteEndpoint(id: string): Promise<void> {
    await this.query(`mutation($id: ID!) { deleteEndpoint(id: $id) }`, { id });
  }

  async listEndpoints(environmentId?: string): Promise<Endpoint[]> {
    const d = await this.query<{ endpoints: RawEndpoint[] }>(`query($e: ID) { endpoints(environmentId: $e) { ${ENDPOINT} } }`, { e: environmentId ?? null });
    return d.endpoints.map(endpoint);
  }

  async getEndpoint(id: string): Promise<Endpoint | null> {
    const d = await this.query<{ endpoint: RawEndpoint | null }>(`query($id: ID!) { endpoint(id: $id) { ${ENDPOINT} } }`, { id });
    return d.endpoint ? endpoint(d.endpoint) : null;
  }

  /** The endpoint named `name` in environment `environment` of app `app` (all by name). */
  async findEndpoint(appName: string, environment: string, name: string): Promise<Endpoint | null> {
    const d = await this.query<{ endpointByName: RawEndpoint | null }>(
      `query($a: String!, $e: String!, $n: String!) { endpointByName(app: $a, environment: $e, name: $n) { ${ENDPOINT} } }`,
      { a: appName, e: environment, n: name },
    );
    return d.endpointByName ? endpoint(d.endpointByName) : null;
  }

  async endpointHealth(id: string): Promise<EndpointHealth | null> {
    const d = await this.query<{ endpoint: { health: EndpointHealth } | null }>(
      `query($id: ID!) { endpoint(id: $id) { health { idle running initializing inQueue inProgress lastError hardwareNote blocked } } }`,
      { id },
    );
    return d.endpoint?.health ?? null;
  }

  /** The health of every endpoint of an environment, by endpoint id, in one request. */
  async environmentHealth(environmentId: string): Promise<Map<string, EndpointHealth>> {
    const d = await this.query<{ endpoints: Array<{ id: string; health: EndpointHealth }> }>(
      `query($e: ID) { endpoints(environmentId: $e) { id health { idle running initializing inQueue inProgress lastError hardwareNote blocked } } }`,
      { e: environmentId },
    );
    return new Map(d.endpoints.map((e) => [e.id, e.health]));
  }

  /** Network volumes of an app (every app's without one). */
  async listVolumes(appId?: string): Promise<Volume[]> {
    const d = await this.query<{ volumes: Volume[] }>(`query($a: ID) { volumes(appId: $a) { ${VOLUME} } }`, { a: appId ?? null });
    return d.volumes;
  }

  async deleteVolume(appId: string, name: string, datacenter?: string): Promise<void> {
    await this.query(`mutation($a: ID!, $n: String!, $d: String) { deleteVolume(appId: $a, name: $n, datacenter: $d) }`, {
      a: appId,
      n: name,
      d: datacenter ?? null,
    });
  }

  /** Creates an API key (admin keys only); `secret` is the only copy of the key. */
  async createKey(name: string, scope: KeyScope, apps: string[] = []): Promise<CreatedKey> {
    const d = await this.query<{ createKey: CreatedKey }>(
      `mutation($n: String!, $s: KeyScope!, $a: [String!]) { createKey(name: $n, scope: $s, apps: $a) { secret key { ${KEY} } } }`,
      { n: name, s: scope, a: apps },
    );
    return d.createKey;
  }

  async listKeys(): Promise<ApiKeyInfo[]> {
    return (await this.query<{ keys: ApiKeyInfo[] }>(`{ keys { ${KEY} } }`)).keys;
  }

  /** Revokes a key by id, or by the name of an active key. */
  async revokeKey(idOrName: string): Promise<ApiKeyInfo> {
    return (await this.query<{ revokeKey: ApiKeyInfo }>(`mutation($k: String!) { revokeKey(key: $k) { ${KEY} } }`, { k: idOrName })).revokeKey;
  }

  /** Control-plane changes, newest first (admin keys only). */
  async audit(q: { app?: string; key?: string; limit?: number } = {}): Promise<AuditEntry[]> {
    const d = await this.query<{ audit: AuditEntry[] }>(`query($a: String, $k: String, $l: Int) { audit(app: $a, key: $k, limit: $l) { ${AUDIT} } }`, {
      a: q.app ?? null,
      k: q.key ?? null,
      l: q.limit ?? null,
    });
    return d.audit;
  }

  async platformInfo(): Promise<{ version: string; baseUrl: string; instanceId: string }> {
    const d = await this.query<{ platform: { version: string; baseUrl: string; instanceId: string } }>('{ platform { version baseUrl instanceId } }');
    return d.platform;
  }

  /** The nodes that form the service (one on the embedded database). */
  async platformNodes(): Promise<{ instanceId: string; nodes: PlatformNode[] }> {
    const d = await this.query<{ platform: { instanceId: string; nodes: PlatformNode[] } }>(
      '{ platform { instanceId nodes { id url startedAt heartbeatAt state } } }',
    );
    return d.platform;
  }
}

/** What a server that does not answer GraphQL as a platform does at `baseUrl` means: STRATO_API_URL is not a platform's base URL. */
function notAPlatform(baseUrl: string, status: number, body: unknown): string {
  const what = describeAnswer(body);
  const pathPart = new URL(baseUrl).pathname.replace(/\/+$/, '');
  return (
    `${baseUrl} does not answer as a Strato platform (POST /graphql answered HTTP ${status} with ${what}): STRATO_API_URL must be a ` +
    `platform's base URL, such as http://127.0.0.1:${DEFAULT_PORT}${pathPart ? ` (without ${pathPart})` : ''}`
  );
}
