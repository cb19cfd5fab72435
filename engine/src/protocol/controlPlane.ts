// The control plane's wire types (GraphQL at {base_url}/graphql): what the API client sends and reads and what the
// platform's resolvers answer. Both sides import them from here; neither defines its own copy.
import type { EndpointKind } from './endpointKind';

export type { EndpointKind } from './endpointKind';

export interface App {
  id: string;
  name: string;
  createdAt: number;
  environments: Environment[];
}

export interface Environment {
  id: string;
  name: string;
  appId: string;
  createdAt: number;
  activeBuildId: string | null;
}

export interface Build {
  id: string;
  appId: string;
  createdAt: number;
  size: number;
  sha256: string;
  projectName: string | null;
  sourceFingerprint: string | null;
}

export interface Endpoint {
  id: string;
  name: string;
  type: EndpointKind;
  appId: string;
  environmentId: string;
  buildId: string;
  /** Queue: `{base}/v2/<id>` (append /run, /runsync). Load-balanced: `{base}/lb/<id>` (append the route). */
  url: string;
  routes: Array<{ method: string; path: string; function: string }>;
  workersMin: number;
  workersMax: number;
  idleTimeout: number;
  maxConcurrency: number;
  executionTimeoutMs: number;
  declaredExecutionTimeoutMs: number | null;
  gpuIds: string | null;
  gpuCount: number;
  cpu: string | null;
  env: Record<string, string>;
  sourceFingerprint: string;
  createdAt: number;
  updatedAt: number;
  /** Where its workers may run; null means anywhere. */
  datacenters: string[] | null;
  volumes: Array<{ name: string; datacenter: string; sizeGb: number }>;
  scalerType: string;
  scalerValue: number;
  minCudaVersion: string;
  systemDependencies: string[];
  /** The endpoint's own container image (`image=`), if any. */
  image: string | null;
  /** What the owner should know about the platform's host: missing system packages, a GPU driver too old. */
  notes: string[];
}

export interface EndpointHealth {
  idle: number;
  running: number;
  initializing: number;
  inQueue: number;
  inProgress: number;
  lastError: string | null;
  /** Set when the endpoint asks for hardware this machine lacks (a GPU on a machine without one). */
  hardwareNote: string | null;
}

export interface EndpointInput {
  environmentId: string;
  /** The endpoint's name in the build's manifest. */
  name: string;
  /** Defaults to the environment's active build. */
  buildId?: string;
  workersMin?: number;
  workersMax?: number;
  idleTimeout?: number;
  maxConcurrency?: number;
  executionTimeoutMs?: number;
  /** Merged over the manifest's env. */
  env?: Record<string, string>;
}

/** A network volume of an app: one per app, datacenter and name, kept until deleted on purpose. */
export interface Volume {
  appId: string;
  name: string;
  datacenter: string;
  /** The quota, in GB (NetworkVolume size). */
  sizeGb: number;
  /** Bytes in use at the last measurement (measured at most every 30 s). */
  usedBytes: number;
  createdAt: number;
  /** Names of the endpoints that mount it now. */
  endpoints: string[];
}
