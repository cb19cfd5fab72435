// The control plane's records (apps, environments, builds, endpoints) held in memory and written through to
// the store, each change with its audit entry (the key that made it). Endpoint changes are announced to listeners:
// the scheduler rolls or stops workers, the job engine drops the jobs of a deleted endpoint.
import { isDeepStrictEqual } from 'node:util';
import { randomUUID } from 'node:crypto';
import { nameProblem } from '../../protocol/names';
import type { Principal } from '../auth';
import type { Clock } from '../clock';
import { badRequest, conflict, notFound } from '../errors';
import { KEPT_BUILDS } from '../options';
import { MissingBuild, type AppRow, type AuditRow, type BuildRow, type EnvironmentRow, type PlatformStore } from '../store/types';
import type { Artifacts } from './artifacts';
import { auditRow, buildDetail, envChanges, type AuditTarget } from './audit';
import { capabilityRefusal, resolveConfig, type ResolvedEndpointConfig, type EndpointOverrides } from './endpointConfig';
import { endpointId, fromRow, parseManifest, toRow } from './records';
import { RecordSync, type StoredRecords } from './recordSync';
import type { Volume } from '../../protocol/controlPlane';
import type { Volumes } from './volumes';

/** What this platform can offer endpoints, beyond CPUs and GPUs. */
export interface PlatformCapabilities {
  /** The datacenters this platform stands in for; absent means all of them (the embedded platform's default). */
  datacenters?: readonly string[];
  /** True when workers run where a Docker engine can run an endpoint's own image (`image=`). */
  runsImages: boolean;
  volumes: Volumes;
}

export interface DeployedEndpoint {
  id: string;
  name: string;
  appId: string;
  environmentId: string;
  buildId: string;
  config: ResolvedEndpointConfig;
  /** Changes whenever the endpoint is saved: workers of an older revision are replaced. */
  revision: number;
  createdAt: number;
  updatedAt: number;
}

export type EndpointEvent = { type: 'saved' | 'deleted'; endpoint: DeployedEndpoint };

const noSuchBuild = (buildId: string) =>
  notFound(`build ${buildId} does not exist in this app (the newest ${KEPT_BUILDS} builds and those deployed are kept); upload it again`);

export interface SaveEndpointInput extends EndpointOverrides {
  environmentId: string;
  name: string;
  /** Defaults to the environment's active build. */
  buildId?: string;
}

function checkName(kind: string, name: string): void {
  const problem = nameProblem(kind, name);
  if (problem) throw badRequest(problem);
}

export class ControlPlane {
  private apps = new Map<string, AppRow>();
  private envs = new Map<string, EnvironmentRow>();
  private builds = new Map<string, BuildRow>();
  private endpoints = new Map<string, DeployedEndpoint>();
  private listeners: Array<(e: EndpointEvent) => void> = [];

  /** Keeps the records up with the store in a cluster (reload, catchUp); the control plane writes through its store. */
  readonly sync: RecordSync;
  private readonly store: PlatformStore;

  private constructor(
    store: PlatformStore,
    readonly artifacts: Artifacts,
    private readonly clock: Clock,
    readonly capabilities: PlatformCapabilities,
  ) {
    this.sync = new RecordSync(store, (records) => this.install(records));
    this.store = this.sync.store;
  }

  /** Where what the control plane does by itself is said (the platform's log). */
  log: (line: string) => void = () => undefined;

  static async load(store: PlatformStore, artifacts: Artifacts, clock: Clock, capabilities: PlatformCapabilities): Promise<ControlPlane> {
    const cp = new ControlPlane(store, artifacts, clock, capabilities);
    const [apps, envs, builds, endpoints] = await Promise.all([store.listApps(), store.listEnvironments(), store.listBuilds(), store.listEndpoints()]);
    cp.install({ apps, envs, builds, endpoints });
    return cp;
  }

