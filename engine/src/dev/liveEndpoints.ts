// The dev server's `live-<name>` endpoints on the platform: provisioned on first call (or all at start),
// rolled to each new build after a saved change, and removed on exit. They live in the app's `live`
// environment, which deploy, env and undeploy leave alone unless it is named.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ControlPlaneClient, type Endpoint, type Environment } from '../api/controlPlane';
import type { ApiTarget } from '../api/http';
import type { BuildResult, Manifest } from '../build';
import { sourceFingerprint, STRATO_DIR } from '../build';
import { endpointCalls } from '../deploy/calls';
import { DEV_ENVIRONMENT, LIVE_PREFIX } from '../deploy/context';
import { endpointInput } from '../deploy/endpointInput';
import type { ManifestResource } from '../protocol/manifest';

export { LIVE_PREFIX };
export const LIVE_ENVIRONMENT = DEV_ENVIRONMENT;

export function liveName(name: string): string {
  return `${LIVE_PREFIX}${name}`.slice(0, 63);
}

/**
 * The manifest the platform gets: every resource renamed `live-<name>` (the artifact's own is unchanged), with the
 * dev server's own worker variables (`--debug`: where workers announce their debugger) added to each endpoint's env.
 */
export function liveManifest(m: Manifest, workerEnv: Record<string, string> = {}): Manifest {
  const resources: Record<string, ManifestResource> = {};
  const routes: Manifest['routes'] = {};
  for (const [name, r] of Object.entries(m.resources))
    resources[liveName(name)] = { ...r, env: { ...r.env, ...workerEnv, STRATO_ENDPOINT_PREFIX: LIVE_PREFIX } };
  for (const [name, table] of Object.entries(m.routes)) routes[liveName(name)] = table;
  return { ...m, resources, routes };
}

/**
 * What an endpoint runs: its configuration, its own worker file and every packaged file that declares no
 * endpoint (shared helpers, requirements). Another worker file's change leaves it alone: endpoints reach each
 * other over the network, not by importing each other's modules at load time.
 */
function endpointHash(build: BuildResult, name: string): string {
  const r = build.manifest.resources[name];
  const workerFiles = new Set(build.model.endpoints.map((e) => e.file));
  const inputs = build.files.filter((f) => f === r.source_file || !workerFiles.has(f));
  const code = sourceFingerprint(build.model.root, inputs);
  return createHash('sha256').update(JSON.stringify({ r, code })).digest('hex').slice(0, 16);
}

interface CacheFile {
  baseUrl: string;
  app: string;
  endpoints: Record<string, { id: string; hash: string }>;
}

export class LiveEndpoints {
  private readonly client: ControlPlaneClient;
  private env?: Promise<Environment>;
  private current?: { build: BuildResult; buildId: Promise<string> };
  private readonly live = new Map<string, Promise<Endpoint>>();
  private readonly hashes = new Map<string, string>();
  private readonly resolved = new Map<string, { id: string; hash: string }>();
  private readonly cacheFile: string;
  /** Called when the set of provisioned endpoints changed (the dev server's state file follows it). */
  onChange?: () => void;
  /** An earlier session's leftovers were taken over (adoptLeftovers): until then removeAll removes them too. */
  private adopted = false;
  /** removeAll has begun: nothing is provisioned any more (a call in flight meets a stopping server). */
  private closing = false;

  constructor(
    root: string,
    private readonly target: ApiTarget,
    private readonly appName: string,
    private readonly log: (line: string) => void = () => {},
    private readonly workerEnv: Record<string, string> = {},
  ) {
    this.client = new ControlPlaneClient(target);
    this.cacheFile = path.join(root, STRATO_DIR, 'dev-cache.json');
  }

  /** Names (not prefixed) of the endpoints provisioned so far. */
  provisioned(): string[] {
    return [...this.live.keys()];
  }

