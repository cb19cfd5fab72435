// The machines workers run on: the platform's own and the worker hosts that joined with `strato platform agent`
// (remoteHost.ts). A new worker is placed by datacenter (the endpoint's `datacenters`; volumes live on the
// platform's machine), hardware (free GPUs of the kind it asks for, min_cuda_version) and load (fewest workers).
// GPUs are exclusive per host.
import os from 'node:os';
import type { DeployedEndpoint } from '../controlPlane/service';
import type { HostView } from '../../protocol/agents';
import type { WorkerLauncher } from './launcher';
import { describeGpus, tooFewGpus, type GpuAllocator, type GpuInventory, type GpuWant } from './gpus';
import type { HostChecks } from './hostChecks';

export interface WorkerHost {
  readonly id: string;
  readonly name: string;
  /** The datacenters it stands in for; null: all of them. */
  readonly datacenters: readonly string[] | null;
  readonly inventory: GpuInventory;
  readonly gpus: GpuAllocator;
  readonly checks: HostChecks;
  readonly cpus: number;
  /** Starts workers there; null on the platform's machine (the supervisor's own launcher and templates). */
  readonly launcher: WorkerLauncher | null;
  /** Workers placed there that have not exited. */
  workers: number;
  /** Last request from it; null for the platform's machine. */
  readonly lastSeen: number | null;
}

export function localHost(datacenters: readonly string[] | undefined, inventory: GpuInventory, gpus: GpuAllocator, checks: HostChecks): WorkerHost {
  return {
    id: 'local',
    name: os.hostname(),
    datacenters: datacenters ?? null,
    inventory,
    gpus,
    checks,
    cpus: os.cpus().length,
    launcher: null,
    workers: 0,
    lastSeen: null,
  };
}

/** The hosts whose GPUs a GPU endpoint's workers go to, what each worker wants, and the kind named in messages. */
interface GpuCandidates {
  hosts: WorkerHost[];
  want: GpuWant;
  kind: string;
}

/** A host with GPUs as the other nodes of a cluster know it (gpuOffers.ts). */
export interface GpuOffer {
  /** The node's own machine (else a worker host that joined it). */
  local: boolean;
  datacenters: readonly string[] | null;
}

/**
 * May the endpoint's workers ever run on the host: in one of its datacenters; with volumes or its own image, the
 * platform's machine only (volumes live there; agents run local processes); load-balanced ones only there too (the
 * router reaches workers on loopback).
 */
export function mayRunOn(h: GpuOffer, ep: DeployedEndpoint): boolean {
  const inDatacenter = !ep.config.datacenters || !h.datacenters || ep.config.datacenters.some((d) => h.datacenters!.includes(d));
  const here = ep.config.volumes.length > 0 || ep.config.kind === 'LOAD_BALANCED' || !!ep.config.image;
  return inDatacenter && (h.local || !here);
}

export class HostPool {
  private remote = new Map<string, WorkerHost>();

  constructor(readonly local: WorkerHost) {}

  all(): WorkerHost[] {
    return [this.local, ...this.remote.values()];
  }

  get(id: string): WorkerHost | undefined {
    return id === this.local.id ? this.local : this.remote.get(id);
  }

  add(h: WorkerHost): void {
    this.remote.set(h.id, h);
  }

  remove(id: string): void {
    this.remote.delete(id);
  }

  /** The datacenters the platform serves with its hosts (for deploy-time checks); undefined: all of them. */
  served(): string[] | undefined {
    const hosts = this.all();
    if (hosts.some((h) => h.datacenters === null)) return undefined;
    return [...new Set(hosts.flatMap((h) => h.datacenters!))];
  }

  /**
   * In a cluster: why this node leaves a GPU endpoint's jobs to another node whose hosts have GPUs for it (none of its
   * own have), or null (gpuOffers.ts).
   */
  elsewhere?: (ep: DeployedEndpoint) => string | null;

  /** Hosts that may ever run the endpoint's workers (mayRunOn). */
  private eligible(ep: DeployedEndpoint): WorkerHost[] {
    return this.all().filter((h) => mayRunOn({ local: h === this.local, datacenters: h.datacenters }, ep));
  }

  /** The hosts with GPUs, as the other nodes of a cluster are told. */
  gpuOffers(): GpuOffer[] {
    return this.all()
      .filter((h) => h.gpus.count > 0)
      .map((h) => ({ local: h === this.local, datacenters: h.datacenters }));
  }

  /** In a cluster: this node leaves the GPU endpoint's workers to another node's GPUs, none of its hosts having one. */
  defers(ep: DeployedEndpoint): boolean {
    return !ep.config.cpu && !this.hasGpuFor(ep) && !!this.elsewhere?.(ep);
  }

  /** Whether a host that may run the endpoint's workers has GPUs. */
  hasGpuFor(ep: DeployedEndpoint): boolean {
    return this.eligible(ep).some((h) => h.gpus.count > 0);
  }

  /**
   * Why no worker of the endpoint can start on these hosts as long as they stay as they are: none serves its
   * datacenter, every GPU driver is below its min_cuda_version, none has its gpu_count GPUs of the kind. Null when its
   * workers start here, wait for a free GPU, or run on another node's GPUs.
   */
  unplaceable(ep: DeployedEndpoint): string | null {
    const c = this.candidates(ep);
    return 'never' in c ? c.never : null;
  }

