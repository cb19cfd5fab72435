// Network volumes on this platform: a folder per app, datacenter and name under the data dir, created when an
// endpoint that mounts it is saved, kept across deploys and undeploys, removed only by an explicit delete. Every
// worker of every endpoint that mounts it sees the same folder. The size is a quota: usage is measured off the
// request path (at most every 30 s per volume) and reported in the endpoint's health when it is exceeded. What the
// platform records of a volume lies beside its folder (`<name>.volume.json`; names hold no dot, so no folder is named
// so): the folder is the user's alone, and code that empties it (cache clean-ups) cannot lose the volume.
import fs from 'node:fs';
import path from 'node:path';
import type { VolumeSpec } from '../../catalog/parameterRules';
import { networkVolume } from '../../catalog';
import type { Volume } from '../../protocol/controlPlane';
import type { DeployedEndpoint } from './service';
import { badRequest, conflict, notFound } from '../errors';

/** Where the platform records a volume: beside its folder. */
const metaOf = (dir: string) => `${dir}.volume.json`;
/** Where earlier releases recorded it: inside the folder, where the user's code saw it (moved out when read). */
const LEGACY_META = '.strato-volume.json';
const USAGE_TTL_MS = 30_000;
const GB = 1024 ** 3;

export interface VolumeRecord {
  appId: string;
  name: string;
  datacenter: string;
  sizeGb: number;
  createdAt: number;
  path: string;
}

/** The variable a worker finds one volume's path in: STRATO_VOLUME_PATH_<NAME>, upper case, '-' as '_'. */
export const volumeEnvName = (name: string) => `STRATO_VOLUME_PATH_${name.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}`;

/** Where volumes appear inside a container: the first at the documented path, others beside it by name. */
export const containerVolumePath = (index: number, name: string) => (index === 0 ? networkVolume.mountPath : `${networkVolume.mountPath}-${name}`);

/** The worker variables for an endpoint's volumes, given where each one is (a host folder, or a container path). */
export function volumeEnv(volumes: ReadonlyArray<{ name: string }>, where: (index: number, name: string) => string): Record<string, string> {
  const env: Record<string, string> = {};
  volumes.forEach((v, i) => {
    const p = where(i, v.name);
    if (i === 0) env.STRATO_VOLUME_PATH = p;
    env[volumeEnvName(v.name)] = p;
  });
  return env;
}

export class Volumes {
  private usage = new Map<string, { bytes: number; at: number; measuring: Promise<unknown> | null }>();

  constructor(private readonly root: string) {}

  pathOf(appId: string, datacenter: string, name: string): string {
    return path.join(this.root, safe(appId), safe(datacenter), safe(name));
  }

  /** Creates the volume if it is new (idempotent by name); a later deploy with another size updates the quota. */
  ensure(appId: string, v: VolumeSpec, now: number): VolumeRecord {
    const dir = this.pathOf(appId, v.datacenter, v.name);
    const existing = this.read(dir);
    fs.mkdirSync(dir, { recursive: true });
    const rec: VolumeRecord = { appId, name: v.name, datacenter: v.datacenter, sizeGb: v.size, createdAt: existing?.createdAt ?? now, path: dir };
    if (!existing || existing.sizeGb !== v.size) {
      fs.writeFileSync(metaOf(dir), JSON.stringify({ appId, name: v.name, datacenter: v.datacenter, sizeGb: v.size, createdAt: rec.createdAt }));
    }
    return rec;
  }

  /** Every volume, or an app's. */
  list(appId?: string): VolumeRecord[] {
    const out: VolumeRecord[] = [];
    for (const app of appId ? [safe(appId)] : dirs(this.root))
      for (const dc of dirs(path.join(this.root, app)))
        for (const name of dirs(path.join(this.root, app, dc))) {
          const rec = this.read(path.join(this.root, app, dc, name));
          if (rec) out.push(rec);
        }
    return out.sort((a, b) => a.name.localeCompare(b.name) || a.datacenter.localeCompare(b.datacenter));
  }

  /** The app's one volume `name` (in `datacenter`) that no endpoint mounts; else the error that says why it cannot go. */
  deletable(appId: string, appName: string, name: string, datacenter: string | undefined, endpoints: readonly DeployedEndpoint[]): VolumeRecord {
    const found = this.list(appId).filter((r) => r.name === name && (!datacenter || r.datacenter === datacenter));
    if (found.length === 0) throw notFound(`app ${appName} has no volume named "${name}"${datacenter ? ` in ${datacenter}` : ''}`);
    if (found.length > 1) throw badRequest(`volume "${name}" exists in ${found.map((r) => r.datacenter).join(' and ')}: say which with its datacenter`);
    const users = mountersOf(found[0], endpoints);
    if (users.length)
      throw conflict(`volume "${name}" is mounted by ${users.map((e) => e.name).join(', ')}: undeploy those endpoints (or remove volume= from them) first`);
    return found[0];
  }

