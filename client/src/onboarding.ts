// "Strato: New Project": the project template written by the `strato` command bundled in the extension (dist/cli.js,
// run by VS Code's own Node), since users of the extension have no `strato` on their PATH; then the folder opens.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { PROJECT_MARKERS } from '../../engine/src/project';
import { APP_OR_ENV_NAME, APP_OR_ENV_NAME_RULE } from '../../engine/src/protocol';
import { UserError } from '../../engine/src/util';
import { bundledCli } from './settings';

/** Options of `strato.newProject` (scripts and tests): where, what name, and whether to open it (default: ask). */
export interface NewProjectOptions {
  parent?: string;
  name?: string;
  open?: boolean;
}

function runInit(parent: string, name: string, force: boolean): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // VS Code's executable runs as Node with ELECTRON_RUN_AS_NODE (in code-server it is Node already).
    const env = { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
    execFile(process.execPath, [bundledCli(), 'init', name, ...(force ? ['--force'] : [])], { cwd: parent, env, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const isProject = (dir: string) => PROJECT_MARKERS.some((m) => existsSync(path.join(dir, m)));

/** Where the project goes: this (empty) workspace folder, or a new folder under one the user picks. */
async function askPlace(o: NewProjectOptions): Promise<{ parent: string; name: string } | undefined> {
  if (o.parent && o.name) return { parent: o.parent, name: o.name };
  const here = (vscode.workspace.workspaceFolders ?? []).find((f) => f.uri.scheme === 'file' && !isProject(f.uri.fsPath));
  if (here && !o.parent) {
    const choice = await vscode.window.showQuickPick(
      [
        { label: `$(folder) In this folder: ${here.name}`, here: true },
        { label: '$(new-folder) In a new folder...', here: false },
      ],
      { title: 'New Strato project' },
    );
    if (!choice) return undefined;
    if (choice.here) return { parent: path.dirname(here.uri.fsPath), name: path.basename(here.uri.fsPath) };
  }
  let parent = o.parent;
  if (!parent) {
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      openLabel: 'Create the project here',
      title: 'New Strato project: where to create its folder',
    });
    if (!picked?.length) return undefined;
    parent = picked[0].fsPath;
  }
  const name =
    o.name ??
    (await vscode.window.showInputBox({
      title: 'New Strato project',
      prompt: `Project name: a folder of that name is created in ${parent}; deploy names the app after it`,
      value: 'my-endpoints',
      validateInput: (v) => (APP_OR_ENV_NAME.test(v.trim()) ? undefined : APP_OR_ENV_NAME_RULE),
    }));
  return name ? { parent, name: name.trim() } : undefined;
}

/** Returns the new project's folder; undefined when the user cancelled (which is no error). */
export async function newProject(o: NewProjectOptions = {}): Promise<string | undefined> {
  const place = await askPlace(o);
  if (!place) return undefined;
  const dir = path.join(place.parent, place.name);
  const title = `Strato: creating ${place.name}`;
  let r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () => runInit(place.parent, place.name, false));
  if (r.code !== 0 && /--force/.test(r.stderr) && /exist/.test(r.stderr)) {
    const listed = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('  '))
      .map((l) => l.trim());
    const yes = await vscode.window.showWarningMessage(
      `${dir} has files the template would overwrite: ${listed.join(', ')}.`,
      { modal: true, detail: 'Overwrite them with the template?' },
      'Overwrite',
    );
    if (yes !== 'Overwrite') return undefined;
    r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () => runInit(place.parent, place.name, true));
  }
  if (r.code !== 0) throw new UserError(`strato init ${place.name} failed: ${r.stderr.trim().replace(/^error: /, '') || `exit code ${r.code}`}`);
  const inWorkspace = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(dir))?.uri.fsPath === dir;
  if (o.open === false || inWorkspace) {
    if (inWorkspace) void vscode.window.showInformationMessage(`Strato: created project ${place.name}. Open a *_worker.py file to see its endpoints.`);
    return dir;
  }
  const open = o.open ? 'Open' : await vscode.window.showInformationMessage(`Strato: created project ${place.name} in ${dir}.`, 'Open', 'Add to Workspace');
  if (open === 'Open') await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(dir));
  else if (open === 'Add to Workspace')
    vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders?.length ?? 0, 0, { uri: vscode.Uri.file(dir), name: place.name });
  return dir;
}
