// The names of apps and environments: what the control plane accepts, what deploy checks before it builds, and
// what the extension's input box allows. One pattern and one sentence for all three.
import { quoted } from '../util/errors';

/** The environment a deploy makes when the app has none. */
export const DEFAULT_ENVIRONMENT = 'production';
/** The dev server's environment (live- endpoints): only used when named explicitly. */
export const DEV_ENVIRONMENT = 'live';
/** The dev server names each endpoint `live-<name>` in that environment. */
export const LIVE_PREFIX = 'live-';

export const APP_OR_ENV_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

/** What a valid name looks like, as the end of an error message. */
export const APP_OR_ENV_NAME_RULE = "use 1-63 letters, digits, '-', '_' or '.', starting with a letter or digit";

/** Why `name` cannot be a `kind` name (app, environment, key), quoting it, or null when it can. */
export function nameProblem(kind: string, name: string): string | null {
  return APP_OR_ENV_NAME.test(name) ? null : `${kind} name ${quoted(name)} is not valid: ${APP_OR_ENV_NAME_RULE}`;
}

/** A valid name close to `name` (for suggestions), or undefined when nothing is left of it. */
export function suggestName(name: string): string | undefined {
  const s = name
    .normalize('NFKD') // "ünï" is "uni" with marks: the letters stay, the marks go
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 63);
  return s && APP_OR_ENV_NAME.test(s) ? s : undefined;
}
