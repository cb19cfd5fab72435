// Which workspace folder (project) a command acts on: the one of a file or node the argument names, the only one,
// the one with endpoints, or the user's pick. Any argument is accepted (commandArgs.ts reads what it can).
import * as vscode from 'vscode';
import { UserError } from '../../engine/src/util';
import { folderHintOf } from './commandArgs';
import { Cancelled } from './errors';
import type { StratoViews } from './views';

export async function projectFolder(views: StratoViews, arg?: unknown): Promise<vscode.WorkspaceFolder> {
  const hint = folderHintOf(arg);
  if (hint) {
    const uri = /^[a-z][a-z0-9+.-]*:/i.test(hint) && !/^[a-z]:[\\/]/i.test(hint) ? vscode.Uri.parse(hint) : vscode.Uri.file(hint);
    const f = vscode.workspace.getWorkspaceFolder(uri);
    if (f) return f;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  if (folders.length === 0) throw new UserError('open a folder with a Strato project first (File > Open Folder).');
  if (folders.length === 1) return folders[0];
  const withEndpoints = views
    .state()
    .filter((s) => s.model.endpoints.length > 0)
    .map((s) => s.folder);
  if (withEndpoints.length === 1) return withEndpoints[0];
  if (active) {
    const f = vscode.workspace.getWorkspaceFolder(active);
    if (f) return f;
  }
  const pick = await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Which project?' });
  if (!pick) throw new Cancelled('no project chosen');
  return pick;
}
