// The rules of the endpoint parameters (bounds, defaults, messages) as pure checks over plain values. The
// analysis, the platform's check of a saved endpoint and the generated Python package all answer in these words.
import data from './catalog.json';
import { cpuDatacenters, cudaVersions, datacenters, findDatacenter, limits, networkVolume, parameterDoc, podTemplateFields, scalerTypes } from './index';

export type MessageKey = keyof typeof data.messages;

/** A catalog message with its `{placeholders}` filled; the Python package fills the same text with str.format. */
export function parameterMessage(key: MessageKey, vars: Record<string, string | number> = {}): string {
  return data.messages[key].replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** Typed defaults of the parameters that have one (catalog.json `defaultValue`). */
export const parameterDefaults = {
  workers: defaultOf('workers') as [number, number],
  scalerValue: defaultOf('scaler_value') as number,
  minCudaVersion: defaultOf('min_cuda_version') as string,
  flashboot: defaultOf('flashboot') as boolean,
  accelerateDownloads: defaultOf('accelerate_downloads') as boolean,
  idleTimeout: defaultOf('idle_timeout') as number,
  gpuCount: defaultOf('gpu_count') as number,
  maxConcurrency: defaultOf('max_concurrency') as number,
};

function defaultOf(name: string): unknown {
  const p = data.parameters.find((x) => x.name === name) as { defaultValue?: unknown } | undefined;
  if (p?.defaultValue === undefined) throw new Error(`catalog.json: parameter ${name} has no defaultValue`);
  return p.defaultValue;
}

/** Endpoint names: what the control plane, the URLs and the Python package accept. */
export const ENDPOINT_NAME = new RegExp(data.endpointNamePattern);

export type ParameterCode =
  'invalid-workers' | 'invalid-type' | 'out-of-range' | 'unknown-datacenter' | 'invalid-volume' | 'invalid-dependencies' | 'invalid-env';
export type Checked<T> = { ok: true; value: T } | { ok: false; code: ParameterCode; message: string; swapped?: [number, number] };

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const fail = (code: ParameterCode, message: string, swapped?: [number, number]): Checked<never> => ({ ok: false, code, message, swapped });

/**
 * `workers`: an int n means (0, n); a pair is (min, max); 0 <= min <= max, 1 <= max <= the platform's bound.
 * `shown` is how the value reads to the user (its source text, its repr): it goes into the message.
 */
export function checkWorkers(v: unknown, shown: string = JSON.stringify(v)): Checked<{ min: number; max: number }> {
  let min: number;
  let max: number;
  if (isInt(v)) [min, max] = [0, v];
  else if (Array.isArray(v) && v.length === 2 && isInt(v[0]) && isInt(v[1])) [min, max] = v as [number, number];
  else return fail('invalid-workers', parameterMessage('workers-shape', { value: shown }));
  if (min < 0 || max < 0) return fail('invalid-workers', parameterMessage('workers-negative', { min, max }));
  if (min > max) return fail('invalid-workers', parameterMessage('workers-order', { min, max }), [max, min]);
  if (max === 0) return fail('invalid-workers', parameterMessage('workers-empty'));
  const limit = limits.workersMaxUpperBound;
  if (max > limit) return fail('out-of-range', parameterMessage('workers-upper', { max, limit }));
  return { ok: true, value: { min, max } };
}

/** An integer parameter with catalog bounds (idle_timeout, gpu_count, execution_timeout_ms, max_concurrency). */
export function checkIntParameter(param: string, v: unknown, shown: string = JSON.stringify(v)): Checked<number> {
  const doc = parameterDoc(param);
  if (doc?.min === undefined || doc.max === undefined) throw new Error(`catalog.json: parameter ${param} has no bounds`);
  const vars = { param, min: doc.min, max: doc.max, value: shown };
  if (!isInt(v)) return fail('invalid-type', parameterMessage('int-type', vars));
  if (v < doc.min || v > doc.max) {
    const own = `${param}-range`;
    return fail('out-of-range', parameterMessage(own in data.messages ? (own as MessageKey) : 'int-range', vars));
  }
  return { ok: true, value: v };
}

/** Parameters checked by checkIntParameter, in catalog order. */
export const intParameters: readonly string[] = data.parameters.filter((p) => 'min' in p && 'max' in p).map((p) => p.name);

// ---- The rest of the reference product's surface: placement (datacenter, volumes), scaling, images, CUDA. ----

export interface VolumeSpec {
  name: string;
  /** GB; a quota on the embedded platform. */
  size: number;
  datacenter: string;
}

export interface PodTemplateSpec {
  [field: string]: unknown;
}

/** How a call of a value class reads as plain data (the analysis and the manifest): `{ $class, ...keyword arguments }`. */
export type ClassValue = { $class: string } & Record<string, unknown>;
export const isClassValue = (v: unknown, cls: string): v is ClassValue =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && (v as ClassValue).$class === cls;

const shownOf = (v: unknown) => (isClassValue(v, (v as ClassValue)?.$class) ? `${(v as ClassValue).$class}(...)` : JSON.stringify(v));

export function checkBool(param: string, v: unknown, shown: string = JSON.stringify(v)): Checked<boolean> {
  return typeof v === 'boolean' ? { ok: true, value: v } : fail('invalid-type', parameterMessage('bool-type', { param, value: shown }));
}

/** `datacenter=`: a DataCenter, its id (any case, '_' for '-') or a list of them -> canonical ids. */
export function checkDatacenters(v: unknown, shown: string = JSON.stringify(v)): Checked<string[]> {
  const items = Array.isArray(v) ? v : [v];
  const known = datacenters.map((d) => d.id).join(', ');
  if (items.length === 0) return fail('unknown-datacenter', parameterMessage('unknown-datacenter', { value: shown, known }));
  const out: string[] = [];
  for (const item of items) {
    const dc = typeof item === 'string' ? findDatacenter(item) : undefined;
    if (!dc)
      return fail('unknown-datacenter', parameterMessage('unknown-datacenter', { value: typeof item === 'string' ? JSON.stringify(item) : shown, known }));
    if (!out.includes(dc.id)) out.push(dc.id);
  }
  return { ok: true, value: out };
}

/** `volume=`: one NetworkVolume or a list of them, with the catalog's defaults filled in. */
/**
 * `env`: names a process environment can hold (non-empty, no '=' or NUL), values without NUL, and sizes well within
 * what exec takes (catalog limits), so that a saved endpoint's workers can always be started.
 */
export function checkEnv(env: Record<string, string>): Checked<Record<string, string>> {
  let total = 0;
  for (const [name, value] of Object.entries(env)) {
    const shown = JSON.stringify(name);
    if (name === '' || name.includes('=') || name.includes('\0')) return fail('invalid-env', parameterMessage('env-name', { name: shown }));
    if (value.includes('\0')) return fail('invalid-env', parameterMessage('env-value', { name: shown }));
    const bytes = Buffer.byteLength(value);
    if (bytes > limits.envValueBytes) return fail('invalid-env', parameterMessage('env-value-size', { name: shown, bytes, limit: limits.envValueBytes }));
    total += Buffer.byteLength(name) + bytes + 2;
  }
  if (total > limits.envTotalBytes) return fail('invalid-env', parameterMessage('env-total-size', { bytes: total, limit: limits.envTotalBytes }));
  return { ok: true, value: env };
}

export function checkVolumes(v: unknown, shown: string = shownOf(v)): Checked<VolumeSpec[]> {
  const items = Array.isArray(v) ? v : [v];
  const nv = networkVolume;
  const out: VolumeSpec[] = [];
  for (const item of items) {
    if (!isClassValue(item, 'NetworkVolume')) return fail('invalid-type', parameterMessage('volume-type', { value: shown }));
    const name = item.name;
    if (typeof name !== 'string' || !ENDPOINT_NAME.test(name))
      return fail('invalid-volume', parameterMessage('volume-name', { value: JSON.stringify(name ?? null) }));
    const size = item.size ?? nv.defaultSizeGb;
    if (!isInt(size) || size < nv.minSizeGb || size > nv.maxSizeGb)
      return fail('invalid-volume', parameterMessage('volume-size', { min: nv.minSizeGb, max: nv.maxSizeGb, value: JSON.stringify(size) }));
    const dc = checkDatacenters(item.datacenter ?? nv.defaultDatacenter);
    if (!dc.ok) return dc;
    if (dc.value.length !== 1)
      return fail(
        'unknown-datacenter',
        parameterMessage('unknown-datacenter', { value: JSON.stringify(item.datacenter), known: datacenters.map((d) => d.id).join(', ') }),
      );
    if (out.some((o) => o.name === name)) return fail('invalid-volume', parameterMessage('volume-duplicate', { value: JSON.stringify(name) }));
    out.push({ name, size, datacenter: dc.value[0] });
  }
  return { ok: true, value: out };
}

export function checkCudaVersion(v: unknown, shown: string = JSON.stringify(v)): Checked<string> {
  const s = typeof v === 'number' ? v.toFixed(1) : typeof v === 'string' ? v.trim() : '';
  if (cudaVersions.includes(s)) return { ok: true, value: s };
  return fail('invalid-type', parameterMessage('unknown-cuda-version', { value: shown, known: cudaVersions.join(', ') }));
}

/** True when CUDA version `have` ("12.4") is at least `want` ("12.8"). */
export function cudaAtLeast(have: string, want: string): boolean {
  const [a, b] = [have, want].map((s) => s.split('.').map((n) => Number.parseInt(n, 10) || 0));
  return a[0] !== b[0] ? a[0] > b[0] : (a[1] ?? 0) >= (b[1] ?? 0);
}

export function checkScalerType(v: unknown, shown: string = JSON.stringify(v)): Checked<string> {
  const s = typeof v === 'string' ? v.trim().toUpperCase() : '';
  return scalerTypes.some((t) => t.id === s) ? { ok: true, value: s } : fail('invalid-type', parameterMessage('unknown-scaler-type', { value: shown }));
}

/** The scaler an endpoint uses when it names none (the reference's defaults). */
export const defaultScalerType = (kind: 'QUEUE' | 'LOAD_BALANCED') => (kind === 'QUEUE' ? 'QUEUE_DELAY' : 'REQUEST_COUNT');

const DEBIAN_PACKAGE = new RegExp(data.debianPackagePattern);
export function checkSystemDependencies(v: unknown, shown: string = JSON.stringify(v)): Checked<string[]> {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && DEBIAN_PACKAGE.test(x.trim())))
    return fail('invalid-dependencies', parameterMessage('system-dependency', { value: shown }));
  return { ok: true, value: v.map((x: string) => x.trim()) };
}