  /** The endpoints provisioned or reused so far, with their ids. */
  endpoints(): Array<{ name: string; liveName: string; id: string }> {
    return [...this.resolved].map(([name, r]) => ({ name, liveName: liveName(name), id: r.id })).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Makes `build` the code every live endpoint runs: new calls use it; provisioned endpoints whose own code or
   * configuration changed roll to it. The others keep their warm workers (a model stays loaded while another file is
   * edited).
   */
  async setBuild(build: BuildResult): Promise<void> {
    const previous = this.current;
    const uploaded = this.upload(build);
    this.current = { build, buildId: uploaded };
    uploaded.catch(() => {}); // reported by whoever awaits it
    if (!previous) return;
    const names = [...this.live.keys()];
    await Promise.all(
      names.map(async (name) => {
        if (!build.manifest.resources[name]) {
          const gone = await this.live.get(name)!.catch(() => undefined);
          this.live.delete(name);
          this.resolved.delete(name);
          if (gone) await this.client.deleteEndpoint(gone.id).catch(() => {});
          this.onChange?.();
          return;
        }
        if (this.hashes.get(name) === this.hashOf(name)) return;
        const p = this.save(name);
        this.live.set(name, p);
        await p;
      }),
    );
  }

  /** The live endpoint for `name`, provisioned on first use. */
  ensure(name: string): Promise<Endpoint> {
    let p = this.live.get(name);
    if (!p) {
      p = this.save(name);
      this.live.set(name, p);
      p.catch(() => this.live.delete(name));
    }
    return p;
  }

  /**
   * The live endpoint for `name` once every endpoint it calls, directly or not, is provisioned too: a call
   * that reaches a peer through the control plane must find its live- endpoint there.
   */
  async ensureWithPeers(name: string): Promise<Endpoint> {
    const calls = this.current ? endpointCalls(this.current.build.model) : new Map<string, Set<string>>();
    const needed = new Set([name]);
    for (const n of needed) for (const callee of calls.get(n) ?? []) needed.add(callee);
    const [own] = await Promise.all([...needed].map((n) => this.ensure(n)));
    return own;
  }

  /**
   * After `ep` answered 404: null when it is still on the platform (the 404 was its own route's); when it was removed
   * behind this session's back (`strato undeploy --env live`), the endpoint provisioned again, with every other live
   * endpoint that went with it forgotten (the next call provisions it).
   */
  async provisionedAgain(name: string, ep: Endpoint): Promise<Endpoint | null> {
    if (this.closing || (await this.client.getEndpoint(ep.id).catch(() => ep))) return null;
    const env = await this.env?.catch(() => undefined);
    const left = new Set((env ? await this.client.listEndpoints(env.id).catch(() => []) : []).map((e) => e.id));
    if (left.size === 0) this.env = undefined; // its environment may have gone with them
    for (const [n, r] of [...this.resolved]) {
      if (left.has(r.id)) continue;
      this.live.delete(n);
      this.resolved.delete(n);
      this.hashes.delete(n);
    }
    this.persist();
    this.log(`${liveName(name)} was removed from the platform: provisioning it again`);
    return this.ensureWithPeers(name);
  }

  /**
   * Takes over the live endpoints an earlier session recorded and did not remove (it was killed, or its terminal closed
   * with it): those still declared with the same configuration are this session's (reused, and removed when it stops);
   * the others are removed now. Without it they stayed on the platform with nobody to remove them. Their names.
   */
  async adoptLeftovers(): Promise<{ reused: string[]; updated: string[]; removed: string[] }> {
    this.adopted = true;
    const cache = this.readCache();
    const out = { reused: [] as string[], updated: [] as string[], removed: [] as string[] };
    await Promise.all(
      Object.entries(cache?.endpoints ?? {}).map(async ([live, cached]) => {
        const existing = await this.client.getEndpoint(cached.id).catch(() => null);
        if (!existing || existing.name !== live) return;
        const name = Object.keys(this.current!.build.manifest.resources).find((n) => liveName(n) === live);
        if (!name) {
          if (
            await this.client.deleteEndpoint(existing.id).then(
              () => true,
              () => false,
            )
          )
            out.removed.push(live);
        } else if (cached.hash === this.hashOf(name)) {
          this.live.set(name, Promise.resolve(existing));
          this.hashes.set(name, cached.hash);
          this.resolved.set(name, { id: existing.id, hash: cached.hash });
          out.reused.push(live);
        } else if (
          await this.ensure(name).then(
            () => true,
            () => false,
          )
        )
          out.updated.push(live); // saved again: the same endpoint
      }),
    );
    this.persist();
    for (const list of Object.values(out)) list.sort();
    return out;
  }

  /** Provisions every endpoint not provisioned yet, at most `concurrency` at once. */
  async provisionAll(concurrency = 3): Promise<{ created: string[] }> {
    const names = Object.keys(this.current!.build.manifest.resources).filter((n) => !this.live.has(n));
    const created: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < names.length) {
        const name = names[next++];
        await this.ensure(name);
        created.push(name);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, names.length) }, worker));
    return { created };
  }

  /**
   * Deletes every live endpoint this session provisioned or reused, and those an earlier session left when this one
   * never built (its project had errors from start to stop): the record of them is cleared only once they are gone.
   */
  async removeAll(): Promise<string[]> {
    this.closing = true;
    const removed: string[] = [];
    await Promise.all(
      [...this.live.entries()].map(async ([name, p]) => {
        const ep = await p.catch(() => undefined);
        if (!ep) return;
        await this.client.deleteEndpoint(ep.id).catch(() => {});
        removed.push(name);
      }),
    );
    const own = removed.length;
    if (!this.adopted)
      await Promise.all(
        Object.entries(this.readCache()?.endpoints ?? {}).map(async ([live, cached]) => {
          const existing = await this.client.getEndpoint(cached.id).catch(() => null);
          if (existing?.name !== live) return;
          await this.client.deleteEndpoint(existing.id).catch(() => {});
          removed.push(live.slice(LIVE_PREFIX.length));
        }),
      );
    this.live.clear();
    this.resolved.clear();
    this.writeCache({});
    this.onChange?.();
    // An emptied `live` environment goes too, so that `env list` does not keep showing it after Ctrl+C.
    const envFound = this.env ?? (removed.length > own ? this.environment() : undefined);
    const env = envFound ? await envFound.catch(() => undefined) : undefined;
    if (env && (await this.client.listEndpoints(env.id).catch(() => [null])).length === 0) {
      await this.client.deleteEnvironment(env.id).catch(() => {});
      this.env = undefined;
    }
    return removed.sort();
  }

  private hashOf(name: string): string {
    return endpointHash(this.current!.build, name);
  }

  /** The app's `live` environment, created once (concurrent provisioning shares the one lookup). */
  private environment(): Promise<Environment> {
    this.env ??= (async () => {
      const app = (await this.client.findApp(this.appName)) ?? (await this.client.createApp(this.appName));
      return app.environments.find((e) => e.name === LIVE_ENVIRONMENT) ?? (await this.client.createEnvironment(app.id, LIVE_ENVIRONMENT));
    })();
    this.env.catch(() => (this.env = undefined));
    return this.env;
  }

  private async upload(build: BuildResult): Promise<string> {
    const env = await this.environment();
    const uploaded = await this.client.uploadBuild(env.appId, build.artifactPath, liveManifest(build.manifest, this.workerEnv));
    return uploaded.id;
  }

  private async save(name: string): Promise<Endpoint> {
    const { build, buildId } = this.current!;
    const r = build.manifest.resources[name];
    if (!r) throw new Error(`endpoint ${name} is no longer declared in the project`);
    const env = await this.environment();
    const id = await buildId;
    const ep = await this.client.saveEndpoint(
      endpointInput({
        environmentId: env.id,
        buildId: id,
        name,
        manifestName: liveName(name),
        model: build.model,
        apiKey: this.target.apiKey,
        overrides: { workersMin: 0 },
      }),
    );
    const hash = this.hashOf(name); // a fingerprint of the endpoint's files: read once
    this.hashes.set(name, hash);
    this.resolved.set(name, { id: ep.id, hash });
    this.log(`provisioned ${ep.name} (${ep.id})`);
    this.persist();
    return ep;
  }

  /** Records what is deployed, so that a session that could not remove it is followed by one that does (adoptLeftovers). */
  private persist(): void {
    const entries: CacheFile['endpoints'] = {};
    for (const [name, r] of this.resolved) entries[liveName(name)] = r;
    this.writeCache(entries);
    this.onChange?.();
  }

  private readCache(): CacheFile | undefined {
    try {
      const c = JSON.parse(readFileSync(this.cacheFile, 'utf8')) as CacheFile;
      return c.baseUrl === this.target.baseUrl && c.app === this.appName ? c : undefined;
    } catch {
      return undefined;
    }
  }

  private writeCache(endpoints: CacheFile['endpoints']): void {
    if (!existsSync(path.dirname(this.cacheFile))) mkdirSync(path.dirname(this.cacheFile), { recursive: true });
    writeFileSync(this.cacheFile, JSON.stringify({ baseUrl: this.target.baseUrl, app: this.appName, endpoints } satisfies CacheFile, null, 2));
  }
}
