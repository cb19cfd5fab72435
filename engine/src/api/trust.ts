// Which platform URLs may receive the user's own key. A key from the user's environment is sent only to a URL
// from the user's environment, the local platform, or a URL the user confirmed with `strato trust URL`.
import fs from 'node:fs';
import path from 'node:path';
import { userDataRoot } from '../protocol/layout';
import { UserError } from '../util/errors';
import { parseServerUrl } from '../util/hostUrl';

/** Where a setting came from: the user (shell, user settings) or the project (its .env, workspace settings). */
export type SettingSource = 'user' | 'project';

/** The file listing the URLs the user confirmed, one origin a line. */
export function trustFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(userDataRoot(env), 'trusted-urls');
}

/** scheme://host[:port] of a URL, the unit of trust (a path cannot make another server trusted). */
export function originOf(url: string): string {
  const parsed = parseServerUrl(url, 'the URL', 'https://host[:port]');
  if ('problem' in parsed) throw new UserError(parsed.problem);
  return parsed.origin.toLowerCase();
}

export function trustedOrigins(env: NodeJS.ProcessEnv = process.env): Set<string> {
  try {
    return new Set(
      fs
        .readFileSync(trustFile(env), 'utf8')
        .split(/\r?\n/)
        .map((l) => l.trim().toLowerCase())
        .filter(Boolean),
    );
  } catch {
    return new Set();
  }
}

export function trustUrl(url: string, env: NodeJS.ProcessEnv = process.env): string {
  const origin = originOf(url);
  const all = trustedOrigins(env);
  all.add(origin);
  fs.mkdirSync(path.dirname(trustFile(env)), { recursive: true });
  fs.writeFileSync(trustFile(env), `${[...all].sort().join('\n')}\n`, { mode: 0o600 });
  return origin;
}

/**
 * Refuses to send a user key to a URL the project chose, unless the user trusted that URL. A project key may go
 * anywhere (it came with the project), and a user URL may receive any key (the user chose it).
 */
export function checkKeyDestination(url: string, urlSource: SettingSource, keySource: SettingSource, env: NodeJS.ProcessEnv = process.env): void {
  if (keySource === 'project' || urlSource === 'user') return;
  const origin = originOf(url);
  if (trustedOrigins(env).has(origin)) return;
  throw new UserError(
    `STRATO_API_URL ${origin} comes from the project (.env or workspace settings), and your STRATO_API_KEY is not sent to a server the project chose: ` +
      `if you trust it, run strato trust ${origin} (or set STRATO_API_URL in your own environment).`,
  );
}
