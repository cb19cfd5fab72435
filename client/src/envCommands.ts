// `Strato: Show Environment` (env get): the endpoints of an environment with their URLs and routes, written to
// the Strato Results output channel.
import * as vscode from 'vscode';
import { getEnvironment, workersText, type EnvironmentSummary } from '../../engine/src/deploy';
import { environmentItemOf } from './commandArgs';
import { existingEnvironments, pickEnvironment } from './environmentQuickPick';
import { projectFolder } from './folders';
import { projectContext } from './settings';
import type { StratoViews } from './views';

export function formatEnvironment(s: EnvironmentSummary): string {
  const lines = [`${s.app} / ${s.environment}  (build ${s.buildId ?? 'none'})`];
  for (const e of s.endpoints) {
    lines.push(`  ${e.name}  [${e.type}]  ${e.url}`);
    for (const r of e.routes) lines.push(`      ${r.method.padEnd(6)} ${e.url}${r.path}  -> ${r.function}`);
    if (e.workers) lines.push(`      ${workersText(e.workers)}`);
  }
  if (s.endpoints.length === 0) lines.push('  (no endpoint)');
  return lines.join('\n');
}

/** `arg`: an environment name, `{environment, folder}`, an environment's item, or nothing (a pick). */
export async function envGet(views: StratoViews, output: vscode.OutputChannel, arg?: unknown): Promise<EnvironmentSummary> {
  const folder = await projectFolder(views, arg);
  const { app, target } = await projectContext(folder.uri);
  const environment =
    environmentItemOf(arg) ??
    (await pickEnvironment(await existingEnvironments(target, app), { allowNew: false, forDeploy: false, title: `Environment of ${app}` }));
  const s = await getEnvironment(target, app, environment);
  output.appendLine(formatEnvironment(s));
  output.appendLine('');
  output.show(true);
  return s;
}
