// The app and environment a project deploys to: the app is named after the project directory (STRATO_APP
// overrides it); the environment is --env, else the only one, else `production` when there is none.
import path from 'node:path';
import { resolveApiConfig, type ApiConfig } from '../api/config';
import type { App, Environment } from '../api/controlPlane';
import { didYouMean } from '../catalog';
import { APP_OR_ENV_NAME, APP_OR_ENV_NAME_RULE, DEFAULT_ENVIRONMENT, DEV_ENVIRONMENT, suggestName } from '../protocol/names';
import { PROJECT_MARKERS, projectRootAt } from '../project/ignore';
import { UserError } from '../util/errors';

export { DEFAULT_ENVIRONMENT, DEV_ENVIRONMENT, LIVE_PREFIX } from '../protocol/names';

function deployable(app: App | null): Environment[] {
  return (app?.environments ?? []).filter((e) => e.name !== DEV_ENVIRONMENT);
}

export function appNameFor(projectDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return (env.STRATO_APP || '').trim() || path.basename(path.resolve(projectDir));
}

/** Where a command acts: the project folder, its app, and the platform (URL and key) it talks to. */
export interface ProjectContext {
  root: string;
  app: string;
  target: ApiConfig;
}

/**
 * The one resolution of the project context, for the CLI and the extension (whose settings arrive through `env`, and
 * a workspace's own `strato.apiUrl` as `projectUrl`: the project's choice, like one from .env).
 * The Python package follows the same conventions (strato/_context.py; test/deploy/context.test.ts holds both to them).
 */
export async function resolveProjectContext(root: string, env: NodeJS.ProcessEnv = process.env, projectUrl?: string): Promise<ProjectContext> {
  const target = await resolveApiConfig({ projectDir: root, env, projectUrl });
  return { root: path.resolve(root), app: appNameFor(root, env), target };
}

/**
 * The context of a CLI command run in `cwd`: its project is the nearest folder at or above it with a project marker
 * (as the Python package finds it), so a subfolder acts on its project's app. Outside any project a command that
 * names its app by folder would act on whichever app has that folder's name (an undeploy in the wrong folder):
 * refused, unless STRATO_APP names the app.
 */
export async function commandContext(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<ProjectContext> {
  const root = projectRootAt(cwd);
  if (!root && !(env.STRATO_APP || '').trim())
    throw new UserError(
      `${path.resolve(cwd)} is not in a Strato project (none of ${PROJECT_MARKERS.join(', ')} is here or in a folder above): ` +
        'run this in the project folder (strato init NAME makes one), or set STRATO_APP to the app to act on',
    );
  return resolveProjectContext(root ?? cwd, env);
}

/** Checks the names before any work is done, so that a deploy does not build only to be refused at upload. */
export function checkNames(app: string, environment: string | undefined): void {
  if (!APP_OR_ENV_NAME.test(app)) {
    throw new UserError(
      `"${app}" cannot be an app name (it comes from the project directory): set STRATO_APP to a valid name (${APP_OR_ENV_NAME_RULE}), e.g. ` +
        `STRATO_APP=${suggestName(app) ?? 'my-app'}.`,
    );
  }
  if (environment !== undefined && !APP_OR_ENV_NAME.test(environment)) {
    throw new UserError(`--env "${environment}" is not a valid environment name: ${APP_OR_ENV_NAME_RULE}, e.g. staging.`);
  }
  if (environment === DEV_ENVIRONMENT)
    throw new UserError(`--env ${DEV_ENVIRONMENT} is strato dev's environment (its live- endpoints, removed when it stops): deploy to another, e.g. staging.`);
}

export type EnvironmentChoice = { existing: Environment } | { create: string };

/** Picks the environment to deploy to, or says which to create. */
export function chooseEnvironment(app: App | null, requested: string | undefined): EnvironmentChoice {
  if (requested) {
    const found = (app?.environments ?? []).find((e) => e.name === requested);
    return found ? { existing: found } : { create: requested };
  }
  const envs = deployable(app);
  if (envs.length === 0) return { create: DEFAULT_ENVIRONMENT };
  if (envs.length === 1) return { existing: envs[0] };
  throw new UserError(
    `app "${app!.name}" has ${envs.length} environments (${envs
      .map((e) => e.name)
      .sort()
      .join(', ')}): choose one with --env NAME.`,
  );
}

/**
 * The environment to read from (env get, undeploy): never created. `choose` says how the command names one, for the
 * sentence when the app has several.
 */
export function findEnvironment(app: App | null, appName: string, requested: string | undefined, choose = '--env NAME'): Environment {
  if (!app)
    throw new UserError(`app "${appName}" has not been deployed yet: run strato deploy first (the app name comes from the project directory, or STRATO_APP).`);
  const envs = deployable(app);
  if (requested) {
    const found = app.environments.find((e) => e.name === requested);
    if (!found) {
      const names = envs.map((e) => e.name);
      // A short or mistyped name (prod, prodution) most likely means one that exists, not a new one to deploy.
      const guess = names.find((n) => n.startsWith(requested)) ?? didYouMean(requested, names);
      throw new UserError(
        `app "${appName}" has no environment "${requested}"${names.length ? ` (it has ${names.join(', ')})` : ''}: ` +
          (guess
            ? `did you mean "${guess}"?`
            : requested === DEV_ENVIRONMENT
              ? 'it holds the endpoints of a running strato dev, and none runs (strato dev makes them).'
              : `nothing is deployed there (strato deploy --env ${requested} makes it).`),
      );
    }
    return found;
  }
  if (envs.length === 1) return envs[0];
  if (envs.length === 0) throw new UserError(`app "${appName}" has no environment: run strato deploy first.`);
  throw new UserError(
    `app "${appName}" has ${envs.length} environments (${envs
      .map((e) => e.name)
      .sort()
      .join(', ')}): choose one with ${choose}.`,
  );
}
