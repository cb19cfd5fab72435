// Where the extension's API calls go: the `strato.apiUrl` setting overrides STRATO_API_URL (a workspace value counts
// as the project's choice, so the user's key goes there only once trusted), and
// `strato.pythonPath` sets the interpreter builds use; otherwise the engine's own resolution (local platform).
import * as vscode from 'vscode';
import { resolveApiConfig, type ApiConfig } from '../../engine/src/api/config';
import { daemonStatus } from '../../engine/src/platform/daemon';
import { defaultPlatformDir, readKeyFile } from '../../engine/src/platform/paths';

/** `strato.apiUrl` when a workspace (a cloned repository's .vscode/settings.json) sets it: the project's choice. */
export function workspaceApiUrl(folder?: vscode.Uri): string | undefined {
  const i = vscode.workspace.getConfiguration('strato', folder).inspect<string>('apiUrl');
  const url = (i?.workspaceFolderValue ?? i?.workspaceValue ?? '').trim();
  return url || undefined;
}

/** The process environment with the extension's settings applied (a workspace apiUrl is passed apart: see apiTarget). */
export function effectiveEnv(folder?: vscode.Uri): NodeJS.ProcessEnv {
  const cfg = vscode.workspace.getConfiguration('strato', folder);
  const env = { ...process.env };
  const url = (cfg.inspect<string>('apiUrl')?.globalValue ?? '').trim();
  if (url) env.STRATO_API_URL = url;
  const python = cfg.get<string>('pythonPath', '').trim();
  if (python) env.STRATO_PYTHON = python;
  return env;
}

/** Builds run in this process and read STRATO_PYTHON from it: keep it in step with the setting. */
export function applyPythonSetting(): void {
  const python = vscode.workspace.getConfiguration('strato').get<string>('pythonPath', '').trim();
  if (python) process.env.STRATO_PYTHON = python;
}

/** Base URL and key for an action (starts the local platform when no remote one is configured). */
export function apiTarget(folder: vscode.Uri): Promise<ApiConfig> {
  return resolveApiConfig({ projectDir: folder.fsPath, env: effectiveEnv(folder), projectUrl: workspaceApiUrl(folder) });
}

/** Base URL and key for the views: never starts a platform; undefined when none is configured or running. */
export async function passiveApiTarget(folder: vscode.Uri): Promise<ApiConfig | undefined> {
  const env = effectiveEnv(folder);
  const projectUrl = workspaceApiUrl(folder);
  if (env.STRATO_API_URL || projectUrl) return resolveApiConfig({ projectDir: folder.fsPath, env, projectUrl }).catch(() => undefined);
  const s = await daemonStatus(defaultPlatformDir(env)).catch(() => undefined);
  if (!s?.running || !s.state) return undefined;
  const apiKey = env.STRATO_API_KEY || readKeyFile(s.keyFile);
  return apiKey ? { baseUrl: s.state.url, apiKey, source: 'local' } : undefined;
}
