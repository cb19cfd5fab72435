// Deploy, undeploy and environments: what `strato deploy`, `undeploy` and `env` do, for the CLI and the extension.
export { deployProject, DEPLOY_STEPS, type DeployOptions, type DeployResult, type DeployStep } from './deploy';
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
  type EndpointSummary,
  type EnvironmentSummary,
} from './environments';
export { sampleCall, sampleArgs } from './samples';
export { endpointCalls } from './calls';
