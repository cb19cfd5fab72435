// Where the extension's API calls go: the `strato.apiUrl` setting overrides STRATO_API_URL, and
// `strato.pythonPath` sets the interpreter builds use; otherwise the engine's own resolution (local platform).
import * as vscode from 'vscode';
import { resolveApiConfig, type ApiConfig } from '../../engine/src/api';
import { resolveProjectContext, type ProjectContext } from '../../engine/src/deploy';

/** The process environment with the extension's settings applied. */
export function effectiveEnv(folder?: vscode.Uri): NodeJS.ProcessEnv {
  const cfg = vscode.workspace.getConfiguration('strato', folder);
  const env = { ...process.env };
  const url = cfg.get<string>('apiUrl', '').trim();
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
  return resolveProjectContext(folder.fsPath, effectiveEnv(folder));
}

/** Base URL and key for the views: the same resolution as every action, but it never starts a platform. */
export function passiveApiTarget(folder: vscode.Uri): Promise<ApiConfig | undefined> {
  return resolveApiConfig({ projectDir: folder.fsPath, env: effectiveEnv(folder), start: false });
}
