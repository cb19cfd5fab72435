// Public face of project analysis: Python source -> ProjectModel and diagnostics. One analysis for all.
export * from './model';
export { analyzeText, analyzeTree, moduleNameOf, resolveModule, type AnalyzeOptions } from './analyze';
export { combine, duplicateNames, loadProject, type LoadOptions } from './project';
export {
  listProjectFiles,
  localModulesOf,
  createIgnore,
  hasProjectMarker,
  projectRootAt,
  notAProject,
  noEndpointFound,
  projectsInside,
  BUILTIN_IGNORES,
  SECRET_PATTERNS,
  INCLUDE_FILE,
  PROJECT_MARKERS,
  type ProjectFiles,
} from './ignore';
export { createPythonParser, loadPython, Parser, type Edit, type SyntaxNode, type Tree } from './parser';
export { ModuleTree, nextStatementStart, type ParseOptions } from './segments';
export { isThirdParty } from './imports';
export { ENDPOINT_NAME } from './rules';
export { formatDiagnostic } from './format';
export { diskTextProblem, isWorkerText, readWorkerFile, unreadFileWarning, unreadTextWarning, MAX_WORKER_FILE_BYTES } from './workerFile';
