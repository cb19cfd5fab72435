// `strato init`: writes the project template into a new or existing folder. Touches only local files.
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { APP_OR_ENV_NAME, APP_OR_ENV_NAME_RULE, suggestName } from '../protocol/names';
import { UserError } from '../util/errors';
import { templateFiles } from './template';

export interface InitPlan {
  dir: string;
  projectName: string;
  files: string[];
  /** Files that exist already and would be overwritten. */
  conflicts: string[];
}

export function planInit(target: string, cwd = process.cwd()): InitPlan {
  if (!target || !target.trim()) throw new UserError('PROJECT_NAME is required: strato init my-project (or . for the current directory).');
  const dir = path.resolve(cwd, target);
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new UserError(`${target} exists and is not a directory: choose another project name.`);
  const projectName = path.basename(dir);
  if (!APP_OR_ENV_NAME.test(projectName)) {
    const suggestion = suggestName(projectName)?.replace(/-+$/, '') || 'my-project';
    throw new UserError(`"${projectName}" cannot be a project name (deploy names the app after it): ${APP_OR_ENV_NAME_RULE}, e.g. strato init ${suggestion}.`);
  }
  const files = Object.keys(templateFiles(projectName));
  const conflicts = files.filter((f) => existsSync(path.join(dir, f)));
  return { dir, projectName, files, conflicts };
}

export function writeInit(plan: InitPlan): string[] {
  mkdirSync(plan.dir, { recursive: true });
  const contents = templateFiles(plan.projectName);
  for (const f of plan.files) writeFileSync(path.join(plan.dir, f), contents[f]);
  return plan.files;
}
