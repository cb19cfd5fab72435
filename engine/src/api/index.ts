// Typed clients of a Strato platform, for the CLI and the extension: where it is (config), the control plane
// (GraphQL), the jobs API and load-balanced routes (HTTP), and the local platform started on demand.
export { readDotEnv, resolveApiConfig, unsendableKey, type ApiConfig, type ResolveOptions } from './config';
export { ControlPlaneClient, ControlPlaneError } from './controlPlane';
export type { ApiKeyInfo, App, AuditEntry, Build, CreatedKey, Endpoint, EndpointHealth, EndpointInput, Environment, KeyScope } from './controlPlane';
export type { ApiTarget } from './http';
export { JobsClient } from './jobs';
export { callRoute } from './loadBalanced';
export { FAILURE_SEARCH_TAIL, jobFailureLines, LogsClient, missingNodesNote } from './logs';
export { daemonStatus, ensureLocalPlatform } from './localPlatform';
export { checkKeyDestination, trustUrl, type SettingSource } from './trust';
