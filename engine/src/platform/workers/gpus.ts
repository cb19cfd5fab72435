// GPUs of this machine, for GPU endpoints on the embedded platform (decisions.md): their workers run here
// whether or not there is a GPU; with GPUs, CUDA_VISIBLE_DEVICES gives each worker its own share (round
// robin); without, the endpoint's health and log say that the requested hardware is absent.
import { spawnSync } from 'node:child_process';

export interface GpuInventory {
  count: number;
  names: string[];
  /** The highest CUDA version the driver supports ("12.4"), when there are GPUs and nvidia-smi says it. */
  cudaVersion?: string;
}

let cached: GpuInventory | null = null;

/** `nvidia-smi -L`, once per process; no driver or no GPU means none. */
export function detectGpus(): GpuInventory {
  if (cached) return cached;
  if (process.env.STRATO_GPUS !== undefined) {
    const names = process.env.STRATO_GPUS.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
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

export class GpuAllocator {
  private next = 0;
  constructor(private readonly inv: GpuInventory) {}

  /** CUDA_VISIBLE_DEVICES for a new worker wanting `count` GPUs ("" when the machine has none). */
  assign(count: number): string {
    if (this.inv.count === 0) return '';
    const n = Math.min(Math.max(1, count), this.inv.count);
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push((this.next + i) % this.inv.count);
    this.next = (this.next + n) % this.inv.count;
    return ids.join(',');
  }

  /** The note for a GPU endpoint's health when the requested hardware is absent, else null. */
  note(gpuIds: string | undefined): string | null {
    if (this.inv.count > 0) return null;
    return `the endpoint asks for a GPU (${gpuIds || 'any'}) but this machine has none: its workers run on the CPU`;
  }
}
