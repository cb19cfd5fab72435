// Where the extension's API calls go: the `strato.apiUrl` setting overrides STRATO_API_URL (a workspace value counts
// as the project's choice, so the user's key goes there only once trusted), and
// `strato.pythonPath` sets the interpreter builds use; otherwise the engine's own resolution (local platform).
import * as vscode from 'vscode';
import { resolveApiConfig, type ApiConfig } from '../../engine/src/api';
import { resolveProjectContext, type ProjectContext } from '../../engine/src/deploy';

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

/** Folder, app, base URL and key for an action (starts the local platform when no remote one is configured). */
export function projectContext(folder: vscode.Uri): Promise<ProjectContext> {
  return resolveProjectContext(folder.fsPath, effectiveEnv(folder), workspaceApiUrl(folder));
}

/** Base URL and key for the views: the same resolution as every action, but it never starts a platform. */
export function passiveApiTarget(folder: vscode.Uri): Promise<ApiConfig | undefined> {
  return resolveApiConfig({ projectDir: folder.fsPath, env: effectiveEnv(folder), projectUrl: workspaceApiUrl(folder), start: false });
}
