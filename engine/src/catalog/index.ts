// The GPU and CPU catalog and the endpoint parameter table, as typed data (catalog.json is the source; the
// Python package's catalog.py is generated from it). Used by the validation rules, hovers and completion.
import data from './catalog.json';

export interface GpuGroup {
  id: string;
  enum: string;
  memoryGb: number;
  models: string[];
  description: string;
}
export interface GpuType {
  id: string;
  enum: string;
  memoryGb: number;
  group: string;
}
export interface CpuShape {
  id: string;
  enum: string;
  family: string;
  vcpus: number;
  memoryGb: number;
  description: string;
}
export interface ParameterDoc {
  name: string;
  type: string;
  default: string;
  doc: string;
  min?: number;
  max?: number;
}

export const gpuGroups: readonly GpuGroup[] = data.gpuGroups;
export const gpuTypes: readonly GpuType[] = data.gpuTypes;
export const cpuShapes: readonly CpuShape[] = data.cpuShapes;
export const parameters: readonly ParameterDoc[] = data.parameters;
export const limits = data.limits;
export const excludedPackages: readonly string[] = data.excludedPackages;

export { HTTP_METHODS } from '../protocol/endpointKind';

export interface Datacenter {
  id: string;
  location: string;
}
/** Where Pods and volumes live; a volume's datacenter fixes the region of the Pod that mounts it. */
export const datacenters: readonly Datacenter[] = data.datacenters;
/** The datacenters where CPU endpoints can run (the reference product's CPU_DATACENTERS). */
export const cpuDatacenters: readonly string[] = data.cpuDatacenters;
/** CUDA versions `min_cuda_version` accepts, oldest first. */
export const cudaVersions: readonly string[] = data.cudaVersions;
/** The modules the worker runtime imports (engine/python/strato, and strato itself): a project file of such a name hides them. */
export const runtimeModules: readonly string[] = data.runtimeModules;
/** Files or folders (ending in /) whose presence says "this folder is a Strato project": the CLI and the Python package look for them. */
export const projectMarkers: readonly string[] = data.projectMarkers;
/** The reference product's Python package: projects written for it import from strato instead. */
export const referencePackage: string = data.referencePackage;
export const scalerTypes: ReadonlyArray<{ id: string; doc: string }> = data.scalerTypes;
export const serverlessTypes: ReadonlyArray<{ id: string; doc: string }> = data.serverlessTypes;
/** NetworkVolume defaults and bounds, and where a container finds its volume. */
export const networkVolume = data.networkVolume;
export const podTemplateFields: ReadonlyArray<{ name: string; type: string; default: unknown }> = data.podTemplateFields;

/** The Python enum member name of a value: "EU-RO-1" -> EU_RO_1, "12.8" -> V12_8. */
const memberName = (value: string, prefix = '') => prefix + value.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();

/** Python enum class name -> member name -> value, as the Python package defines them. */
export const enumClasses: Record<string, Record<string, string>> = {
  GpuGroup: Object.fromEntries(gpuGroups.map((g) => [g.enum, g.id])),
  // The reference's GpuType has ANY too: any model will do.
  GpuType: { ANY: 'any', ...Object.fromEntries(gpuTypes.map((g) => [g.enum, g.id])) },
  CpuInstanceType: Object.fromEntries(cpuShapes.map((c) => [c.enum, c.id])),
  DataCenter: Object.fromEntries(datacenters.map((d) => [memberName(d.id), d.id])),
  CudaVersion: Object.fromEntries(cudaVersions.map((v) => [memberName(v, 'V'), v])),
  ServerlessScalerType: Object.fromEntries(scalerTypes.map((t) => [t.id, t.id])),
  ServerlessType: Object.fromEntries(serverlessTypes.map((t) => [t.id, t.id])),
};

/**
 * Other names the reference product gives GpuType members, each -> its member here: the spelling of its docs where it
 * differs (catalog `aliases`: NVIDIA_A100_80GB_PCIe) and of its code, without the NVIDIA_ prefix (A100_80GB_PCIe,
 * H200). Accepted by the analysis and defined by the Python package (as enum aliases), never offered in completions.
 */
export const gpuTypeAliases: Record<string, string> = Object.fromEntries(
  gpuTypes.flatMap((t) =>
    [...((t as { aliases?: string[] }).aliases ?? []), t.enum]
      .map((name) => [name, name.replace(/^NVIDIA_/, '')])
      .flat()
      .filter((name) => name !== t.enum)
      .map((name) => [name, t.enum]),
  ),
);

/** Classes of the Python package whose calls the analysis reads as values (volume=NetworkVolume(...)). */
export const valueClasses = ['NetworkVolume', 'PodTemplate'] as const;
export type ValueClass = (typeof valueClasses)[number];
/** Module-level constants the Python package exports (CPU_DATACENTERS), as the analysis evaluates them. */
export const catalogConstants: Record<string, unknown> = { CPU_DATACENTERS: [...data.cpuDatacenters] };

// Hardware names are matched regardless of case, as the Python package accepts them (gpu="ada_24" is ADA_24); the
// catalog's spelling is the one a manifest records.
const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function findGpu(value: string): { group?: GpuGroup; type?: GpuType } | undefined {
  const group = gpuGroups.find((g) => sameName(g.id, value));
  if (group) return { group };
  const type = gpuTypes.find((t) => sameName(t.id, value));
  if (type) return { type, group: gpuGroups.find((g) => g.id === type.group) };
  return undefined;
}