  /**
   * The hosts that can run the endpoint's workers (`fit`: those serving its datacenter whose checks pass) and, for a
   * GPU endpoint, those whose GPUs it goes to; or why none ever can (`never`, what `unplaceable` says).
   */
  private candidates(ep: DeployedEndpoint): { never: string } | { fit: WorkerHost[]; gpus: GpuCandidates | null } {
    const hosts = this.eligible(ep);
    if (hosts.length === 0) {
      const offered = this.all().map((h) => `${h.name} (${h.datacenters?.join(', ') ?? 'every datacenter'})`);
      return {
        never:
          `no worker host serves ${ep.config.datacenters?.join(', ') ?? 'this endpoint'}${ep.config.volumes.length ? " where its volumes are (on the platform's machine)" : ''}: ` +
          `the hosts are ${offered.join(', ')}; start one there with strato platform agent --join <url> --datacenter <id>, or change its datacenter=`,
      };
    }
    const reasons = hosts.map((h) => h.checks.blocked(ep.config));
    if (reasons.every((r) => r !== null))
      return { never: hosts.length === 1 ? reasons[0]! : `no worker host can run it: ${reasons.map((r, i) => `${hosts[i].name}: ${r}`).join('; ')}` };
    const fit = hosts.filter((_, i) => reasons[i] === null);
    const gpus = this.gpuCandidates(ep, fit);
    if (!gpus || gpus.hosts.some((h) => h.gpus.usable(gpus.want.gpuIds).length >= gpus.want.count)) return { fit, gpus };
    const one = gpus.hosts.length === 1 ? tooFewGpus(gpus.hosts[0].inventory, gpus.want) : null;
    return {
      never:
        one ?? `the endpoint asks for ${gpus.want.count}${gpus.kind} GPUs per worker (gpu_count) and no worker host has that many: its workers cannot start`,
    };
  }

  /**
   * The hosts a GPU endpoint's workers go to among `fit`: those with GPUs of the kind it asks for where one has it,
   * else any with GPUs; null for a CPU endpoint, or where none of `fit` has a GPU (they run on the CPU, decisions.md).
   */
  private gpuCandidates(ep: DeployedEndpoint, fit: WorkerHost[]): GpuCandidates | null {
    if (ep.config.cpu) return null;
    const want = { count: Math.max(1, ep.config.gpuCount), gpuIds: ep.config.gpuIds };
    const withGpus = fit.filter((h) => h.gpus.count > 0);
    if (withGpus.length === 0) return null;
    const ofKind = withGpus.filter((h) => h.gpus.hasKind(want.gpuIds));
    const kind = ofKind.length > 0 && want.gpuIds && want.gpuIds !== 'any' ? ` ${want.gpuIds}` : '';
    return { hosts: ofKind.length > 0 ? ofKind : withGpus, want, kind };
  }

  /** The host for a new worker of the endpoint, or why none can take one now (placement rules above). */
  place(ep: DeployedEndpoint): WorkerHost | string {
    const c = this.candidates(ep);
    if ('never' in c) return c.never;
    let fit = c.fit;
    const gpus = c.gpus;
    if (gpus) {
      const free = gpus.hosts.filter((h) => h.gpus.canAssign(gpus.want));
      if (free.length === 0) {
        if (gpus.hosts.length === 1) return gpus.hosts[0].gpus.waiting(ep.id, gpus.want) ?? 'waiting for a free GPU';
        const big = gpus.hosts.filter((h) => h.gpus.usable(gpus.want.gpuIds).length >= gpus.want.count);
        const held = big.reduce((s, h) => s + h.gpus.usable(gpus.want.gpuIds).length, 0);
        return `waiting for a free GPU: all ${held}${gpus.kind} GPUs of ${big.length} worker hosts are held; jobs wait until one is free (a GPU belongs to one worker at a time)`;
      }
      fit = free;
    } else if (!ep.config.cpu) {
      const there = this.elsewhere?.(ep);
      if (there) return there;
    }
    return fit.reduce((best, h) => (h.workers < best.workers ? h : best));
  }

  /**
   * The health note of a GPU endpoint that no host it may use has a GPU for (it runs on the CPU), or none of the kind
   * it asks for (it runs on the GPUs there are), else null.
   */
  gpuNote(ep: DeployedEndpoint): string | null {
    if (ep.config.cpu) return null;
    const withGpus = this.eligible(ep).filter((h) => h.gpus.count > 0);
    if (withGpus.length === 0) return this.elsewhere?.(ep) ?? (this.local.gpus.count === 0 ? this.local.gpus.note(ep.config.gpuIds) : null);
    if (withGpus.some((h) => h.gpus.hasKind(ep.config.gpuIds))) return null;
    if (withGpus.length === 1) return withGpus[0].gpus.note(ep.config.gpuIds);
    const names = describeGpus(withGpus.flatMap((h) => h.inventory.names));
    return `the endpoint asks for ${ep.config.gpuIds} GPUs and no worker host has one (they have ${names}): its workers run on those`;
  }

  view(): HostView[] {
    return this.all().map((h) => ({
      name: h.name,
      datacenters: h.datacenters ? [...h.datacenters] : null,
      local: h === this.local,
      gpus: { total: h.gpus.count, free: h.gpus.free(), names: [...h.inventory.names] },
      cudaVersion: h.inventory.cudaVersion ?? null,
      cpus: h.cpus,
      workers: h.workers,
      lastSeen: h.lastSeen,
    }));
  }
}
