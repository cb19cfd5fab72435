// GPUs of this machine, for GPU endpoints on the embedded platform (decisions.md): their workers run here
// whether or not there is a GPU; with GPUs, CUDA_VISIBLE_DEVICES gives each worker GPUs of its own, held
// exclusively; without, the endpoint's health and log say that the requested hardware is absent.
import { spawnSync } from 'node:child_process';
import { gpuModelNote, gpuServes } from '../../catalog';

export interface GpuInventory {
  count: number;
  names: string[];
  /** The highest CUDA version the driver supports ("12.4"), when there are GPUs and nvidia-smi says it. */
  cudaVersion?: string;
}

/** Indexes of the GPUs of `inv` a worker of the endpoint may hold: those of its kinds, or all where none is. */
export function usableGpus(inv: GpuInventory, gpuIds: string | undefined): number[] {
  const all = [...Array(inv.count).keys()];
  const ofKind = all.filter((i) => gpuServes(gpuIds, inv.names[i] ?? ''));
  return ofKind.length > 0 ? ofKind : all;
}

/** Why no worker of the endpoint can ever start on this machine: more GPUs per worker than it has of the kind; else null. */
export function tooFewGpus(inv: GpuInventory, want: GpuWant): string | null {
  const n = Math.max(1, want.count);
  const usable = usableGpus(inv, want.gpuIds);
  if (inv.count === 0 || n <= usable.length) return null;
  const kind = usable.length < inv.count ? ` ${want.gpuIds}` : '';
  return `the endpoint asks for ${n} GPUs per worker (gpu_count) and this machine has ${usable.length}${kind}: its workers cannot start here`;
}

let cached: GpuInventory | null = null;

