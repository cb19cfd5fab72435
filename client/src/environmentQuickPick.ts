// The environment quick pick (vscode side of environmentPick.ts): existing environments of the app, and for
// deploys a "new..." entry that asks for a name.
import * as vscode from 'vscode';
import type { ApiTarget } from '../../engine/src/api';
import { UserError } from '../../engine/src/util';
import { Cancelled } from './errors';
import { checkEnvironmentName, environmentItems, onlyChoice, type ExistingEnvironment } from './environmentPick';
import { readEnvironments } from './workspaceState';

export async function existingEnvironments(target: ApiTarget, app: string): Promise<ExistingEnvironment[]> {
  return (await readEnvironments(target, app)).map((e) => ({ name: e.environment, endpoints: e.endpoints.length }));
}

/** Asks for an environment; throws Cancelled when the user dismisses the pick. */
export async function pickEnvironment(existing: ExistingEnvironment[], o: { allowNew: boolean; forDeploy: boolean; title: string }): Promise<string> {
  const items = environmentItems(existing, o);
  if (items.length === 0) throw new UserError('this app has no environment yet: run Strato: Deploy first.');
  const only = onlyChoice(items);
  if (only) return only;
  const picked = await vscode.window.showQuickPick(items, { title: o.title, placeHolder: 'Environment' });
  if (!picked) throw new Cancelled('no environment chosen');
  if (picked.environment) return picked.environment;
  const name = await vscode.window.showInputBox({
    title: 'New environment',
    prompt: 'Name of the environment to create',
    validateInput: (v) => checkEnvironmentName(v, existing),
  });
  if (!name) throw new Cancelled('no environment name given');
  return name.trim();
}