  /** Replaces the records with those a reload read, announcing endpoints saved or deleted meanwhile. */
  private install(r: StoredRecords): void {
    this.apps = new Map(r.apps.map((a) => [a.id, a]));
    this.envs = new Map(r.envs.map((e) => [e.id, e]));
    const gone = [...this.builds.keys()].filter((id) => !r.builds.some((b) => b.id === id));
    this.builds = new Map(r.builds.map((b) => [b.id, b]));
    for (const id of gone) this.artifacts.removeBuild(id);
    const before = this.endpoints;
    this.endpoints = new Map(r.endpoints.map((row) => [row.id, fromRow(row)]));
    for (const [id, ep] of before) if (!this.endpoints.has(id)) for (const l of this.listeners) l({ type: 'deleted', endpoint: ep });
    for (const [id, ep] of this.endpoints) if (before.get(id)?.revision !== ep.revision) for (const l of this.listeners) l({ type: 'saved', endpoint: ep });
  }

  onEndpointChange(l: (e: EndpointEvent) => void): void {
    this.listeners.push(l);
  }

  listApps(): AppRow[] {
    return [...this.apps.values()];
  }
  app(id: string): AppRow | undefined {
    return this.apps.get(id);
  }
  appByName(name: string): AppRow | undefined {
    return this.listApps().find((a) => a.name === name);
  }
  mustApp(id: string): AppRow {
    const a = this.apps.get(id);
    if (!a) throw notFound(`app ${id} does not exist; list apps to find its id`);
    return a;
  }

  /** What an audit entry names: the record and the app it belongs to. */
  target(type: AuditTarget['type'], id: string): AuditTarget {
    const appName = (appId: string | undefined) => (appId ? (this.apps.get(appId)?.name ?? null) : null);
    if (type === 'app') return { type, id, name: appName(id), app: appName(id) };
    if (type === 'environment') return { type, id, name: this.envs.get(id)?.name ?? null, app: appName(this.envs.get(id)?.app_id) };
    if (type === 'build') return { type, id, name: null, app: appName(this.builds.get(id)?.app_id) };
    const ep = this.endpoints.get(id);
    return { type, id, name: ep ? `${this.envs.get(ep.environmentId)?.name ?? '?'}/${ep.name}` : null, app: appName(ep?.appId) };
  }

  private audit(by: Principal, operation: string, target: AuditTarget, detail?: Record<string, unknown>): AuditRow {
    return auditRow(by, operation, target, this.clock.now(), detail);
  }

  async createApp(by: Principal, name: string): Promise<AppRow> {
    checkName('app', name);
    if (this.appByName(name)) throw conflict(`an app named "${name}" already exists; look it up instead`);
    const row: AppRow = { id: `app_${randomUUID().replace(/-/g, '').slice(0, 20)}`, name, created_at: this.clock.now() };
    await this.store.insertApp(row, this.audit(by, 'createApp', { type: 'app', id: row.id, name, app: name }));
    this.apps.set(row.id, row);
    return row;
  }

  /** One transaction removes the app with everything in it; then the workers of its endpoints are stopped. */
  async deleteApp(by: Principal, id: string): Promise<void> {
    const app = this.mustApp(id);
    const envs = this.environmentsOf(id);
    const endpoints = envs.flatMap((e) => this.endpointsOf(e.id));
    const builds = this.buildsOf(id);
    const detail = { environments: envs.map((e) => e.name), endpoints: endpoints.map((e) => e.name), builds: builds.length };
    await this.store.deleteApp(id, this.audit(by, 'deleteApp', this.target('app', app.id), detail));
    for (const env of envs) this.forgetEnvironment(env.id);
    this.apps.delete(id);
    for (const b of builds) {
      this.builds.delete(b.id);
      this.artifacts.removeBuild(b.id);
    }
  }

  environmentsOf(appId: string): EnvironmentRow[] {
    return [...this.envs.values()].filter((e) => e.app_id === appId);
  }
  environment(id: string): EnvironmentRow | undefined {
    return this.envs.get(id);
  }
  mustEnvironment(id: string): EnvironmentRow {
    const e = this.envs.get(id);
    if (!e) throw notFound(`environment ${id} does not exist; list the app's environments to find its id`);
    return e;
  }

