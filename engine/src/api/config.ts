// Where clients send requests and with which key. Base URL: STRATO_API_URL, else the local platform (started
// on demand). Key: STRATO_API_KEY from the environment, else from the project's .env, else (local platform
// only) its key file. A user's key goes to a project's URL only when trusted (./trust.ts).
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../util/errors';
import { parseServerUrl } from '../util/hostUrl';
import { daemonStatus, ensureLocalPlatform } from './localPlatform';
import { DEFAULT_PORT, defaultPlatformDir, readKeyFile } from '../protocol/layout';
import type { ApiTarget } from './http';
import { checkKeyDestination, type SettingSource } from './trust';

export interface ResolveOptions {
  /** Directory whose .env is read (default: the current directory). */
  projectDir?: string;
  env?: NodeJS.ProcessEnv;
  /** A URL the project chose outside .env (the extension's workspace settings): trusted like one from .env. */
  projectUrl?: string;
}

export interface ApiConfig extends ApiTarget {
  /** Which platform: one named by STRATO_API_URL, or the local one. */
  source: 'STRATO_API_URL' | 'local';
}

/** KEY=VALUE lines of a .env file (quotes stripped, `export ` allowed, comments ignored). */
export function readDotEnv(file: string): Record<string, string> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(raw);
    if (!m) continue;
    let v = m[2];
    // A quoted value ends at its closing quote; a comment may follow it (`KEY="value"  # note`).
    const quoted = /^(['"])(.*?)\1(?:\s+#.*)?$/.exec(v);
    if (quoted) v = quoted[2];
    else v = v.replace(/\s+#.*$/, '');
    out[m[1]] = v;
  }
  return out;
}

/**
 * Why a key cannot go in an HTTP header (a newline or another control character, a letter outside ASCII: a key pasted
 * with its line end, or the wrong text), or null. Said as such: Node refuses the header before any request.
 */
export function unsendableKey(key: string, where: string): string | null {
  const at = [...key].findIndex((c) => c.charCodeAt(0) < 0x21 || c.charCodeAt(0) > 0x7e);
  if (at < 0) return null;
  const c = [...key][at];
  const what =
    c === '\n' || c === '\r' ? 'a line break' : c === ' ' || c === '\t' ? 'a space' : c.charCodeAt(0) < 0x20 ? 'a control character' : `"${c}" (not ASCII)`;
  return `${where} holds ${what} at character ${at + 1}, which an API key never has: copy the key again (strato keys create prints one)`;
}

/**
 * The platform URL the settings name (an editor's project URL, STRATO_API_URL, else the project's .env), or '' when
 * none does and the local background platform is meant.
 */
export function namedApiUrl(o: Pick<ResolveOptions, 'projectUrl' | 'projectDir' | 'env'> = {}, dotEnv?: Record<string, string>): string {
  const env = o.env ?? process.env;
  dotEnv ??= readDotEnv(path.join(o.projectDir ?? process.cwd(), '.env'));
  return (o.projectUrl || env.STRATO_API_URL || dotEnv.STRATO_API_URL || '').trim().replace(/\/+$/, '');
}

/**
 * Base URL and key: STRATO_API_URL (environment, else the project's .env), else the local platform; the key from
 * STRATO_API_KEY (environment, else .env), else the local platform's key file. A setting that cannot work (a key that
 * cannot be sent, a URL without a key or that is not one, the user's key bound for a URL they have not trusted) is a
 * UserError saying so. With `start: false` (the extension's views, which must never start anything) the local platform
 * is only read, and the answer is undefined when it is not running.
 */
export async function resolveApiConfig(o: ResolveOptions & { start: false }): Promise<ApiConfig | undefined>;
export async function resolveApiConfig(o?: ResolveOptions & { start?: true }): Promise<ApiConfig>;
export async function resolveApiConfig(o: ResolveOptions & { start?: boolean } = {}): Promise<ApiConfig | undefined> {
  const env = o.env ?? process.env;
  const dotEnv = readDotEnv(path.join(o.projectDir ?? process.cwd(), '.env'));
  const explicitKey = env.STRATO_API_KEY || dotEnv.STRATO_API_KEY || undefined;
  const keySource: SettingSource = env.STRATO_API_KEY ? 'user' : 'project';
  const keyProblem =
    explicitKey === undefined ? null : unsendableKey(explicitKey, keySource === 'user' ? 'STRATO_API_KEY' : "STRATO_API_KEY in the project's .env");
  if (keyProblem) throw new UserError(keyProblem);
  const urlSource: SettingSource = o.projectUrl || !env.STRATO_API_URL ? 'project' : 'user';
  const remote = namedApiUrl(o, dotEnv);
  if (remote) {
    const parsed = parseServerUrl(remote, 'STRATO_API_URL', `http://127.0.0.1:${DEFAULT_PORT}`);
    const problem =
      'problem' in parsed
        ? parsed.problem
        : !explicitKey
          ? `STRATO_API_URL is set (${remote}) but STRATO_API_KEY is not; set it in the environment or in .env (in VS Code: Strato: Set API Key)`
          : null;
    if (problem) throw new UserError(problem);
    checkKeyDestination(remote, urlSource, keySource, env);
    return { baseUrl: remote, apiKey: explicitKey!, source: 'STRATO_API_URL' };
  }
  const dataDir = defaultPlatformDir(env);
  if (o.start === false) {
    const s = await daemonStatus(dataDir).catch(() => undefined);
    const apiKey = s?.running && s.state ? (explicitKey ?? readKeyFile(s.keyFile)) : undefined;
    return s?.state && apiKey ? { baseUrl: s.state.url, apiKey, source: 'local' } : undefined;
  }
  const local = await ensureLocalPlatform(dataDir);
  const apiKey = explicitKey ?? readKeyFile(local.keyFile);
  if (!apiKey) throw new UserError(`the local platform has no key file at ${local.keyFile}; restart it with \`strato platform start\``);
  return { baseUrl: local.url, apiKey, source: 'local' };
}
