// What the views show, gathered per workspace folder: the project model (from the language server's index) and,
// when a platform is reachable, the app's environments with their endpoints from the control plane.
import * as vscode from 'vscode';
import { ControlPlaneClient } from '../../engine/src/api';
import type { ApiTarget } from '../../engine/src/api';
import { appNameFor } from '../../engine/src/deploy';
import { summarize } from '../../engine/src/deploy';
import { combine } from '../../engine/src/project';
import type { ProjectModel } from '../../engine/src/project';
import { codeNameOf, type EnvironmentInfo, type FolderModel } from './endpointTree';
import { effectiveEnv, passiveApiTarget } from './settings';

export interface FolderState extends FolderModel {
  folder: vscode.WorkspaceFolder;
  app: string;
  /** Undefined when no platform is reachable (the views then show the code only). */
  environments?: EnvironmentInfo[];
  /** Why the control plane could not be read, if it could not. */
  remoteError?: string;
  /** Why the platform settings cannot work (a key that cannot be sent, a URL without a key), if they cannot. */
  settingsError?: string;
}

/** The environments of an app with their endpoints (empty when the app was never deployed). */
export async function readEnvironments(target: ApiTarget, app: string): Promise<EnvironmentInfo[]> {
  const cp = new ControlPlaneClient(target);
  const found = await cp.findApp(app);
  if (!found) return [];
  const out: EnvironmentInfo[] = [];
  for (const e of found.environments) {
    const endpoints = (await cp.listEndpoints(e.id)).map((ep) => summarize(ep));
    out.push({ app, environment: e.name, endpoints: endpoints.map((x) => ({ name: x.name, type: x.type, url: x.url, id: x.id, routes: x.routes })) });
  }
  return out;
}

export interface Deployment {
  environment: string;
  endpointId: string;
  url: string;
}

/** Where an endpoint (by its name in the code) is deployed: every environment of the app, the dev server's included. */
export async function deploymentsOf(target: ApiTarget, app: string, endpoint: string): Promise<Deployment[]> {
  const out: Deployment[] = [];
  for (const e of await readEnvironments(target, app)) {
    const ep = e.endpoints.find((x) => codeNameOf(e.environment, x.name) === endpoint);
    if (ep?.id) out.push({ environment: e.environment, endpointId: ep.id, url: ep.url });
  }
  return out;
}

/** Where the views get a folder's project model: the language server's index (the one analysis, open documents included). */
export type ModelSource = (folder: vscode.WorkspaceFolder) => Promise<ProjectModel>;

/** Until the language server answers (or when it could not start) a folder shows no endpoint. */
export const noModel: ModelSource = async (folder) => combine(folder.uri.fsPath, []);

export async function loadFolder(folder: vscode.WorkspaceFolder, modelOf: ModelSource, target?: ApiTarget): Promise<FolderState> {
  const model = await modelOf(folder);
  const app = appNameFor(folder.uri.fsPath, effectiveEnv(folder.uri));
  const state: FolderState = { folder, name: folder.name, model, app };
  let t = target;
  try {
    t ??= await passiveApiTarget(folder.uri);
  } catch (e) {
    state.settingsError = (e as Error).message;
  }
  if (t) {
    try {
      state.environments = await readEnvironments(t, app);
    } catch (e) {
      state.remoteError = (e as Error).message;
    }
  }
  return state;
}

/** Every workspace folder with at least one endpoint, or the first folder when none has one. */
export async function loadWorkspace(modelOf: ModelSource): Promise<FolderState[]> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  const states = await Promise.all(folders.map((f) => loadFolder(f, modelOf)));
  const withEndpoints = states.filter((s) => s.model.endpoints.length > 0);
  return withEndpoints.length ? withEndpoints : states.slice(0, 1);
}
