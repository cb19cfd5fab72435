// `strato init PROJECT_NAME [--force]`: the project template, asking before overwriting anything.
import type { Command } from 'commander';
import path from 'node:path';
import { UserError } from '../../util/errors';
import { bold, confirm, green, yellow } from '../output';

export function register(program: Command): void {
  program
    .command('init')
    .description('create a project from the template (. for the current directory)')
    .argument('<PROJECT_NAME>', 'folder to create, or . for the current directory')
    .option('-f, --force', 'overwrite existing files without asking')
    .action(async (name: string, opts: { force?: boolean }) => {
      const { planInit, writeInit } = await import('../../init');
      const plan = planInit(name);
      if (plan.conflicts.length && !opts.force) {
        process.stderr.write(`${yellow('These files exist and would be overwritten:')}\n${plan.conflicts.map((f) => `  ${f}`).join('\n')}\n`);
        if (!process.stdin.isTTY) {
          throw new UserError('not overwriting existing files without a terminal to ask: run again with --force to overwrite them.', 1);
        }
        if (!(await confirm('Overwrite them?', false)))
          throw new UserError('nothing written: run again with --force to overwrite, or choose another folder.', 1);
      }
      const written = writeInit(plan);
      const rel = path.relative(process.cwd(), plan.dir) || '.';
      // Inside another project, its files are that project's too (its check, build and deploy read every folder).
      const { projectRootAt } = await import('../../project/ignore');
      const enclosing = projectRootAt(path.dirname(plan.dir));
      if (enclosing)
        process.stderr.write(
          `${yellow('note')}: ${rel} is inside the project at ${enclosing}, whose check, build and deploy read it too; ` +
            `create it outside that folder unless it belongs to that project\n`,
        );
      process.stdout.write(`${green('created')} ${bold(plan.projectName)} in ${rel}: ${written.join(', ')}\n\n`);
      process.stdout.write(
        `Next:\n${rel !== '.' ? `  cd ${rel}\n` : ''}  strato dev      run the endpoints locally (http://localhost:8888/docs)\n  strato build    ` +
          `package them\n  strato deploy   deploy them\n`,
      );
    });
}
