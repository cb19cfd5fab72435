// `strato build [--exclude a,b] [--keep-build]`: packages the project into .strato/ and prints a summary.
import type { Command } from 'commander';
import path from 'node:path';
import { Progress, bold, green, yellow } from '../output';

export function parseList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function register(program: Command): void {
  program
    .command('build')
    .description('package the endpoints, their dependencies and the manifest into .strato/artifact.tar.gz')
    .option('--exclude <packages>', 'comma-separated packages not to install (besides torch, torchvision, torchaudio, numpy, triton)')
    .option('--keep-build', 'keep the work folder .strato/.build/')
    .action(async (opts: { exclude?: string; keepBuild?: boolean }) => {
      const [{ buildProject, formatSize, secretsLine }, { formatDiagnostic, projectRootAt }] = await Promise.all([
        import('../../build'),
        import('../../project'),
      ]);
      const progress = new Progress();
      try {
        const r = await buildProject(projectRootAt(process.cwd()) ?? process.cwd(), {
          exclude: parseList(opts.exclude),
          keepBuild: opts.keepBuild,
          onProgress: (m) => progress.update(m),
          onWarning: (d) => {
            progress.done();
            process.stderr.write(`${yellow(formatDiagnostic(d))}\n`);
          },
        });
        progress.done();
        const eps = Object.keys(r.manifest.resources).length;
        process.stdout.write(
          `${green('built')} ${bold(r.projectName)}  ${eps} endpoint${eps === 1 ? '' : 's'}, ${r.files.length} files, ${r.dependencies.length} deps, ` +
            `${formatSize(r.sizeBytes)} in ${Math.round(r.durationMs)} ms -> ${path.relative(process.cwd(), r.artifactPath)}\n`,
        );
        if (r.excluded.length) process.stdout.write(`  not installed (in the base image or --exclude): ${r.excluded.join(', ')}\n`);
        if (r.secretsLeftOut.length) process.stdout.write(`  ${secretsLine(r.secretsLeftOut)}\n`);
      } finally {
        progress.done();
      }
    });
}
