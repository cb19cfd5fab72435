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
