// Where the extension's API calls go: the `strato.apiUrl` setting overrides STRATO_API_URL (a workspace value counts
// as the project's choice, so the user's key goes there only once trusted), and
// `strato.pythonPath` sets the interpreter builds use; otherwise the engine's own resolution (local platform).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkKeyDestination, readDotEnv, resolveApiConfig, type ApiConfig } from '../../engine/src/api';
import { resolveProjectContext, type ProjectContext } from '../../engine/src/deploy';
import { storedApiKey } from './secrets';

/** `strato.apiUrl` when a workspace (a cloned repository's .vscode/settings.json) sets it: the project's choice. */
export function workspaceApiUrl(folder?: vscode.Uri): string | undefined {
  const i = vscode.workspace.getConfiguration('strato', folder).inspect<string>('apiUrl');
  const url = (i?.workspaceFolderValue ?? i?.workspaceValue ?? '').trim();
  return url || undefined;
}

/**
 * The process environment with the extension's settings applied (a workspace apiUrl is passed apart: see apiTarget).
 * The key stored with "Strato: Set API Key" is the user's own, like STRATO_API_KEY of their environment: it fills
 * that variable only when neither the environment nor the project's .env sets a key, so those still win.
 */
export function effectiveEnv(folder?: vscode.Uri): NodeJS.ProcessEnv {
  const cfg = vscode.workspace.getConfiguration('strato', folder);
  const env = { ...process.env };
  const url = (cfg.inspect<string>('apiUrl')?.globalValue ?? '').trim();
  if (url) env.STRATO_API_URL = url;
  const python = cfg.get<string>('pythonPath', '').trim();
  if (python) env.STRATO_PYTHON = python;
  const stored = storedApiKey();
  if (stored && !env.STRATO_API_KEY && !(folder && readDotEnv(path.join(folder.fsPath, '.env')).STRATO_API_KEY)) env.STRATO_API_KEY = stored;
  return env;
}

/**
 * The environment of a `strato` CLI process the extension starts (dev server, preview, tasks): VS Code's executable
 * as Node, and the platform settings it resolved. A workspace apiUrl is checked against the trust rule first.
 */
export function cliProcessEnv(folder: vscode.WorkspaceFolder): Record<string, string> {
  const env = effectiveEnv(folder.uri);
  const vars: Record<string, string> = { ELECTRON_RUN_AS_NODE: '1' };
  for (const k of ['STRATO_API_URL', 'STRATO_API_KEY', 'STRATO_PYTHON', 'DOCKER_HOST']) if (env[k]) vars[k] = env[k]!;
  const projectUrl = workspaceApiUrl(folder.uri);
  if (projectUrl) {
    // The workspace chose this URL: the user's key goes there only once trusted (throws a UserError otherwise).
    checkKeyDestination(projectUrl, 'project', env.STRATO_API_KEY ? 'user' : 'project', env);
    vars.STRATO_API_URL = projectUrl;
  }
  return vars;
}

/** The bundled `strato` command (dist/cli.js beside this bundle): users of the extension have none on PATH. */
export function bundledCli(): string {
  return path.join(__dirname, 'cli.js');
}

/** STRATO_PYTHON as the extension host started with it: what a cleared `strato.pythonPath` gives back. */
const startedWithPython = process.env.STRATO_PYTHON;

/** Builds run in this process and read STRATO_PYTHON from it: keep it in step with the setting, cleared included. */
export function applyPythonSetting(): void {
  const python = vscode.workspace.getConfiguration('strato').get<string>('pythonPath', '').trim() || startedWithPython;
  if (python) process.env.STRATO_PYTHON = python;
  else delete process.env.STRATO_PYTHON;
}

/** Folder, app, base URL and key for an action (starts the local platform when no remote one is configured). */
export function projectContext(folder: vscode.Uri): Promise<ProjectContext> {
  return resolveProjectContext(folder.fsPath, effectiveEnv(folder), workspaceApiUrl(folder));
}

/** Base URL and key for the views: the same resolution as every action, but it never starts a platform. */
export function passiveApiTarget(folder: vscode.Uri): Promise<ApiConfig | undefined> {
  return resolveApiConfig({ projectDir: folder.fsPath, env: effectiveEnv(folder), projectUrl: workspaceApiUrl(folder), start: false });
}
