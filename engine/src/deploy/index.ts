// Deploy, undeploy and environments: what `strato deploy`, `undeploy` and `env` do, for the CLI and the extension.
export {
  deployProject,
  waitForWorkers,
  DEPLOY_STEPS,
  READY_TIMEOUT_MS,
  type DeployOptions,
  type DeployResult,
  type DeployStep,
  type WorkerProblem,
} from './deploy';
export {
  appNameFor,
  chooseEnvironment,
  findEnvironment,
  resolveProjectContext,
  DEFAULT_ENVIRONMENT,
  DEV_ENVIRONMENT,
  LIVE_PREFIX,
  type ProjectContext,
} from './context';
export {
  findDeployedEndpoint,
  getEnvironment,
  listEnvironments,
  undeployEnvironment,
  summarize,
  workersText,
  type EndpointSummary,
  type EnvironmentSummary,
  type WorkersSummary,
} from './environments';
export { sampleCall } from './samples';
export { endpointCalls } from './calls';
