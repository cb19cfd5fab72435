// `strato check [--json]`: runs the Python rules and the orchestration YAML rules over the whole project, so a
// project's CI runs the same rules as the editor; exits 1 when there is any error.
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('check')
    .description('check the worker files and the orchestration YAML files (exit 1 on errors)')
    .option('--json', 'print the diagnostics as JSON')
    .action(async (opts: { json?: boolean }) => {
      const { loadProject, formatDiagnostic, projectRootAt, notAProject } = await import('../../project');
      const { loadOrchestration } = await import('../../orchestration');
      const { red, yellow, green } = await import('../output');
      // A folder of orchestration YAML alone is checked too, so the folder is the project's when it is in one.
      const root = projectRootAt(process.cwd()) ?? process.cwd();
      const project = await loadProject(root);
      const yaml = loadOrchestration(root);
      // Run in the wrong folder (a CI step's working directory), it would check nothing and pass.
      if (project.files.length + yaml.files.length === 0)
        throw new (await import('../../util/errors')).UserError(notAProject(root, 'nothing was checked', 'strato check'));
      const diagnostics = [...project.diagnostics, ...yaml.diagnostics];
      const errors = diagnostics.filter((d) => d.severity === 'error').length;
      if (opts.json) {
        process.stdout.write(
          `${JSON.stringify({ errors, warnings: diagnostics.length - errors, files: project.files.length + yaml.files.length, diagnostics }, null, 2)}\n`,
        );
      } else {
        for (const d of diagnostics) process.stdout.write(`${(d.severity === 'error' ? red : yellow)(formatDiagnostic(d))}\n`);
        const summary =
          `${project.files.length} Python and ${yaml.files.length} YAML files checked: ${errors} error${errors === 1 ? '' : 's'}, ` +
          `${diagnostics.length - errors} warning${diagnostics.length - errors === 1 ? '' : 's'}`;
        process.stdout.write(`${errors ? red(summary) : green(summary)}\n`);
      }
      if (errors) process.exitCode = 1;
    });
}
