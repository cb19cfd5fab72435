// Public face of the orchestration tool's YAML support: task, volume and server files -> model + diagnostics.
// Used by `strato check` and the language server.
export { analyzeDstack, configTypeOf, dstackKindOf, dstackTableOf, type DstackFile, type DstackKind } from './validate';
export { parseDstack } from './yamlReading';
export { checkWorkspace, listOrchestrationFiles, loadOrchestration, type FileAnalysis, type OrchestrationCache, type OrchestrationResult } from './workspace';
export * from './rules';
