// Pure logic of the environment quick pick: existing environments (the dev server's `live` one left out of
// deploys, and out of reads once it has no endpoint), a "new..." entry, which one is preselected, and the check of a typed name.
import { DEFAULT_ENVIRONMENT, DEV_ENVIRONMENT } from '../../engine/src/deploy';
import { APP_OR_ENV_NAME, APP_OR_ENV_NAME_RULE } from '../../engine/src/protocol';

export const NEW_ENVIRONMENT = '$(add) New environment...';

export interface EnvironmentPickItem {
  label: string;
  description?: string;
  /** The environment name; undefined for the "new..." entry. */
  environment?: string;
  picked?: boolean;
}

export interface ExistingEnvironment {
  name: string;
  endpoints?: number;
}

/** Items for deploy (`allowNew`) or for reading an environment (env get, undeploy, run). */
export function environmentItems(existing: readonly ExistingEnvironment[], o: { allowNew: boolean; forDeploy: boolean }): EnvironmentPickItem[] {
  // The dev server's `live` is never a deploy target, and once the dev server stopped (no endpoint left) nothing to read.
  const envs = existing.filter((e) => e.name !== DEV_ENVIRONMENT || (!o.forDeploy && e.endpoints !== 0)).sort((a, b) => a.name.localeCompare(b.name));
  const items: EnvironmentPickItem[] = envs.map((e) => ({
    label: e.name,
    environment: e.name,
    description: e.endpoints === undefined ? undefined : `${e.endpoints} endpoint(s)`,
  }));
  if (o.allowNew) {
    if (!envs.some((e) => e.name === DEFAULT_ENVIRONMENT)) items.unshift({ label: DEFAULT_ENVIRONMENT, environment: DEFAULT_ENVIRONMENT, description: 'new' });
    items.push({ label: NEW_ENVIRONMENT });
  }
  if (items.length && items[0].environment) items[0].picked = true;
  return items;
}

/** The environment to use without asking: the only candidate, when there is exactly one and nothing new is offered. */
export function onlyChoice(items: readonly EnvironmentPickItem[]): string | undefined {
  const named = items.filter((i) => i.environment);
  return named.length === 1 && items.length === 1 ? named[0].environment : undefined;
}

/** Input box validation of a new environment name; undefined when valid. */
export function checkEnvironmentName(name: string, existing: readonly ExistingEnvironment[]): string | undefined {
  const n = name.trim();
  if (!n) return 'type a name, e.g. staging';
  if (!APP_OR_ENV_NAME.test(n)) return APP_OR_ENV_NAME_RULE;
  if (n === DEV_ENVIRONMENT) return `"${DEV_ENVIRONMENT}" is the dev server's environment; choose another name`;
  if (existing.some((e) => e.name === n)) return `"${n}" exists already: pick it from the list`;
  return undefined;
}