const IMAGE_REF = new RegExp(data.imageRefPattern);
export function checkImage(v: unknown, shown: string = JSON.stringify(v)): Checked<string> {
  return typeof v === 'string' && IMAGE_REF.test(v.trim())
    ? { ok: true, value: v.trim() }
    : fail('invalid-type', parameterMessage('image-ref', { value: shown }));
}

export function checkTemplate(v: unknown, shown: string = shownOf(v)): Checked<PodTemplateSpec> {
  if (!isClassValue(v, 'PodTemplate')) return fail('invalid-type', parameterMessage('template-type', { value: shown }));
  const { $class: _cls, ...fields } = v;
  void _cls;
  const known = podTemplateFields.map((f) => f.name);
  const unknown = Object.keys(fields).find((k) => !known.includes(k));
  if (unknown) return fail('invalid-type', parameterMessage('template-type', { value: `PodTemplate(${unknown}=...)` }));
  if (fields.env === undefined || fields.env === null) return { ok: true, value: fields };
  const env = templateEnv(fields.env);
  if (!env) return fail('invalid-type', parameterMessage('template-env', { value: JSON.stringify(fields.env) }));
  return { ok: true, value: { ...fields, env } };
}

/**
 * A Pod template's env as names to values: given so, or as the reference product writes it, a list of
 * `{"key": name, "value": value}`; undefined when it is neither (values are checked as the endpoint's env is).
 */
