// Public face of the orchestration tool's YAML support: task, volume and server files -> model + diagnostics.
// Used by `strato check` and the language server.
export { analyzeDstack, dstackKindOf, type DstackFile, type DstackKind } from './validate';
export { checkWorkspace, loadOrchestration, type OrchestrationResult } from './workspace';
export * from './rules';
