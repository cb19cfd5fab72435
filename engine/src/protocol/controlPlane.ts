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

/** A node of the platform service (`platform { nodes }`): one on the embedded database, each node sharing a PostgreSQL server. */
export interface PlatformNode {
  id: string;
  /** Where other nodes reach it. */
  url: string;
  startedAt: number;
  heartbeatAt: number;
  /** alive: its heartbeat is recent; lost: older than the bound, and live nodes adopt its jobs. */
  state: 'alive' | 'lost';
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
  /** Why no worker can start while the service's hosts stay as they are (too few GPUs, no host of its datacenter); else null. */
  blocked: string | null;
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

/**
 * What an API key may do (docs/security.md): `admin` everything, key management and the audit log included;
 * `deploy` change and call the apps it names; `invoke` only call endpoints (jobs API, load-balanced routes) of the apps
 * it names, or of every app when it names none.
 */
export const KEY_SCOPES = ['admin', 'deploy', 'invoke'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

/** The id and name of the platform key (the key file or --api-key): an admin key the API cannot revoke. */
export const PLATFORM_KEY_ID = 'platform';

/** An API key as the control plane shows it. The key itself is never kept, only its SHA-256 hash. */
export interface ApiKeyInfo {
  id: string;
  name: string;
  scope: KeyScope;
  /** The apps (by name) it reaches; empty: every app (admin keys, and invoke keys created without apps). */
  apps: string[];
  /** The key's first characters, to recognise it. */
  prefix: string;
  createdAt: number | null;
  /** Name of the key that created it. */
  createdBy: string | null;
  /** When it was last used (recorded to within a few seconds). */
  lastUsedAt: number | null;
  revokedAt: number | null;
  revokedBy: string | null;
  /** The platform key: configuration of the node (key file or --api-key), not revocable through the API. */
  builtin: boolean;
}

/** The answer to createKey: the only time the key itself is shown. */
export interface CreatedKey {
  key: ApiKeyInfo;
  secret: string;
}

/** `ok`: the change was made. `denied`: a valid key asked for a change outside its scope (403). */
export type AuditOutcome = 'ok' | 'denied';

/** One control-plane change (or refused attempt), with the key that made it. */
export interface AuditEntry {
  /** Increasing: newer entries have larger numbers. */
  seq: number;
  at: number;
  keyId: string;
  keyName: string;
  /** The GraphQL mutation: createApp, saveEndpoint, revokeKey... */
  operation: string;
  outcome: AuditOutcome;
  /** Name of the app it concerns (null for keys). */
  app: string | null;
  /** app, environment, build, endpoint or key. */
  targetType: string;
  targetId: string | null;
  targetName: string | null;
  /** JSON text: what changed (names of environment variables, never their values), or why it was denied. */
  detail: string | null;
}