export function findCpu(value: string): CpuShape | undefined {
  return cpuShapes.find((c) => sameName(c.id, value));
}

export function parameterDoc(name: string): ParameterDoc | undefined {
  return parameters.find((p) => p.name === name);
}

/** The closest candidate by edit distance (case-insensitive), when it is close enough to be a likely typo. */
export function didYouMean(value: string, candidates: readonly string[]): string | undefined {
  const v = value.toLowerCase();
  let best: string | undefined;
  let bestScore = Infinity;
  for (const c of candidates) {
    // Ties go to a candidate that extends what was typed (AMPERE_8 -> AMPERE_80, not AMPERE_48).
    const d = editDistance(v, c.toLowerCase()) - (c.toLowerCase().startsWith(v) ? 0.5 : 0);
    if (d < bestScore) {
      bestScore = d;
      best = c;
    }
  }
  if (best === undefined) return undefined;
  const threshold = Math.max(2, Math.floor(Math.max(value.length, best.length) / 3));
  return bestScore <= threshold ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length];
}

/** A datacenter by id, case-insensitively and with '_' for '-' ("eu_ro_1" is EU-RO-1), as the reference accepts. */
export function findDatacenter(id: string): Datacenter | undefined {
  const wanted = id.trim().replace(/_/g, '-').toLowerCase();
  return datacenters.find((d) => d.id.toLowerCase() === wanted);
}

/**
 * A `--datacenter` flag's value as its canonical id (findDatacenter's forms), or the sentence of a value that is none:
 * the flag's own words, not the Python package's `DataCenter.X` of the analysis message.
 */
export function datacenterFlag(value: string): { id: string } | { error: string } {
  const dc = findDatacenter(value);
  return dc ? { id: dc.id } : { error: `--datacenter ${JSON.stringify(value)} is not a datacenter: use one of ${datacenters.map((d) => d.id).join(', ')}` };
}

/** Short GPU names as YAML tools write them ("H100", "RTX A6000"): the model name without the vendor prefix. */
function shortNames(t: GpuType): string[] {
  const short = t.id.replace(/^NVIDIA\s+/, '').replace(/^GeForce\s+/, '');
  return [short, short.replace(/\s+/g, ''), short.split(/[\s-]/)[0]];
}

/** The GPU types a name means: a catalog model or group id, or a short model name; none when unknown. */
export function findGpusByName(name: string): GpuType[] {
  const n = name.trim().toLowerCase();
  const group = gpuGroups.find((g) => g.id.toLowerCase() === n);
  if (group) return gpuTypes.filter((t) => t.group === group.id || group.id === 'any');
  return gpuTypes.filter((t) => t.id.toLowerCase() === n || shortNames(t).some((s) => s.toLowerCase() === n));
}

/** Every name findGpusByName accepts, for completion and did-you-mean. */
export function gpuNames(): string[] {
  const names = new Set<string>();
  for (const t of gpuTypes) for (const s of shortNames(t)) names.add(s);
  return [...names];
}

/**
 * Why a GPU name given in place of nvidia-smi's (`--gpus`, STRATO_GPUS) will not count as the type endpoints ask for,
 * or null for a model the catalog knows. A short name ("H100"), a group id or a near miss names the models to write
 * instead; another name (a stand-in such as "fake-0") still serves endpoints that take any GPU.
 */
export function gpuModelNote(name: string): string | null {
  const models = gpuTypes.map((t) => t.id);
  if (models.some((m) => m.toLowerCase() === name.trim().toLowerCase())) return null;
  // "NVIDIA RTX 4090" is the brand without the product line of "NVIDIA GeForce RTX 4090", not the nearest string.
  const unlined = gpuTypes.filter((t) => t.id.replace(/\s+GeForce\s+/, ' ').toLowerCase() === name.trim().toLowerCase());
  const meant = (unlined.length ? unlined : findGpusByName(name)).map((t) => t.id);
  const near = meant.length === 0 ? didYouMean(name, models) : undefined;
  const instead = meant.length > 0 ? meant : near ? [near] : [];
  const why = `GPU "${name}" is not a model name as nvidia-smi reports it, so endpoints that ask for a GPU type do not count it as theirs`;
  if (instead.length === 0) return `${why} (it serves endpoints that take any GPU, and others only where no host has a GPU of their type)`;
  const listed = instead.slice(0, 4).map((m) => `"${m}"`);
  return `${why}: write ${listed.join(' or ')}${instead.length > 4 ? ' (or another of that group)' : ''}`;
}

/**
 * Whether a GPU that the driver names `model` (nvidia-smi's name, e.g. "NVIDIA H200") is of a kind the endpoint asks
 * for: `gpuIds` as the manifest writes it, comma-separated groups ("HOPPER_141") and models ("NVIDIA H200"), or "any".
 */
export function gpuServes(gpuIds: string | undefined, model: string): boolean {
  const m = model.trim().toLowerCase();
  return (gpuIds || 'any').split(',').some((raw) => {
    const id = raw.trim();
    if (id === 'any' || id.toLowerCase() === m) return true;
    return gpuGroups.find((g) => g.id === id)?.models.some((x) => x.toLowerCase() === m) ?? false;
  });
}
