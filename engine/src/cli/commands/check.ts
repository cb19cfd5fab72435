// `strato check [--json]`: runs the Python rules and the orchestration YAML rules over the whole project, so a
// project's CI runs the same rules as the editor; exits 1 when there is any error.
import type { Command } from 'commander';
import path from 'node:path';

export function register(program: Command): void {
  program
    .command('check')
    .description('check the worker files and the orchestration YAML files (exit 1 on errors)')
    .option('--json', 'print the diagnostics as JSON')
    .action(async (opts: { json?: boolean }) => {
      const { loadProject, formatDiagnostic, projectRootAt, notAProject, noEndpointFound, projectsInside, MAX_WORKER_FILE_BYTES } =
        await import('../../project');
      const { UserError } = await import('../../util/errors');
      const { loadOrchestration } = await import('../../orchestration');
      const { red, yellow, green } = await import('../output');
      // A folder of orchestration YAML alone is checked too, so the folder is the project's when it is in one.
      const marked = projectRootAt(process.cwd());
      const root = marked ?? process.cwd();
      // A folder of several projects (a monorepo's CI at its top) is not one project: their names would collide.
      const inside = marked ? [] : projectsInside(root);
      if (inside.length > 1)
        throw new UserError(`${root} is not a Strato project and holds ${inside.length} projects (${inside.join(', ')}): run strato check in each of them`);
      const project = await loadProject(root);
      const yaml = loadOrchestration(root);
      const diagnostics = [...project.diagnostics, ...yaml.diagnostics];
      // Run in the wrong folder (a CI step's working directory), it would check nothing and pass; in a project whose
      // files are all left out or unread, it says so, with the warnings that name the unread ones.
      if (project.files.length + yaml.files.length === 0) {
        if (!marked) throw new UserError(notAProject(root, 'nothing was checked', 'strato check'));
        for (const d of diagnostics) process.stderr.write(`${yellow(formatDiagnostic(d))}\n`);
        throw new UserError(
          `nothing to check in ${root}: no Python file there is read for endpoints (the ignore rules leave out tests/, test_*.py, ` +
            `docs/ and what .gitignore names; a file over ${MAX_WORKER_FILE_BYTES / 1024 / 1024} MiB or holding a NUL byte is not read) and no orchestration YAML file is there`,
        );
      }
      // Python files and no endpoint (and no orchestration YAML, which is checked alone): build and deploy would refuse it.
      if (yaml.files.length === 0 && project.endpoints.length === 0) throw new UserError(noEndpointFound(path.basename(root)));
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
