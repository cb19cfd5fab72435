// The artifact: the assembled build directory packed as a gzipped tarball, with the deployment size limit.
import { statSync } from 'node:fs';
import * as tar from 'tar';
import { limits } from '../catalog';
import { UserError } from '../util/errors';

export async function packArtifact(buildDir: string, entries: string[], out: string): Promise<number> {
  // `follow`: sources and the runtime are linked into the build folder; byte-code caches stay out.
  const filter = (p: string) => !p.includes('__pycache__') && !p.endsWith('.pyc');
  await tar.c({ gzip: { level: 6 }, file: out, cwd: buildDir, portable: true, noMtime: false, follow: true, filter }, entries);
  return statSync(out).size;
}

export function checkArtifactSize(bytes: number): void {
  if (bytes > limits.deploymentBytes) {
    const mb = (n: number) => Math.round(n / 1024 / 1024);
    throw new UserError(
      `Archive exceeds limit (${mb(bytes)} MB / ${mb(limits.deploymentBytes)} MB): leave large packages out with --exclude a,b (torch, torchvision, ` +
        `torchaudio, numpy and triton are already in the base image) or move data files out of the project.`,
    );
  }
}

export function formatSize(bytes: number): string {
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
