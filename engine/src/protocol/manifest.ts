// The deployment manifest (.strato/strato_manifest.json, and strato_manifest.json at the artifact root):
// the spec's fields plus what the platform and the worker runtime need. Shared by build, platform and deploy.

export interface ManifestFunction {
  name: string;
  /** Dotted module name, importable from the artifact root. */
  module: string;
  is_async: boolean;
  is_class: boolean;
  is_generator: boolean;
  /** Parameter names in order (for building `input` and sample calls). */
  params: string[];
  /** An `input` built from the parameters (project/sampleInput.ts): the local test server's example request. */
  sample_input?: Record<string, unknown>;
}

export interface ManifestResource {
  is_load_balanced: boolean;
  imageName: string;
  workersMin: number;
  workersMax: number;
  /** GPU endpoints only: comma-separated GPU group ids or model names, `any` for any GPU. */
  gpuIds?: string;
  env: Record<string, string>;
  functions: ManifestFunction[];
  // Beyond the spec: what the runtime and the platform need.
  /** The generated handler file at the artifact root, e.g. `handler_gpu_hello.py`. */
  handler_file: string;
  cpu?: string;
  gpu_count: number;
  /** Server-side execution limit and client timeout; absent means the defaults (600 s server, 60 s client). */
  execution_timeout_ms?: number;
  idle_timeout: number;
  max_concurrency: number;
  dependencies: string[];
  /** Project-relative file that declares the endpoint. */
  source_file: string;
  /** Where the workers may run (after the volume and CPU rules); absent means anywhere. */
  datacenters?: string[];
  /** Network volumes the workers mount: one folder per app, datacenter and name on the platform. */
  volumes?: Array<{ name: string; size: number; datacenter: string }>;
  /** QUEUE_DELAY or REQUEST_COUNT, the kind's default filled in. */
  scaler_type?: string;
  scaler_value?: number;
  /** Lowest CUDA version the GPU driver must support ("12.8"). */
  min_cuda_version?: string;
  /** Debian packages the workers need: installed in preview images, checked on the platform's host. */
  system_dependencies?: string[];
  /** A container image of the user's own (`image=`), run where a Docker engine is available. */
  image?: string;
  /** The reference product's Pod template, as declared (recorded only). */
  template?: Record<string, unknown>;
  flashboot?: boolean;
  accelerate_downloads?: boolean;
}

export interface Manifest {
  version: 1;
  project_name: string;
  /** sha256 hex of the packaged source files (see fingerprint.ts). */
  source_fingerprint: string;
  python_version: string;
  resources: Record<string, ManifestResource>;
  /** Load-balanced endpoints only: `"<METHOD> <path>"` -> function name. */
  routes: Record<string, Record<string, string>>;
}

/** The generated handler of an endpoint at the artifact root; the build writes it and the platform runs it. */
export function handlerFileName(endpoint: string): string {
  return `handler_${endpoint.replace(/[^A-Za-z0-9_]/g, '_')}.py`;
}

/**
 * The handler file of each endpoint of one build, in the order given: handlerFileName, unless an endpoint before it
 * took that file (`foo-bar` and `foo_bar`, or `Api` and `api` on a case-insensitive disk), then with a number added.
 * The manifest records the result, and the platform runs what the manifest says.
 */
export function handlerFileNames(endpoints: readonly string[]): Record<string, string> {
  const lower = (file: string) => file.toLowerCase();
  const taken = new Set(endpoints.map((e) => lower(handlerFileName(e))));
  const given = new Set<string>();
  const out: Record<string, string> = {};
  for (const e of endpoints) {
    let file = handlerFileName(e);
    if (given.has(lower(file))) {
      const base = file.slice(0, -'.py'.length);
      let n = 2;
      while (taken.has(lower(`${base}_${n}.py`)) || given.has(lower(`${base}_${n}.py`))) n++;
      file = `${base}_${n}.py`;
    }
    given.add(lower(file));
    out[e] = file;
  }
  return out;
}