/** GPU names given in place of nvidia-smi's (STRATO_GPUS, `--gpus`): comma-separated, blanks dropped. */
export function gpuList(names: string): string[] {
  return names
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Notes on those names that endpoints asking for a GPU type will not count as theirs (catalog: gpuModelNote). */
export function gpuListNotes(names: readonly string[]): string[] {
  return [...new Set(names)].map(gpuModelNote).filter((n): n is string => n !== null);
}

/** `nvidia-smi -L`, once per process; no driver or no GPU means none. */
export function detectGpus(): GpuInventory {
  if (cached) return cached;
  if (process.env.STRATO_GPUS !== undefined) {
    const names = gpuList(process.env.STRATO_GPUS);
    // STRATO_CUDA_VERSION stands in for the driver's CUDA version, as STRATO_GPUS stands in for the GPUs.
    return (cached = { count: names.length, names, cudaVersion: process.env.STRATO_CUDA_VERSION || undefined });
  }
  const r = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8', timeout: 3000 });
  const names =
    r.status === 0
      ? r.stdout
          .split('\n')
          .filter((l) => /^GPU \d+:/.test(l))
          .map((l) => l.replace(/^GPU \d+:\s*/, '').replace(/\s*\(UUID.*$/, ''))
      : [];
  return (cached = { count: names.length, names, cudaVersion: names.length ? (process.env.STRATO_CUDA_VERSION ?? driverCudaVersion()) : undefined });
}

/** "CUDA Version: 12.4" from nvidia-smi's header: the newest CUDA the installed driver supports. */
function driverCudaVersion(): string | undefined {
  const r = spawnSync('nvidia-smi', [], { encoding: 'utf8', timeout: 5000 });
  return r.status === 0 ? (/CUDA Version:\s*(\d+\.\d+)/.exec(r.stdout)?.[1] ?? undefined) : undefined;
}

/** Forgets the detected GPUs (tests that change STRATO_GPUS or STRATO_CUDA_VERSION). */
export function resetGpuDetection(): void {
  cached = null;
}

/**
 * What a worker of a GPU endpoint asks for: `count` GPUs (gpu_count) of the kinds `gpuIds` names (the manifest's
 * "HOPPER_141,NVIDIA L4", or "any").
 */
export interface GpuWant {
  count: number;
  gpuIds?: string;
}

/**
 * GPUs as exclusive resources: a worker of a GPU endpoint holds its `gpu_count` GPUs alone until it exits. When
 * not enough are free, no worker starts (the scheduler waits, and the health says why); scaling never
 * oversubscribes. A worker takes GPUs of a kind its endpoint asks for; where the machine has none of that kind, any
 * of its GPUs (decisions.md: the workers run here on what there is, and the note says so). On a machine without GPUs,
 * GPU endpoints run on the CPU and nothing is held.
 */
export class GpuAllocator {
  /** GPU index -> the worker that holds it. */
  private holders = new Map<number, string>();
  /** Worker id -> its endpoint, for the note that says who holds the GPUs. */
  private owners = new Map<string, string>();

  constructor(private readonly inv: GpuInventory) {}

  get count(): number {
    return this.inv.count;
  }

  free(): number {
    return this.inv.count - this.holders.size;
  }

  /** Whether this machine has a GPU of a kind the endpoint asks for. */
  hasKind(gpuIds: string | undefined): boolean {
    return this.inv.names.some((name) => gpuServes(gpuIds, name));
  }

  /** Indexes of the GPUs a worker of the endpoint may hold: those of its kinds, or all where none is. */
  usable(gpuIds: string | undefined): number[] {
    return usableGpus(this.inv, gpuIds);
  }

  /** Whether a worker wanting these GPUs can start now (always, on a machine without GPUs). */
  canAssign(want: GpuWant): boolean {
    return this.inv.count === 0 || this.freeOf(want).length >= Math.max(1, want.count);
  }

  /**
   * CUDA_VISIBLE_DEVICES for a new worker wanting these GPUs, which it then holds until release(); "" on a machine
   * without GPUs; null when not enough are free.
   */
  assign(workerId: string, endpointId: string, want: GpuWant): string | null {
    if (this.inv.count === 0) return '';
    const free = this.freeOf(want);
    const n = Math.max(1, want.count);
    if (free.length < n) return null;
    const ids = free.slice(0, n);
    for (const i of ids) this.holders.set(i, workerId);
    this.owners.set(workerId, endpointId);
    return ids.join(',');
  }

  /** The worker exited: its GPUs are free again. */
  release(workerId: string): void {
    for (const [i, w] of this.holders) if (w === workerId) this.holders.delete(i);
    this.owners.delete(workerId);
  }

  /** Why a worker of this endpoint cannot start now for want of GPUs, else null. */
  waiting(endpointId: string, want: GpuWant): string | null {
    if (this.canAssign(want)) return null;
    const tooFew = tooFewGpus(this.inv, want);
    if (tooFew) return tooFew;
    const usable = this.usable(want.gpuIds);
    const kind = usable.length < this.inv.count ? ` ${want.gpuIds}` : '';
    const holders = new Set(usable.map((i) => this.owners.get(this.holders.get(i) ?? '')).filter((e) => e !== undefined));
    const own = holders.has(endpointId);
    return (
      `waiting for a free GPU: all ${usable.length}${kind} GPU${usable.length === 1 ? ' is' : 's are'} held by ` +
      `${holders.size === 1 && own ? "this endpoint's other workers" : `workers of ${holders.size} endpoint${holders.size === 1 ? '' : 's'}`}; ` +
      'jobs wait until one is free (a GPU belongs to one worker at a time)'
    );
  }

  /** The note for a GPU endpoint's health when the requested hardware is absent, else null. */
  note(gpuIds: string | undefined): string | null {
    if (this.inv.count === 0) return `the endpoint asks for a GPU (${gpuIds || 'any'}) but this machine has none: its workers run on the CPU`;
    if (this.hasKind(gpuIds)) return null;
    return `the endpoint asks for ${gpuIds} GPUs and this machine has ${describeGpus(this.inv.names)}: its workers run on those`;
  }

  private freeOf(want: GpuWant): number[] {
    return this.usable(want.gpuIds).filter((i) => !this.holders.has(i));
  }
}

/** "2 x NVIDIA H200, 1 x NVIDIA L4" */
export function describeGpus(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, c]) => `${c} x ${n}`).join(', ');
}
