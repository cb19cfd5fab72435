// Cross-file rules of the orchestration YAML: a volume name is declared by one volume file, a mounted volume must
// have one, and a volume's region fixes the region of the Pod that mounts it (regions that exclude it, or two regions,
// are errors).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { didYouMean, findDatacenter } from '../catalog';
import { listProjectFiles } from '../project/ignore';
import type { Diagnostic } from '../project/model';
import { analyzeDstack, dstackKindOf, type DstackFile } from './validate';

/** A region as the catalog spells it (eu-ro-1 and EU-RO-1 are one region), so that spellings compare as regions. */
const regionKey = (region: string) => findDatacenter(region)?.id ?? region.trim().toLowerCase();

export function checkWorkspace(files: readonly DstackFile[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const volumes = new Map<string, DstackFile[]>();
  for (const f of files) if (f.kind === 'volume' && f.name) volumes.set(f.name.value, [...(volumes.get(f.name.value) ?? []), f]);
  for (const [name, declared] of volumes) {
    if (declared.length < 2) continue;
    for (const f of declared)
      out.push({
        code: 'duplicate-volume',
        severity: 'error',
        file: f.file,
        range: f.name!.range,
        message: `volume "${name}" is declared in ${declared.length} files (${declared.map((d) => d.file).join(', ')}): a name is one volume; rename or remove the others.`,
        related: declared.filter((d) => d !== f).map((d) => ({ file: d.file, range: d.name!.range, message: `volume "${name}" is declared here too` })),
      });
  }
  for (const task of files) {
    if (task.kind !== 'task') continue;
    const used: Array<{ volume: DstackFile; mount: DstackFile['mounts'][number] }> = [];
    for (const mount of task.mounts) {
      const declared = volumes.get(mount.name) ?? [];
      if (!declared.length) {
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
      // Each declaration is checked (two of one name are an error of their own, above).
      for (const volume of declared) {
        used.push({ volume, mount });
        const region = volume.region?.value;
        if (region && task.regions && !task.regions.value.some((r) => regionKey(r) === regionKey(region))) {
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
    }
    const regions = new Set(
      used
        .map((u) => u.volume.region?.value)
        .filter((r): r is string => !!r)
        .map(regionKey),
    );
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

/** One file's own analysis: its model and the diagnostics that need no other file. */
export interface FileAnalysis {
  model: DstackFile;
  diagnostics: Diagnostic[];
}

/**
 * What a caller (the language server) keeps between loads of one project: the listing, which only file
 * creations, deletions and renames change (walking the tree is the cost of a load), and each file's own analysis
 * (null: unreadable), which only a change of that file's text changes. Drop an entry when that happens.
 */
export interface OrchestrationCache {
  listed?: readonly string[];
  files?: Map<string, FileAnalysis | null>;
}

/** The project's orchestration YAML files (ignore rules applied), by project-relative path. */
export function listOrchestrationFiles(root: string): string[] {
  return listProjectFiles(root).files.filter((f) => dstackKindOf(f) !== undefined);
}

function analyzeFile(root: string, rel: string, text: string | undefined): FileAnalysis | null {
  if (text === undefined) {
    try {
      text = readFileSync(path.join(root, rel), 'utf8');
    } catch {
      return null;
    }
  }
  const { model, sink } = analyzeDstack(rel, text);
  return { model, diagnostics: sink.items };
}

/** Every orchestration YAML file of the project (open buffers in `overrides` replace the disk), analysed, plus the cross-file rules. */
export function loadOrchestration(root: string, overrides?: ReadonlyMap<string, string>, cache: OrchestrationCache = {}): OrchestrationResult {
  const listed = (cache.listed ??= listOrchestrationFiles(root));
  const files = (cache.files ??= new Map());
  const analyses: FileAnalysis[] = [];
  for (const rel of [...new Set([...listed, ...(overrides?.keys() ?? [])])].sort()) {
    if (!dstackKindOf(rel)) continue;
    if (!files.has(rel)) files.set(rel, analyzeFile(root, rel, overrides?.get(rel)));
    const a = files.get(rel);
    if (a) analyses.push(a);
  }
  const models = analyses.map((a) => a.model);
  // A file open in the editor that the ignore rules leave out (it is on disk, not listed) gets its own diagnostics,
  // but declares no volume for the others: strato check does not read it.
  const listedHere = new Set(listed);
  const declares = (m: DstackFile) => m.kind !== 'volume' || listedHere.has(m.file) || !existsSync(path.join(root, m.file));
  return { files: models, diagnostics: [...analyses.flatMap((a) => a.diagnostics), ...checkWorkspace(models.filter(declares))] };
}
