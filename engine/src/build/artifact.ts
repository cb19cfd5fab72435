// The artifact: the assembled build directory packed as a gzipped tarball, with the deployment size limit.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { limits } from '../catalog';
import { UserError } from '../util/errors';

/**
 * Packs `entries` (paths under `buildDir`) with everything under them. The same files make the same bytes: paths in
 * sorted order, no times, no owners (the platform takes an upload equal to a build it has as that build, and a deploy
 * of unchanged code keeps its workers). Sources and the runtime are linked into the build folder: links are followed;
 * byte-code caches stay out.
 */
export async function packArtifact(buildDir: string, entries: string[], out: string): Promise<number> {
  const keep = (p: string) => !p.split('/').includes('__pycache__') && !p.endsWith('.pyc');
  const paths: string[] = [];
  const walk = (rel: string) => {
    if (!keep(rel)) return;
    paths.push(rel);
    if (!statSync(path.join(buildDir, rel)).isDirectory()) return;
    for (const name of readdirSync(path.join(buildDir, rel)).sort()) walk(`${rel}/${name}`);
  };
  for (const e of [...entries].sort()) walk(e);
  await tar.c({ gzip: { level: 6 }, file: out, cwd: buildDir, portable: true, noMtime: true, follow: true, noDirRecurse: true }, paths);
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
