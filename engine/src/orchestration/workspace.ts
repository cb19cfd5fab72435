// Cross-file rules of the orchestration YAML: a mounted volume must have a volume file of that name, and a
// volume's region fixes the region of the Pod that mounts it (regions that exclude it, or two regions, are errors).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { didYouMean } from '../catalog';
import { listProjectFiles } from '../project/ignore';
import type { Diagnostic } from '../project/model';
import { analyzeDstack, dstackKindOf, type DstackFile } from './validate';

export function checkWorkspace(files: readonly DstackFile[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const volumes = new Map<string, DstackFile>();
  for (const f of files) if (f.kind === 'volume' && f.name) volumes.set(f.name.value, f);
  for (const task of files) {
    if (task.kind !== 'task') continue;
    const used: Array<{ volume: DstackFile; mount: DstackFile['mounts'][number] }> = [];
    for (const mount of task.mounts) {
      const volume = volumes.get(mount.name);
      if (!volume) {
        const guess = didYouMean(mount.name, [...volumes.keys()]);
        out.push({
          code: 'unknown-volume',
          severity: 'error',
          file: task.file,
          range: mount.range,
          message:
            `no volume named "${mount.name}" in the ` +
            `workspace${guess ? `: did you mean "${guess}"?` : ': add a .dstack.yml file with type: volume and that name.'}`,
        });
        continue;
      }
      used.push({ volume, mount });
      const region = volume.region?.value;
      if (region && task.regions && !task.regions.value.includes(region)) {
        out.push({
          code: 'region-conflict',
          severity: 'error',
          file: task.file,
          range: task.regions.range,
          message:
            `volume "${mount.name}" is in region ${region}, which fixes the task's region, but regions excludes it: add ${region} to regions ` +
            `or use a volume there.`,
          related: [{ file: volume.file, range: volume.region?.range ?? mount.range, message: `volume "${mount.name}" is in ${region}` }],
        });
      }
    }
    const regions = new Set(used.map((u) => u.volume.region?.value).filter((r): r is string => !!r));
    if (regions.size > 1) {
      out.push({
        code: 'region-conflict',
        severity: 'error',
        file: task.file,
        range: task.volumesRange ?? used[0].mount.range,
        message: `the task mounts volumes in different regions (${[...regions].join(', ')}), but a Pod runs in one region: use volumes of one region.`,
        related: used
          .filter((u) => u.volume.region)
          .map((u) => ({ file: u.volume.file, range: u.volume.region!.range, message: `volume "${u.mount.name}" is in ${u.volume.region!.value}` })),
      });
    }
  }
  return out;
}

export interface OrchestrationResult {
  files: DstackFile[];
  diagnostics: Diagnostic[];
}

/** Every orchestration YAML file of the project (ignore rules applied), analysed, plus the cross-file rules. */
export function loadOrchestration(root: string, overrides?: ReadonlyMap<string, string>): OrchestrationResult {
  const { files } = listProjectFiles(root);
  const models: DstackFile[] = [];
  const diagnostics: Diagnostic[] = [];
  const all = new Set([...files, ...(overrides?.keys() ?? [])]);
  for (const rel of [...all].sort()) {
    if (!dstackKindOf(rel)) continue;
    let text = overrides?.get(rel);
    if (text === undefined) {
      try {
        text = readFileSync(path.join(root, rel), 'utf8');
      } catch {
        continue;
      }
    }
    const { model, sink } = analyzeDstack(rel, text);
    models.push(model);
    diagnostics.push(...sink.items);
  }
  diagnostics.push(...checkWorkspace(models));
  return { files: models, diagnostics };
}
