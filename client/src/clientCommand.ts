// `Strato: Generate TypeScript Client` on an environment of the Environments view (or from the palette): the typed
// client of that environment, typed from the project model the language server holds, saved where the user says.
import * as vscode from 'vscode';
import type { WrittenClient } from '../../engine/src/clientgen';
import { getEnvironment } from '../../engine/src/deploy';
import { environmentItemOf, optionOf } from './commandArgs';
import { environmentOfNode, type TreeNode } from './endpointTree';
import { existingEnvironments, pickEnvironment } from './environmentQuickPick';
import { Cancelled } from './errors';
import { projectFolder } from './folders';
import { heavy } from './heavy';
import { projectContext } from './settings';
import type { StratoViews } from './views';

interface GenerateOptions {
  environment?: string;
  folder?: string;
  /** Where to write the module, without asking. */
  file?: string;
}

/** An environment's node (the view's context menu), options (scripts and tests), or both. */
export type GenerateClientArg = TreeNode | GenerateOptions | (TreeNode & GenerateOptions) | undefined;

export async function generateClient(views: StratoViews, output: vscode.OutputChannel, arg: GenerateClientArg | unknown): Promise<WrittenClient> {
  const node = arg && typeof arg === 'object' && 'id' in arg && typeof arg.id === 'string' ? environmentOfNode({ id: arg.id }) : undefined;
  const folder = await projectFolder(views, arg);
  const { app, target } = await projectContext(folder.uri);
  const environment =
    node?.environment ??
    environmentItemOf(arg) ??
    (await pickEnvironment(await existingEnvironments(target, app), { allowNew: false, forDeploy: false, title: `TypeScript client of ${app}` }));
  const { writeClient, clientFileName } = heavy();
  const file =
    optionOf(arg, 'file') ??
    (
      await vscode.window.showSaveDialog({
        defaultUri: vscode.Uri.joinPath(folder.uri, clientFileName({ app, environment }, 'ts')),
        filters: { TypeScript: ['ts'] },
        title: `Save the TypeScript client of ${app}/${environment}`,
      })
    )?.fsPath;
  if (!file) throw new Cancelled('no file chosen for the client');
  const written = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Strato: generating the TypeScript client of ${app}/${environment}` },
    async () => {
      const [summary, state] = await Promise.all([getEnvironment(target, app, environment), views.loadFolder(folder)]);
      return writeClient(state.model, summary, 'ts', { file });
    },
  );
  output.appendLine(`wrote ${written.file}: ${written.functions} queue-based function(s), ${written.routes} route(s) of ${app}/${environment}`);
  for (const w of written.warnings) output.appendLine(`  warning: ${w}`);
  const note = written.warnings.length ? ` ${written.warnings.length} warning(s) in the Strato Results output.` : '';
  void vscode.window.showInformationMessage(`Wrote the TypeScript client of ${app}/${environment}.${note}`, 'Open').then(async (a) => {
    if (a) await vscode.window.showTextDocument(vscode.Uri.file(written.file));
  });
  return written;
}
