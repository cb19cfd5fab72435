// The machines workers run on: the platform's own and the worker hosts that joined with `strato platform agent`
// (remoteHost.ts). A new worker is placed by datacenter (the endpoint's `datacenters`; volumes live on the
// platform's machine), hardware (free GPUs of the kind it asks for, min_cuda_version) and load (fewest workers).
// GPUs are exclusive per host.
import os from 'node:os';
import type { DeployedEndpoint } from '../controlPlane/service';
import type { HostView } from '../../protocol/agents';
import type { WorkerLauncher } from './launcher';
import { describeGpus, type GpuAllocator, type GpuInventory } from './gpus';
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

  /** Whether a host that may run the endpoint's workers has GPUs. */
  hasGpuFor(ep: DeployedEndpoint): boolean {
    return this.eligible(ep).some((h) => h.gpus.count > 0);
  }

  /** Why no host can run the endpoint's workers at all (a GPU driver below min_cuda_version), or null. */
  blocked(ep: DeployedEndpoint): string | null {
    const hosts = this.eligible(ep);
    const reasons = hosts.map((h) => h.checks.blocked(ep.config));
    if (hosts.length === 0 || reasons.some((r) => r === null)) return null;
    return hosts.length === 1 ? reasons[0] : `no worker host can run it: ${reasons.map((r, i) => `${hosts[i].name}: ${r}`).join('; ')}`;
  }

  /** The host for a new worker of the endpoint, or why none can take one now (placement rules above). */
  place(ep: DeployedEndpoint): WorkerHost | string {
    const hosts = this.eligible(ep);
    if (hosts.length === 0) {
      const offered = this.all().map((h) => `${h.name} (${h.datacenters?.join(', ') ?? 'every datacenter'})`);
      return (
        `no worker host serves ${ep.config.datacenters?.join(', ') ?? 'this endpoint'}${ep.config.volumes.length ? " where its volumes are (on the platform's machine)" : ''}: ` +
        `the hosts are ${offered.join(', ')}; start one there with strato platform agent --join <url> --datacenter <id>, or change its datacenter=`
      );
    }
    let fit = hosts.filter((h) => h.checks.blocked(ep.config) === null);
    if (!ep.config.cpu) {
      // GPU endpoints go to hosts with GPUs, of the kind they ask for where a host has it (else any GPU); where no
      // eligible host has any, they run on the CPU (decisions.md).
      const want = { count: Math.max(1, ep.config.gpuCount), gpuIds: ep.config.gpuIds };
      const withGpus = fit.filter((h) => h.gpus.count > 0);
      if (withGpus.length > 0) {
        const ofKind = withGpus.filter((h) => h.gpus.hasKind(want.gpuIds));
        const candidates = ofKind.length > 0 ? ofKind : withGpus;
        const big = candidates.filter((h) => h.gpus.usable(want.gpuIds).length >= want.count);
        const free = big.filter((h) => h.gpus.canAssign(want));
        if (free.length === 0) {
          if (candidates.length === 1) return candidates[0].gpus.waiting(ep.id, want) ?? 'waiting for a free GPU';
          const kind = ofKind.length > 0 && want.gpuIds && want.gpuIds !== 'any' ? ` ${want.gpuIds}` : '';
          const held = big.reduce((s, h) => s + h.gpus.usable(want.gpuIds).length, 0);
          return big.length === 0
            ? `the endpoint asks for ${want.count}${kind} GPUs per worker (gpu_count) and no worker host has that many: its workers cannot start`
            : `waiting for a free GPU: all ${held}${kind} GPUs of ${big.length} worker hosts are held; jobs wait until one is free (a GPU belongs to one worker at a time)`;
        }
        fit = free;
      } else {
        const there = this.elsewhere?.(ep);
        if (there) return there;
      }
    }
    if (fit.length === 0) return hosts.map((h) => h.checks.blocked(ep.config)).find(Boolean) ?? 'no worker host can run it';
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
