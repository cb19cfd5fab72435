// `Strato: Show Environment` (env get): the endpoints of an environment with their URLs and routes, written to
// the Strato output channel; and the job details a click in the Jobs view shows.
import * as vscode from 'vscode';
import { getEnvironment, workersText, type EnvironmentSummary } from '../../engine/src/deploy';
import { UserError } from '../../engine/src/util';
import { existingEnvironments, pickEnvironment } from './environmentQuickPick';
import { projectFolder } from './folders';
import { jobReport } from './jobs';
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

export async function envGet(
  views: StratoViews,
  output: vscode.OutputChannel,
  arg?: string | { environment?: string; folder?: string },
): Promise<EnvironmentSummary> {
  const o = typeof arg === 'string' ? { environment: arg } : (arg ?? {});
  const folder = await projectFolder(views, o.folder);
  const { app, target } = await projectContext(folder.uri);
  const environment =
    o.environment ?? (await pickEnvironment(await existingEnvironments(target, app), { allowNew: false, forDeploy: false, title: `Environment of ${app}` }));
  const s = await getEnvironment(target, app, environment);
  output.appendLine(formatEnvironment(s));
  output.appendLine('');
  output.show(true);
  return s;
}

export function showJob(views: StratoViews, output: vscode.OutputChannel, id: string): string {
  const j = views.jobList.get(id);
  if (!j) throw new UserError(`job ${id} is not in this window's list any more.`);
  const text = jobReport(j);
  output.appendLine(text);
  output.appendLine('');
  output.show(true);
  return text;
}
