// What an endpoint runs and how: resolved once when the endpoint is saved, from its build's manifest resource
// and the overrides given to `saveEndpoint`. The platform's scheduler, job engine and router read only this.
import type { EndpointInput, EndpointKind } from '../../protocol/controlPlane';
import { handlerFileName, type Manifest, type ManifestResource } from '../../protocol/manifest';
import {
  checkCudaVersion,
  checkEnv,
  checkIntParameter,
  checkScalerType,
  checkVolumes,
  checkWorkers,
  defaultScalerType,
  parameterDefaults,
  type VolumeSpec,
} from '../../catalog/parameterRules';
import { limits } from '../options';

export interface EndpointRoute {
  method: string;
  path: string;
  function: string;
}

export interface ResolvedEndpointConfig {
  kind: EndpointKind;
  /** Generated handler at the artifact root, e.g. `handler_gpu_hello.py`. */
  handlerFile: string;
  workersMin: number;
  workersMax: number;
  /** Seconds a worker above the minimum stays idle before it stops. */
  idleTimeout: number;
  maxConcurrency: number;
  /** Server-side execution limit in ms (decisions.md: 600 s when the endpoint sets none). */
  executionTimeoutMs: number;
  /** As declared; absent means the 60 s client default. */
  declaredExecutionTimeoutMs?: number;
  env: Record<string, string>;
  gpuIds?: string;
  gpuCount: number;
  cpu?: string;
  /** The queue function is a generator: it streams its own chunks. */
  streaming: boolean;
  /** The handler is async: cancelling its task stops it. A sync handler is stopped by stopping its worker. */
  asyncHandler: boolean;
  routes: EndpointRoute[];
  sourceFingerprint: string;
  /** Where the workers may run; absent means anywhere. */
  datacenters?: string[];
  volumes: VolumeSpec[];
  scalerType: string;
  scalerValue: number;
  minCudaVersion: string;
  systemDependencies: string[];
  /** The user's own container image (`image=`). */
  image?: string;
}

/**
 * Overrides a client may send with `saveEndpoint` (the client's EndpointInput without what names the endpoint);
 * everything else comes from the manifest. `env` is merged over the manifest's.
 */
export type EndpointOverrides = Omit<EndpointInput, 'environmentId' | 'name' | 'buildId'>;

export function resolveConfig(manifest: Manifest, name: string, o: EndpointOverrides = {}): ResolvedEndpointConfig {
  const r: ManifestResource | undefined = manifest.resources?.[name];
  if (!r) {
    const names = Object.keys(manifest.resources ?? {});
    throw new Error(
      `the build has no endpoint named "${name}" (its manifest declares ${names.length ? names.join(', ') : 'none'}); ` +
        'rebuild and deploy the project, or use one of those names',
    );
  }
  const routes = Object.entries(manifest.routes?.[name] ?? {}).map(([key, fn]) => {
    const [method, ...rest] = key.split(' ');
    return { method: method.toUpperCase(), path: rest.join(' '), function: fn };
  });
  const declared = o.executionTimeoutMs ?? r.execution_timeout_ms;
  // 0 means the default; a value out of bounds is refused as declared, never turned into the default.
  const timeout = declared === undefined || declared === null ? null : checkIntParameter('execution_timeout_ms', declared);
  if (timeout && !timeout.ok) throw new Error(`endpoint "${name}": ${timeout.message}`);
  const d = parameterDefaults;
  const cfg: ResolvedEndpointConfig = {
    kind: r.is_load_balanced ? 'LOAD_BALANCED' : 'QUEUE',
    handlerFile: r.handler_file || handlerFileName(name),
    workersMin: o.workersMin ?? r.workersMin ?? d.workers[0],
    workersMax: o.workersMax ?? r.workersMax ?? d.workers[1],
    idleTimeout: o.idleTimeout ?? r.idle_timeout ?? d.idleTimeout,
    maxConcurrency: o.maxConcurrency ?? r.max_concurrency ?? d.maxConcurrency,
    executionTimeoutMs: declared && declared > 0 ? declared : limits.defaultExecutionLimitMs,
    declaredExecutionTimeoutMs: declared && declared > 0 ? declared : undefined,
    env: { ...(r.env ?? {}), ...(o.env ?? {}) },
    gpuIds: r.gpuIds,
    gpuCount: r.gpu_count ?? d.gpuCount,
    cpu: r.cpu,
    streaming: (r.functions ?? []).some((f) => f.is_generator),
    asyncHandler: (r.functions ?? []).length > 0 && (r.functions ?? []).every((f) => f.is_async),
    routes,
    sourceFingerprint: manifest.source_fingerprint ?? '',
    volumes: r.volumes ?? [],
    scalerType: r.scaler_type ?? defaultScalerType(r.is_load_balanced ? 'LOAD_BALANCED' : 'QUEUE'),
    scalerValue: r.scaler_value ?? d.scalerValue,
    minCudaVersion: r.min_cuda_version ?? d.minCudaVersion,
    systemDependencies: r.system_dependencies ?? [],
  };
  if (r.datacenters) cfg.datacenters = [...r.datacenters];
  if (r.image) cfg.image = r.image;
  const bad = validateConfig(cfg);
  if (bad) throw new Error(`endpoint "${name}": ${bad}`);
  return cfg;
}

