// The control plane's GraphQL schema (SDL). Every operation needs an API key, and each key reaches what its scope
// allows (docs/security.md). JSON documents (the manifest) travel as strings; times are milliseconds since the epoch
// as Float (GraphQL Int is 32-bit).
import { KEY_SCOPES } from '../../protocol/controlPlane';

export const typeDefs = /* GraphQL */ `
  type Query {
    "Every app the key reaches."
    apps: [App!]!
    "An app by id or by name (exactly one of the two)."
    app(id: ID, name: String): App
    environment(id: ID!): Environment
    build(id: ID!): Build
    endpoint(id: ID!): Endpoint
    "Looks an endpoint up by its name within an app and environment (both by name)."
    endpointByName(app: String!, environment: String!, name: String!): Endpoint
    "Every endpoint, optionally only those of one environment."
    endpoints(environmentId: ID): [Endpoint!]!
    "Network volumes: an app's, or every app's."
    volumes(appId: ID): [Volume!]!
    platform: PlatformInfo!
    "Every API key, revoked ones included (admin keys only)."
    keys: [ApiKey!]!
    "Control-plane changes and refused attempts, newest first (admin keys only). limit: 1..10000, default 50."
    audit(app: String, key: String, limit: Int): [AuditEntry!]!
  }

  type Mutation {
    createApp(name: String!): App!
    "Deletes the app with its environments, builds, endpoints and jobs."
    deleteApp(id: ID!): Boolean!
    createEnvironment(appId: ID!, name: String!): Environment!
    "Deletes the environment with its endpoints and their jobs."
    deleteEnvironment(id: ID!): Boolean!
    "Step 1 of a build upload: where to PUT the artifact (size in bytes)."
    requestBuildUpload(appId: ID!, size: Float!): BuildUpload!
    "Step 3: store the uploaded artifact as a build. Without manifest, the one inside the artifact is used."
    finalizeBuild(appId: ID!, uploadId: ID!, manifest: String): Build!
    "Makes the build the environment's active build (the default for saveEndpoint)."
    deployBuild(environmentId: ID!, buildId: ID!): Environment!
    "Creates the endpoint, or updates the one with this name in the environment; its workers are rolled."
    saveEndpoint(input: EndpointInput!): Endpoint!
    "Deletes the endpoint, stops its workers and removes its jobs."
    deleteEndpoint(id: ID!): Boolean!
    "Deletes a network volume and its files; refused while an endpoint mounts it. datacenter is needed when the name is in several."
    deleteVolume(appId: ID!, name: String!, datacenter: String): Boolean!
    "Creates an API key (admin keys only); the answer is the only time the key itself is shown."
    createKey(name: String!, scope: KeyScope!, apps: [String!]): CreatedKey!
    "Revokes a key by id, or by the name of an active key (admin keys only); it is refused from then on."
    revokeKey(key: String!): ApiKey!
  }

  "admin: everything. deploy: changes and calls on the named apps. invoke: calls only (named apps, or every app)."
  enum KeyScope {
    ${KEY_SCOPES.join('\n    ')}
  }

  type ApiKey {
    id: ID!
    name: String!
    scope: KeyScope!
    "App names the key reaches; empty: every app."
    apps: [String!]!
    "The first characters of the key, to recognise it."
    prefix: String!
    createdAt: Float
    createdBy: String
    lastUsedAt: Float
    revokedAt: Float
    revokedBy: String
    "The platform key (key file or --api-key): an admin key the API cannot revoke."
    builtin: Boolean!
  }

  type CreatedKey {
    key: ApiKey!
    "The key itself. Only its SHA-256 hash is kept: it cannot be shown again."
    secret: String!
  }

  type AuditEntry {
    seq: Float!
    at: Float!
    keyId: String!
    keyName: String!
    "The mutation: createApp, saveEndpoint, revokeKey..."
    operation: String!
    "ok, or denied (the key asked for a change outside its scope)."
    outcome: String!
    app: String
    "app, environment, build, endpoint or key."
    targetType: String!
    targetId: String
    targetName: String
    "JSON: what changed (names of environment variables, never their values), or why it was denied."
    detail: String
  }

  type PlatformInfo {
    version: String!
    "Base URL of the platform: queue endpoints under /v2/<id>, load-balanced under /lb/<id>."
    baseUrl: String!
    "Suffix of job ids owned by this node."
    instanceId: String!
    "The datacenters this platform serves; null means it stands in for all of them."
    datacenters: [String!]
    "The nodes that form this service: this one alone on the embedded database, every node sharing a PostgreSQL server."
    nodes: [PlatformNode!]!
    "The machines workers run on: this one and the worker hosts of strato platform agent (an admin key's view)."
    hosts: [WorkerHost!]!
  }

  "A platform node: where other nodes reach it and whether its heartbeat is recent (alive) or too old (lost)."
  type PlatformNode {
    id: String!
    url: String!
    startedAt: Float!
    heartbeatAt: Float!
    "alive or lost"
    state: String!
  }

  type WorkerHost {
    name: String!
    "The datacenters it stands in for; null means all of them."
    datacenters: [String!]
    "True for the platform's own machine (in a cluster, the machine of the node named by node)."
    local: Boolean!
    "In a cluster, the platform node that holds the host: its machine, or an agent joined to it; null on one node."
    node: String
    gpus: HostGpus!
    cudaVersion: String
    cpus: Int!
    "Workers running there."
    workers: Int!
    "Last heartbeat of its agent (ms since the epoch); null for the platform's own machine."
    lastSeen: Float
  }

  type HostGpus {
    total: Int!
    free: Int!
    names: [String!]!
  }

  type App {
    id: ID!
    name: String!
    createdAt: Float!
    environments: [Environment!]!
    environment(name: String!): Environment
    builds: [Build!]!
    volumes: [Volume!]!
  }

  "A network volume: one per app, datacenter and name, kept across deploys until deleted."
  type Volume {
    appId: ID!
    name: String!
    datacenter: String!
    "The quota in GB."
    sizeGb: Int!
    "Bytes in use at the last measurement (at most 30 s old)."
    usedBytes: Float!
    createdAt: Float!
    "Endpoints that mount it now."
    endpoints: [String!]!
  }

  type VolumeMount {
    name: String!
    datacenter: String!
    sizeGb: Int!
  }

  type Environment {
    id: ID!
    name: String!
    appId: ID!
    app: App!
    createdAt: Float!
    activeBuild: Build
    endpoints: [Endpoint!]!
    endpoint(name: String!): Endpoint
  }

  type BuildUpload {
    uploadId: ID!
    "HTTP PUT the tar.gz here with a key that may deploy to the app; Content-Length must equal size."
    url: String!
    expiresAt: Float!
  }

  type Build {
    id: ID!
    appId: ID!
    createdAt: Float!
    size: Float!
    sha256: String!
    "The manifest (strato_manifest.json) as JSON text."
    manifest: String!
    projectName: String
    sourceFingerprint: String
  }

  enum EndpointType {
    QUEUE
    LOAD_BALANCED
  }

  type Route {
    method: String!
    path: String!
    function: String!
  }

  type EnvVar {
    name: String!
    value: String!
  }

  type Endpoint {
    id: ID!
    name: String!
    type: EndpointType!
    appId: ID!
    environmentId: ID!
    buildId: ID!
    "Queue: {base}/v2/<id> (append /run, /runsync...). Load-balanced: {base}/lb/<id> (append the route path)."
    url: String!
    routes: [Route!]!
    workersMin: Int!
    workersMax: Int!
    idleTimeout: Int!
    maxConcurrency: Int!
    "Server-side execution limit in ms (600000 when the endpoint declares none)."
    executionTimeoutMs: Float!
    "As declared by the endpoint; null means the 60 s client default."
    declaredExecutionTimeoutMs: Float
    gpuIds: String
    gpuCount: Int!
    cpu: String
    env: [EnvVar!]!
    sourceFingerprint: String!
    createdAt: Float!
    updatedAt: Float!
    health: EndpointHealth!
    "Where its workers may run; null means anywhere."
    datacenters: [String!]
    volumes: [VolumeMount!]!
    scalerType: String!
    scalerValue: Int!
    minCudaVersion: String!
    systemDependencies: [String!]!
    "The endpoint's own container image (image=), if any."
    image: String
    "What the owner should know about the platform's host: missing system packages, a GPU driver too old."
    notes: [String!]!
  }

  type EndpointHealth {
    idle: Int!
    running: Int!
    initializing: Int!
    inQueue: Int!
    inProgress: Int!
    "Why workers cannot start, when they cannot (for example an import error), else null."
    lastError: String
    "Set when the endpoint asks for hardware this machine does not have (a GPU on a machine without one)."
    hardwareNote: String
    "Why no worker can start while the service's hosts stay as they are (no host of its datacenter, more GPUs per worker than any host has, a GPU driver below min_cuda_version), else null; its jobs wait."
    blocked: String
  }

  input EnvVarInput {
    name: String!
    value: String!
  }

  input EndpointInput {
    environmentId: ID!
    "The endpoint's name in the build's manifest."
    name: String!
    "Defaults to the environment's active build."
    buildId: ID
    workersMin: Int
    workersMax: Int
    idleTimeout: Int
    maxConcurrency: Int
    executionTimeoutMs: Float
    "Merged over the manifest's env."
    env: [EnvVarInput!]
  }
`;
