// The deployment manifest built from the project model: the spec's fields per endpoint plus what the
// platform and the worker runtime need (handler file, limits, function shapes).
import type { EndpointSpec, FunctionInfo, ProjectModel } from '../project';
import { namedParams } from '../project/syntax';
import { sampleArgs } from '../project/sampleInput';
import { defaultScalerType } from '../catalog/parameterRules';
import { handlerFileNames, type Manifest, type ManifestFunction, type ManifestResource } from '../protocol/manifest';

export type { Manifest, ManifestFunction, ManifestResource } from '../protocol/manifest';
export { handlerFileName } from '../protocol/manifest';

export const DEFAULT_PYTHON_VERSION = '3.11';

export function imageName(ep: EndpointSpec, pythonVersion: string): string {
  if (ep.config.image) return ep.config.image;
  return baseImageName(ep.config.cpu ? 'cpu' : 'gpu', pythonVersion);
}

/** The base image an endpoint of that hardware runs in (what `strato preview image` builds locally). */
export function baseImageName(kind: 'cpu' | 'gpu', pythonVersion: string): string {
  return `strato/worker-${kind}:py${pythonVersion}`;
}

function manifestFunction(fn: FunctionInfo, module: string): ManifestFunction {
  return {
    name: fn.name,
    module,
    is_async: fn.isAsync,
    is_class: fn.isClass,
    is_generator: fn.isGenerator,
    params: namedParams(fn.params).map((p) => p.name),
    sample_input: sampleArgs(fn),
  };
}

function resourceOf(ep: EndpointSpec, pythonVersion: string, handlerFile: string): ManifestResource {
  const c = ep.config;
  const resource: ManifestResource = {
    is_load_balanced: ep.kind === 'LOAD_BALANCED',
    imageName: imageName(ep, pythonVersion),
    workersMin: c.workersMin,
    workersMax: c.workersMax,
    env: { ...c.env },
    functions: ep.functions.map((f) => manifestFunction(f, ep.module)),
    handler_file: handlerFile,
    gpu_count: c.gpuCount,
    idle_timeout: c.idleTimeout,
    max_concurrency: c.maxConcurrency,
    dependencies: [...c.dependencies],
    source_file: ep.file,
    scaler_type: c.scalerType ?? defaultScalerType(ep.kind),
    scaler_value: c.scalerValue,
    min_cuda_version: c.minCudaVersion,
    system_dependencies: [...c.systemDependencies],
    flashboot: c.flashboot,
    accelerate_downloads: c.accelerateDownloads,
  };
  if (c.datacenters) resource.datacenters = [...c.datacenters];
  if (c.volumes.length) resource.volumes = c.volumes.map((v) => ({ ...v }));
  if (c.image) resource.image = c.image;
  if (c.template) resource.template = { ...c.template };
  if (!c.cpu) resource.gpuIds = (c.gpu ?? ['any']).join(',');
  else resource.cpu = c.cpu;
  if (c.executionTimeoutMs !== undefined) resource.execution_timeout_ms = c.executionTimeoutMs;
  return resource;
}

export function createManifest(model: ProjectModel, projectName: string, fingerprint: string, pythonVersion = DEFAULT_PYTHON_VERSION): Manifest {
  const manifest: Manifest = {
    version: 1,
    project_name: projectName,
    source_fingerprint: fingerprint,
    python_version: pythonVersion,
    resources: {},
    routes: {},
  };
  // By code point, not localeCompare: the manifest reads the same on every machine whatever its locale, and the first
  // localeCompare of a process spends 5 ms loading the collation tables.
  const endpoints = [...model.endpoints].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const handlerFiles = handlerFileNames(endpoints.map((ep) => ep.name));
  for (const ep of endpoints) {
    manifest.resources[ep.name] = resourceOf(ep, pythonVersion, handlerFiles[ep.name]);
    if (ep.kind === 'LOAD_BALANCED') {
      manifest.routes[ep.name] = Object.fromEntries(ep.routes.map((r) => [`${r.method} ${r.path}`, r.function.name]));
    }
  }
  return manifest;
}
