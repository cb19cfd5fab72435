// Test artifacts in the documented layout (docs/worker-protocol.md) without running `strato build`: worker
// sources from a map of files, strato_manifest.json, one handler_<name>.py per endpoint, and deps/strato (a
// copy of engine/python/strato). Fast and exact, for platform tests that need precise endpoint settings.
import { handlerFileName } from '../../engine/src/protocol/manifest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import type { Manifest, ManifestFunction, ManifestResource } from '../../engine/src/protocol/manifest';

export const PYTHON_PACKAGE = path.resolve(__dirname, '..', '..', 'engine', 'python', 'strato');

export interface TestEndpointSpec {
  name: string;
  /** Module file of the function, e.g. `worker.py` (module `worker`). */
  file: string;
  /** Function (or class) name in that file. */
  fn: string;
  isAsync?: boolean;
  isGenerator?: boolean;
  isClass?: boolean;
  params?: string[];
  workers?: [number, number];
  maxConcurrency?: number;
  idleTimeout?: number;
  executionTimeoutMs?: number;
  env?: Record<string, string>;
  /** A GPU endpoint asking for these GPU ids (default: a CPU endpoint). */
  gpu?: string;
  /** Load-balanced: `"METHOD /path"` -> function name (functions live in `file`). */
  routes?: Record<string, string>;
  /** Any other manifest fields (volumes, scaler_type, min_cuda_version, system_dependencies, image...). */
  resource?: Partial<ManifestResource>;
}

export { handlerFileName };

export function makeManifest(projectName: string, specs: TestEndpointSpec[]): Manifest {
  const resources: Record<string, ManifestResource> = {};
  const routes: Record<string, Record<string, string>> = {};
  for (const s of specs) {
    const module = s.file.replace(/\.py$/, '').replace(/\//g, '.');
    const fnNames = s.routes ? [...new Set(Object.values(s.routes))] : [s.fn];
    const functions: ManifestFunction[] = fnNames.map((name) => ({
      name,
      module,
      is_async: s.isAsync ?? false,
      is_class: s.isClass ?? false,
      is_generator: s.isGenerator ?? false,
      params: s.params ?? [],
    }));
    resources[s.name] = {
      is_load_balanced: !!s.routes,
      imageName: 'strato/cpu:py3.11',
      workersMin: s.workers?.[0] ?? 0,
      workersMax: s.workers?.[1] ?? 1,
      env: s.env ?? {},
      functions,
      handler_file: handlerFileName(s.name),
      ...(s.gpu ? { gpuIds: s.gpu } : { cpu: 'cpu3c-1-2' }),
      gpu_count: 1,
      execution_timeout_ms: s.executionTimeoutMs,
      idle_timeout: s.idleTimeout ?? 60,
      max_concurrency: s.maxConcurrency ?? 1,
      dependencies: [],
      source_file: s.file,
      // Tests written before scalers keep the demand rule they assert (one worker per max_concurrency jobs):
      // REQUEST_COUNT with scaler_value = max_concurrency. Scaler tests set their own.
      scaler_type: 'REQUEST_COUNT',
      scaler_value: s.maxConcurrency ?? 1,
      ...s.resource,
    };
    if (s.routes) routes[s.name] = s.routes;
  }
  return { version: 1, project_name: projectName, source_fingerprint: 'test', python_version: '3.11', resources, routes };
}

export interface TestArtifact {
  artifactPath: string;
  manifest: Manifest;
  dir: string;
}

/** Writes the artifact's tree under a temp dir and packs it as artifact.tar.gz there. */
export async function buildTestArtifact(files: Record<string, string>, specs: TestEndpointSpec[], projectName = 'testapp'): Promise<TestArtifact> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-artifact-'));
  const root = path.join(dir, 'root');
  const manifest = makeManifest(projectName, specs);
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  for (const [rel, text] of Object.entries(files)) write(rel, text);
  for (const s of specs) write(handlerFileName(s.name), `from strato.runtime import serve\nserve(${JSON.stringify(s.name)})\n`);
  write('strato_manifest.json', JSON.stringify(manifest, null, 2));
  write('requirements.txt', '');
  fs.cpSync(PYTHON_PACKAGE, path.join(root, 'deps', 'strato'), { recursive: true, filter: (src) => !src.includes('__pycache__') });
  const artifactPath = path.join(dir, 'artifact.tar.gz');
  await tar.c({ gzip: true, file: artifactPath, cwd: root, portable: true }, fs.readdirSync(root));
  return { artifactPath, manifest, dir };
}