/** A config stored by an earlier version of the platform, with the fields it did not know filled in. */
export function storedConfig(json: string): ResolvedEndpointConfig {
  const c = JSON.parse(json) as Partial<ResolvedEndpointConfig> & Pick<ResolvedEndpointConfig, 'kind'>;
  const d = parameterDefaults;
  return {
    volumes: [],
    systemDependencies: [],
    scalerType: defaultScalerType(c.kind),
    scalerValue: d.scalerValue,
    minCudaVersion: d.minCudaVersion,
    ...c,
  } as ResolvedEndpointConfig;
}

/** The same rules, in the same words, as the analysis and the Python package (catalog/parameterRules.ts). */
function validateConfig(c: ResolvedEndpointConfig): string | null {
  const workers = checkWorkers([c.workersMin, c.workersMax]);
  if (!workers.ok) return workers.message;
  const ints: Array<[string, number]> = [
    ['max_concurrency', c.maxConcurrency],
    ['idle_timeout', c.idleTimeout],
    ['gpu_count', c.gpuCount],
    ['execution_timeout_ms', c.executionTimeoutMs],
    ['scaler_value', c.scalerValue],
  ];
  for (const [param, value] of ints) {
    const r = checkIntParameter(param, value);
    if (!r.ok) return r.message;
  }
  for (const r of [checkScalerType(c.scalerType), checkCudaVersion(c.minCudaVersion), checkVolumes(c.volumes.map((v) => ({ $class: 'NetworkVolume', ...v })))])
    if (!r.ok) return r.message;
  for (const [k, v] of Object.entries(c.env)) if (typeof v !== 'string') return `env ${k} must be a string`;
  const env = checkEnv(c.env);
  return env.ok ? null : env.message;
}

/** Why a platform cannot run the endpoint as declared (its datacenters, its own image), or null when it can. */
export function capabilityRefusal(name: string, c: ResolvedEndpointConfig, served: readonly string[] | undefined, runsImages: boolean): string | null {
  if (served && c.datacenters && !c.datacenters.some((d) => served.includes(d)))
    return (
      `endpoint "${name}" runs only in ${c.datacenters.join(', ')}${c.volumes.length ? ' (where its volumes are)' : ''}, and this platform serves ` +
      `${served.join(', ')}: deploy it to a platform that serves one of them, or change its datacenter=`
    );
  if (c.image && !runsImages)
    return (
      `endpoint "${name}" runs its own image ${c.image}, and this platform runs workers as local processes, without a container engine: ` +
      'try it with strato deploy --preview (Docker), or remove image= to run on the base image'
    );
  return null;
}