  delete(rec: VolumeRecord): void {
    fs.rmSync(rec.path, { recursive: true, force: true });
    fs.rmSync(metaOf(rec.path), { force: true });
    this.usage.delete(rec.path);
  }

  /** Bytes in use at the last measurement; starts a new measurement in the background when it is stale. */
  usedBytes(rec: VolumeRecord): number {
    this.refresh(rec);
    return this.usage.get(rec.path)!.bytes;
  }

  /** A measurement of the volume when the last one is stale (one at a time), and its end; null when it is fresh. */
  private refresh(rec: VolumeRecord): Promise<unknown> | null {
    const u = this.usage.get(rec.path) ?? { bytes: 0, at: 0, measuring: null };
    this.usage.set(rec.path, u);
    if (!u.measuring && Date.now() - u.at > USAGE_TTL_MS)
      u.measuring = measure(rec.path)
        .then((bytes) => Object.assign(u, { bytes, at: Date.now() }))
        .catch(() => undefined)
        .finally(() => (u.measuring = null));
    return u.measuring;
  }

  /** Measures now (a listing). */
  async measure(rec: VolumeRecord): Promise<number> {
    const bytes = await measure(rec.path);
    this.usage.set(rec.path, { bytes, at: Date.now(), measuring: null });
    return bytes;
  }

  /** The health note of a volume over its quota, else null. */
  overQuota(rec: VolumeRecord): string | null {
    const used = this.usedBytes(rec);
    if (used <= rec.sizeGb * GB) return null;
    return `volume "${rec.name}" (${rec.datacenter}) holds ${(used / GB).toFixed(1)} GB, over its ${rec.sizeGb} GB size: free space or raise size= of its NetworkVolume`;
  }

  /**
   * The app's volumes (every app's without one), with the endpoints among `endpoints` that mount each, their usage
   * measured for the listing (`volume list` showed 0 B of a volume a job had just filled: the last measurement's).
   */
  async view(appId: string | undefined, endpoints: readonly DeployedEndpoint[]): Promise<Volume[]> {
    const records = this.list(appId);
    await Promise.all(records.map((r) => this.measure(r).catch(() => undefined)));
    return records.map((r) => ({
      appId: r.appId,
      name: r.name,
      datacenter: r.datacenter,
      sizeGb: r.sizeGb,
      usedBytes: this.usedBytes(r),
      createdAt: r.createdAt,
      endpoints: mountersOf(r, endpoints).map((e) => e.name),
    }));
  }

  /** Health notes of an endpoint's volumes (over quota). */
  notesOf(ep: DeployedEndpoint): string[] {
    return ep.config.volumes
      .map((v) => this.overQuota({ appId: ep.appId, ...v, sizeGb: v.size, createdAt: 0, path: this.pathOf(ep.appId, v.datacenter, v.name) }))
      .filter((n): n is string => n !== null);
  }

  private read(dir: string): VolumeRecord | null {
    const legacy = path.join(dir, LEGACY_META);
    try {
      if (!fs.existsSync(metaOf(dir)) && fs.existsSync(legacy)) fs.renameSync(legacy, metaOf(dir));
      const m = JSON.parse(fs.readFileSync(metaOf(dir), 'utf8')) as Omit<VolumeRecord, 'path'>;
      return { ...m, path: dir };
    } catch {
      return null;
    }
  }
}

/** Path segments come from validated names and ids; anything else is replaced so that no segment leaves the root. */
function safe(segment: string): string {
  return segment.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, '_');
}

function dirs(p: string): string[] {
  try {
    return fs
      .readdirSync(p, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
}

/** Bytes of the files under `dir` (links not followed), yielding to the event loop between folders. */
async function measure(dir: string): Promise<number> {
  let total = 0;
  const stack = [dir];
  while (stack.length) {
    const d = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) total += (await fs.promises.lstat(p).catch(() => ({ size: 0 }))).size;
    }
  }
  return total;
}

/** The endpoints that mount a volume, by name. */
export function mountersOf(r: VolumeRecord, endpoints: readonly DeployedEndpoint[]): DeployedEndpoint[] {
  return endpoints
    .filter((e) => e.appId === r.appId && e.config.volumes.some((v) => v.name === r.name && v.datacenter === r.datacenter))
    .sort((a, b) => a.name.localeCompare(b.name));
}
