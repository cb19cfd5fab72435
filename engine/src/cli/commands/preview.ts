// `strato preview image` and the terminal side of `strato deploy --preview`: timed steps, the endpoints grouped by
// type with sample calls, then waiting for Ctrl+C or SIGTERM, which removes the containers and the network.
import type { Command } from 'commander';
import { printEndpoints } from '../endpointListing';
import { Progress, bold, dim, green, red, yellow } from '../output';
import { onStopSignal } from '../signals';
import { checkedPythonExecutable } from '../../util/paths';

export interface PreviewFlags {
  env?: string;
  exclude?: string;
  cpuImage?: string;
  gpuImage?: string;
}

export async function runPreview(opts: PreviewFlags): Promise<void> {
  const { startPreview } = await import('../../preview');
  const { sampleCall } = await import('../../deploy/samples');
  const { formatDiagnostic, projectRootAt } = await import('../../project');
  const { parseList } = await import('./build');
  const { UserError } = await import('../../util/errors');
  const root = projectRootAt(process.cwd()) ?? process.cwd();
  const progress = new Progress();
  // Ctrl+C during the start still cleans up: startPreview's own failure path removes what was made.
  let interrupted = false;
  const onSignalDuringStart = () => {
    interrupted = true;
    progress.update('stopping after the current step...');
  };
  const offDuringStart = onStopSignal(onSignalDuringStart);
  const p = await startPreview(root, {
    env: opts.env,
    exclude: parseList(opts.exclude),
    cpuImage: opts.cpuImage,
    gpuImage: opts.gpuImage,
    onProgress: (m) => progress.update(m),
    cancelled: () => interrupted,
    onWarning: (d) => {
      progress.done();
      process.stderr.write(`${yellow(formatDiagnostic(d))}\n`);
    },
    onStep: (step, phase, detail, ms) => {
      if (interrupted) throw new UserError('the preview was stopped before it was up; its containers and network are removed.', 130);
      if (phase === 'start') progress.update(`${step}...`);
      else {
        progress.done();
        process.stdout.write(`${green('✓')} ${step.padEnd(10)} ${(detail ?? '').padEnd(58)} ${dim(`${Math.round(ms ?? 0)} ms`)}\n`);
      }
    },
  }).finally(offDuringStart);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\n${dim(`${signal}: removing the preview's containers and network...`)}\n`);
    void p.stop().then(
      () => process.exit(0),
      (e: Error) => {
        process.stderr.write(`error: the preview could not be removed whole (${e.message}); the next preview removes what is left\n`);
        process.exit(1);
      },
    );
  };
  onStopSignal((signal) => stop(signal === 'SIGINT' ? 'Ctrl+C' : signal));
  if (interrupted) return stop('Ctrl+C');

  const specs = new Map(p.buildResult.model.endpoints.map((e) => [e.name, e]));
  process.stdout.write(`\nPreview of ${bold(p.app)} (${p.environment}) in containers on network ${bold(p.network)}; the platform in front at ${p.url}\n`);
  printEndpoints(p.endpoints, { sample: (e) => sampleCall(e, specs.get(e.name)), note: (e) => dim(`[${p.images.get(e.name)}]`) });
  if (p.gpuNote) process.stdout.write(`\n${yellow(p.gpuNote)}\n`);
  process.stdout.write(`\n${dim(`export STRATO_API_KEY=${p.apiKey}  (the samples use it)`)}\n`);
  for (const pr of p.problems) process.stderr.write(`${red('error')}: ${pr.endpoint}: ${pr.error}\n`);
  process.stdout.write(`\n${bold('Preview running.')} Ctrl+C stops it and removes its containers and network.\n`);
  // Keep the process alive until a signal arrives.
  await new Promise<never>(() => setInterval(() => {}, 1 << 30));
}

export function register(program: Command): void {
  const preview = program.command('preview').description('local container previews (strato deploy --preview)');
  preview
    .command('image')
    .description("build the preview's base images from this machine's Python (no registry needed)")
    .option('--python <path>', 'interpreter to copy into the image (default: STRATO_PYTHON, else python3)')
    .option('--tag <image...>', 'image names (default: the CPU and GPU base images the preview looks for)')
    .action(async (opts: { python?: string; tag?: string[] }) => {
      const { buildBaseImage, checkImageName } = await import('../../preview');
      const python = checkedPythonExecutable(opts.python);
      for (const t of opts.tag ?? []) checkImageName(t, '--tag', { digest: false });
      const progress = new Progress();
      const r = await buildBaseImage({ tags: opts.tag, python, onProgress: (m) => progress.update(m) });
      progress.done();
      process.stdout.write(
        `${green('✓')} ${r.tags.join(', ')} from ${r.python} (Python ${r.pythonVersion}): ${r.files} files, ${(r.sizeBytes / 1e6).toFixed(0)} MB ` +
          `${dim(`${r.ms} ms`)}\n`,
      );
    });
}