  async createEnvironment(by: Principal, appId: string, name: string): Promise<EnvironmentRow> {
    const app = this.mustApp(appId);
    checkName('environment', name);
    if (this.environmentsOf(appId).some((e) => e.name === name)) throw conflict(`the app already has an environment named "${name}"`);
    const row: EnvironmentRow = {
      id: `env_${randomUUID().replace(/-/g, '').slice(0, 20)}`,
      app_id: appId,
      name,
      active_build_id: null,
      created_at: this.clock.now(),
    };
    await this.store.insertEnvironment(row, this.audit(by, 'createEnvironment', { type: 'environment', id: row.id, name, app: app.name }));
    this.envs.set(row.id, row);
    return row;
  }

  async deleteEnvironment(by: Principal, id: string): Promise<void> {
    this.mustEnvironment(id);
    const detail = { endpoints: this.endpointsOf(id).map((e) => e.name) };
    await this.store.deleteEnvironment(id, this.audit(by, 'deleteEnvironment', this.target('environment', id), detail));
    this.forgetEnvironment(id);
  }

  /** The store has deleted the environment (and its endpoints and jobs): the same in memory, workers stopped. */
  private forgetEnvironment(id: string): void {
    for (const ep of this.endpointsOf(id)) this.forgetEndpoint(ep);
    this.envs.delete(id);
  }

  buildsOf(appId: string): BuildRow[] {
    return [...this.builds.values()].filter((b) => b.app_id === appId);
  }
  build(id: string): BuildRow | undefined {
    return this.builds.get(id);
  }

