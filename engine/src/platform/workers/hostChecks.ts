// What an endpoint needs of the machine its workers run on, beyond CPUs and GPUs: Debian packages
// (`system_dependencies`, checked and named, never installed on the host) and the driver's CUDA version
// (`min_cuda_version`: GPU workers do not start below it). The notes reach the deploy output and the health.
import { spawnSync } from 'node:child_process';
import { cudaAtLeast } from '../../catalog/parameterRules';
import type { ResolvedEndpointConfig } from '../controlPlane/endpointConfig';
import { tooFewGpus, type GpuInventory } from './gpus';

export class HostChecks {
  private installed = new Map<string, boolean>();

  constructor(
    private readonly gpus: GpuInventory,
    /** The package database query; absent (not a Debian-like host) means packages cannot be checked. */
    private readonly dpkgQuery = 'dpkg-query',
  ) {}

  /** The packages of the list that this host does not have installed (cached per package name). */
  missingPackages(packages: readonly string[]): string[] {
    const names = packages.map((p) => p.split('=')[0]);
    const unknown = names.filter((n) => !this.installed.has(n));
    if (unknown.length) {
      const r = spawnSync(this.dpkgQuery, ['-W', '-f=${Package}\\t${db:Status-Status}\\n', ...unknown], { encoding: 'utf8', timeout: 10_000 });
      if (r.error) return []; // no dpkg: nothing to say
      const ok = new Set(
        r.stdout
          .split('\n')
          .map((l) => l.split('\t'))
          .filter(([, status]) => status === 'installed')
          .map(([name]) => name.split(':')[0]),
      );
      for (const n of unknown) this.installed.set(n, ok.has(n.split(':')[0]));
    }
    return names.filter((n) => !this.installed.get(n));
  }

  /** Why GPU workers of this endpoint cannot start here, or null. */
  blocked(c: ResolvedEndpointConfig): string | null {
    if (c.cpu || this.gpus.count === 0 || !this.gpus.cudaVersion) return null;
    if (cudaAtLeast(this.gpus.cudaVersion, c.minCudaVersion)) return null;
    return (
      `the endpoint needs CUDA ${c.minCudaVersion} (min_cuda_version) and this machine's GPU driver supports CUDA ${this.gpus.cudaVersion}: ` +
      'its workers do not start here; update the driver or lower min_cuda_version'
    );
  }

  /** Everything the endpoint's owner should know about this host: missing packages, a driver too old. */
  notes(c: ResolvedEndpointConfig): string[] {
    const notes: string[] = [];
    const missing = c.systemDependencies.length ? this.missingPackages(c.systemDependencies) : [];
    if (missing.length)
      notes.push(
        `system_dependencies ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed on the platform's host, and nothing is installed ` +
          `there for you: install ${missing.length === 1 ? 'it' : 'them'} (apt-get install ${missing.join(' ')}), or try the endpoint with strato deploy --preview`,
      );
    const blocked = this.blocked(c);
    if (blocked) notes.push(blocked);
    const tooFew = c.cpu ? null : tooFewGpus(this.gpus, { count: c.gpuCount, gpuIds: c.gpuIds });
    if (tooFew) notes.push(tooFew);
    return notes;
  }
}