function templateEnv(env: unknown): Record<string, unknown> | undefined {
  if (Array.isArray(env)) {
    const pairs = env.map((e) =>
      typeof e === 'object' &&
      e !== null &&
      !Array.isArray(e) &&
      Object.keys(e).sort().join() === 'key,value' &&
      typeof (e as { key: unknown }).key === 'string'
        ? ([(e as { key: string }).key, (e as { value: unknown }).value] as const)
        : undefined,
    );
    return pairs.every((p) => p !== undefined) ? Object.fromEntries(pairs as Array<readonly [string, unknown]>) : undefined;
  }
  return typeof env === 'object' && env !== null && !('$class' in env) ? (env as Record<string, unknown>) : undefined;
}

export type PlacementCode = 'volume-datacenter' | 'cpu-datacenter';
export interface PlacementProblem {
  code: PlacementCode;
  message: string;
  /** Which argument the problem is about. */
  param: 'volume' | 'datacenter';
  /** A datacenter that would resolve it, when one is clear. */
  suggestion?: string;
}

/**
 * Where an endpoint may run, from its hardware, `datacenter=` and volumes (service.md item 11: a volume's region
 * fixes the region of the Pod that uses it). `datacenters` undefined means anywhere.
 */
export function resolvePlacement(a: { cpu: boolean; datacenters?: string[]; volumes: VolumeSpec[] }): { datacenters?: string[]; problems: PlacementProblem[] } {
  const problems: PlacementProblem[] = [];
  const volumeDcs = [...new Set(a.volumes.map((v) => v.datacenter))];
  const shownList = (l: readonly string[]) => (l.length === 1 ? l[0] : `[${l.join(', ')}]`);
  if (volumeDcs.length > 1) {
    problems.push({
      code: 'volume-datacenter',
      param: 'volume',
      message: parameterMessage('volume-datacenters-differ', { datacenters: volumeDcs.join(', ') }),
    });
    return { datacenters: a.datacenters, problems };
  }
  let allowed = a.datacenters;
  if (volumeDcs.length === 1) {
    const [dc] = volumeDcs;
    const vol = a.volumes.find((v) => v.datacenter === dc)!;
    if (allowed && !allowed.includes(dc)) {
      problems.push({
        code: 'volume-datacenter',
        param: 'datacenter',
        suggestion: dc,
        message: parameterMessage('volume-outside-datacenter', { volume: JSON.stringify(vol.name), volume_datacenter: dc, datacenters: shownList(allowed) }),
      });
    }
    allowed = [dc];
  }
  if (a.cpu) {
    const within = (allowed ?? cpuDatacenters).filter((d) => cpuDatacenters.includes(d));
    if (within.length === 0) {
      problems.push({
        code: 'cpu-datacenter',
        param: volumeDcs.length && !a.datacenters ? 'volume' : 'datacenter',
        suggestion: cpuDatacenters[0],
        message: parameterMessage('cpu-datacenter', { cpu_datacenters: cpuDatacenters.join(', '), datacenters: shownList(allowed ?? []) }),
      });
    }
    allowed = within.length ? within : allowed;
  }
  return { datacenters: allowed, problems };
}