  /** Stores the uploaded artifact as a build with its manifest (given, else the one inside the artifact). */
  async finalizeBuild(by: Principal, appId: string, uploadId: string, manifestText?: string | null): Promise<BuildRow> {
    const app = this.mustApp(appId);
    // The same bytes and manifest as a build of the app: that build (artifacts are packed byte for byte the same from
    // the same files), so that a deploy of unchanged code leaves its endpoints, and their warm workers, as they are.
    if (manifestText) {
      const { sha256 } = await this.artifacts.received(uploadId, appId);
      const same = this.buildsOf(appId).find((b) => b.sha256 === sha256 && b.manifest === manifestText);
      if (same) {
        await this.artifacts.discard(uploadId);
        return same;
      }
    }
    const id = `bld_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    const got = await this.artifacts.finalize(uploadId, appId, id);
    let row: BuildRow;
    try {
      const text = manifestText ?? got.manifestText;
      if (!text) throw badRequest('the artifact has no strato_manifest.json and no manifest was given; rebuild it');
      parseManifest(text);
      row = { id, app_id: appId, created_at: this.clock.now(), size: got.size, sha256: got.sha256, manifest: text };
      const detail = buildDetail(row);
      await this.artifacts.publish(uploadId, id);
      await this.store.insertBuild(row, this.audit(by, 'finalizeBuild', { type: 'build', id, name: null, app: app.name }, detail));
    } catch (e) {
      // A build refused or not recorded leaves no files: no app lists it, so no prune would ever remove them.
      this.artifacts.removeBuild(id);
      throw e;
    }
    this.builds.set(id, row);
    await this.pruneBuilds(by, appId);
    return row;
  }

  /**
   * Deletes the app's builds beyond the newest KEPT_BUILDS that nothing deploys or runs (the store checks that again,
   * under a lock, against what other nodes did meanwhile), then their files here once no worker of this node runs one.
   * A failure is logged and the next build tries again: it never fails the change that asked.
   */
  private async pruneBuilds(by: Principal, appId: string): Promise<void> {
    const named = new Set<string>();
    for (const e of this.envs.values()) if (e.active_build_id) named.add(e.active_build_id);
    for (const ep of this.endpoints.values()) named.add(ep.buildId);
    const older = this.buildsOf(appId)
      .sort((a, b) => b.created_at - a.created_at || (a.id < b.id ? 1 : -1))
      .slice(KEPT_BUILDS)
      .filter((b) => !named.has(b.id))
      .map((b) => b.id);
    if (older.length === 0) return;
    const appName = this.apps.get(appId)?.name ?? null;
    let deleted: string[];
    try {
      deleted = await this.store.pruneBuilds(appId, older, (gone) =>
        gone.length === 0 ? null : this.audit(by, 'pruneBuilds', { type: 'app', id: appId, name: appName, app: appName }, { builds: gone, kept: KEPT_BUILDS }),
      );
    } catch (e) {
      this.log(`strato platform: old builds of app ${appName ?? appId} could not be deleted (${(e as Error).message}); the next build tries again`);
      return;
    }
    for (const id of deleted) {
      this.builds.delete(id);
      this.artifacts.removeBuild(id);
    }
  }

  /** Runs a store change that names `buildId`; a build deleted meanwhile (another node pruned it) is not found. */
  private async naming<T>(buildId: string, change: Promise<T>): Promise<T> {
    try {
      return await change;
    } catch (e) {
      if (!(e instanceof MissingBuild)) throw e;
      this.builds.delete(buildId);
      throw noSuchBuild(buildId);
    }
  }

  async deployBuild(by: Principal, environmentId: string, buildId: string): Promise<EnvironmentRow> {
    const env = this.mustEnvironment(environmentId);
    const build = this.builds.get(buildId);
    if (!build || build.app_id !== env.app_id) throw noSuchBuild(buildId);
    // What saveEndpoint would refuse of its endpoints is refused here, before the environment changes at all: a deploy
    // refused halfway left some endpoints on the new build and the others on the old.
    const refusals = this.refusalsOf(build);
    if (refusals.length) throw badRequest(refusals.length === 1 ? refusals[0] : `the build cannot run here: ${refusals.join('; ')}`);
    const detail = { build: buildId, previous: env.active_build_id };
    await this.naming(
      buildId,
      this.store.setActiveBuild(environmentId, buildId, this.audit(by, 'deployBuild', this.target('environment', environmentId), detail)),
    );
    env.active_build_id = buildId;
    await this.pruneBuilds(by, env.app_id);
    return env;
  }

  /** Why endpoints of the build cannot run on this platform (its datacenters, images), one sentence each. */
  private refusalsOf(build: BuildRow): string[] {
    const manifest = parseManifest(build.manifest);
    const refusals: string[] = [];
    for (const name of Object.keys(manifest.resources ?? {})) {
      let config: ResolvedEndpointConfig;
      try {
        config = resolveConfig(manifest, name);
      } catch (e) {
        refusals.push((e as Error).message);
        continue;
      }
      const refused = capabilityRefusal(name, config, this.capabilities.datacenters, this.capabilities.runsImages);
      if (refused) refusals.push(refused);
    }
    return refusals;
  }

  listEndpoints(): DeployedEndpoint[] {
    return [...this.endpoints.values()];
  }
  endpoint(id: string): DeployedEndpoint | undefined {
    return this.endpoints.get(id);
  }
  /** The endpoint; in a cluster, one not known here is looked for again in the store (saved through another node just now). */
  async endpointFresh(id: string): Promise<DeployedEndpoint | undefined> {
    const ep = this.endpoints.get(id);
    if (ep || !this.sync.clustered) return ep;
    await this.sync.reload();
    return this.endpoints.get(id);
  }
  endpointsOf(environmentId: string): DeployedEndpoint[] {
    return this.listEndpoints().filter((e) => e.environmentId === environmentId);
  }

  /** Creates the endpoint, or updates the one with this name in the environment (rolling its workers). */
  async saveEndpoint(by: Principal, input: SaveEndpointInput): Promise<DeployedEndpoint> {
    const env = this.mustEnvironment(input.environmentId);
    const buildId = input.buildId ?? env.active_build_id;
    if (!buildId) throw badRequest('the environment has no deployed build; deploy a build first or pass buildId');
    const build = this.builds.get(buildId);
    if (!build || build.app_id !== env.app_id) throw noSuchBuild(buildId);
    let config: ResolvedEndpointConfig;
    try {
      config = resolveConfig(parseManifest(build.manifest), input.name, input);
    } catch (e) {
      throw badRequest((e as Error).message);
    }
    const refused = capabilityRefusal(input.name, config, this.capabilities.datacenters, this.capabilities.runsImages);
    if (refused) throw badRequest(refused);
    for (const v of config.volumes) this.capabilities.volumes.ensure(env.app_id, v, this.clock.now());
    const existing = this.endpointsOf(env.id).find((e) => e.name === input.name);
    // Saved again as it is (a deploy of unchanged code): left alone, its warm workers with it.
    if (existing && existing.buildId === buildId && sameConfig(existing.config, config)) return existing;
    const now = this.clock.now();
    const ep: DeployedEndpoint = {
      id: existing?.id ?? endpointId(),
      name: input.name,
      appId: env.app_id,
      environmentId: env.id,
      buildId,
      config,
      revision: Math.max(now, (existing?.revision ?? 0) + 1),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    const detail: Record<string, unknown> = { change: existing ? 'updated' : 'created', build: buildId };
    if (existing && existing.buildId !== buildId) detail.previousBuild = existing.buildId;
    const envDiff = envChanges(existing?.config.env ?? {}, config.env);
    if (Object.keys(envDiff).length) detail.env = envDiff;
    const appName = this.apps.get(env.app_id)?.name ?? null;
    await this.naming(
      buildId,
      this.store.saveEndpoint(toRow(ep), this.audit(by, 'saveEndpoint', { type: 'endpoint', id: ep.id, name: `${env.name}/${ep.name}`, app: appName }, detail)),
    );
    this.endpoints.set(ep.id, ep);
    for (const l of this.listeners) l({ type: 'saved', endpoint: ep });
    if (existing && existing.buildId !== buildId) await this.pruneBuilds(by, env.app_id);
    return ep;
  }

  /** The app's volumes (every app's without one), with the endpoints that mount each. */
  volumes(appId?: string): Promise<Volume[]> {
    return this.capabilities.volumes.view(appId, this.listEndpoints());
  }

  /** Deletes a volume and its files; refused while an endpoint mounts it. */
  async deleteVolume(by: Principal, appId: string, name: string, datacenter?: string): Promise<void> {
    const app = this.mustApp(appId);
    const volume = this.capabilities.volumes.deletable(appId, app.name, name, datacenter, this.listEndpoints());
    this.capabilities.volumes.delete(volume);
    const target: AuditTarget = { type: 'volume', id: `${volume.datacenter}/${name}`, name, app: app.name };
    await this.store.insertAudit(this.audit(by, 'deleteVolume', target, { datacenter: volume.datacenter, sizeGb: volume.sizeGb }));
  }

  /** Health notes of an endpoint's volumes (over quota). */
  volumeNotes(ep: DeployedEndpoint): string[] {
    return this.capabilities.volumes.notesOf(ep);
  }

  async deleteEndpoint(by: Principal, id: string): Promise<void> {
    const ep = this.endpoints.get(id);
    if (!ep) throw notFound(`endpoint ${id} does not exist`);
    await this.store.deleteEndpoint(id, this.audit(by, 'deleteEndpoint', this.target('endpoint', id)));
    this.forgetEndpoint(ep);
  }

  private forgetEndpoint(ep: DeployedEndpoint): void {
    this.endpoints.delete(ep.id);
    for (const l of this.listeners) l({ type: 'deleted', endpoint: ep });
  }
}

/** The same configuration, whatever the order of its keys and the keys left undefined (a stored one is read back). */
function sameConfig(a: ResolvedEndpointConfig, b: ResolvedEndpointConfig): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
}
