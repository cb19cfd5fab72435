// `strato deploy`, `strato undeploy` and `strato env get|list`: terminal output over engine/src/deploy.
import { kindLabel } from '../../protocol/endpointKind';
import { DEV_ENVIRONMENT } from '../../protocol/names';
import type { Command } from 'commander';
import type { DeployStep, EnvironmentSummary, WorkersSummary } from '../../deploy';
import { UserError } from '../../util/errors';
import { printEndpoints } from '../endpointListing';
import { Progress, bold, confirm, dim, green, red, yellow } from '../output';
import { parseList } from './build';

const STEP_LABEL: Record<DeployStep, string> = { build: 'build', upload: 'upload', provision: 'provision', configure: 'configure' };

/** The environment's endpoints and volumes, to stdout (`env get`), or to stderr (what undeploy asks about). */
function printEnvironment(s: EnvironmentSummary, workersText: (w: WorkersSummary) => string, out: NodeJS.WriteStream = process.stdout): void {
  out.write(`${bold(s.environment)}  app ${s.app}${s.buildId ? `, build ${s.buildId}` : ''}\n`);
  if (s.endpoints.length === 0) {
    out.write(
      s.environment === DEV_ENVIRONMENT
        ? '  no resources: strato dev provisions them while it runs\n'
        : `  no resources: strato deploy --env ${s.environment} deploys them\n`,
    );
    return;
  }
  for (const e of s.endpoints) {
    out.write(`  ${e.name.padEnd(24)} ${kindLabel(e.type).padEnd(14)} ${e.type === 'QUEUE' ? `${e.url}/runsync` : e.url}\n`);
    for (const r of e.routes) out.write(`    ${r.method.padEnd(6)} ${r.path}\n`);
    if (e.workers) out.write(`    ${e.workers.error ? red(workersText(e.workers)) : dim(workersText(e.workers))}\n`);
  }
  for (const v of s.volumes)
    out.write(
      `  volume ${v.name.padEnd(17)} ${v.datacenter.padEnd(14)} ${formatBytes(v.usedBytes)} of ${v.sizeGb} GB  ${dim(`mounted by ${v.endpoints.join(', ')}`)}\n`,
    );
}

/** Bytes as a short human figure (1.2 GB, 340 MB, 12 KB). */
export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

/** What undeploy and env get/list need: the project context and the environments module, nothing of the build. */
async function environmentCommand() {
  const [{ commandContext }, environments] = await Promise.all([import('../../deploy/context'), import('../../deploy/environments')]);
  return { ...(await commandContext(process.cwd())), environments };
}

export function register(program: Command): void {
  program
    .command('deploy')
    .description('build, upload, provision and configure the endpoints (embedded platform unless STRATO_API_URL is set)')
    .option('--env <name>', 'environment to deploy to (created when missing)')
    .option('--exclude <packages>', 'comma-separated packages not to install')
    .option('--wait', 'return once the minimum workers are ready instead of while they start in the background; exit 1 when some cannot start')
    .option('--preview', 'run the endpoints in local containers instead (needs a Docker engine); Ctrl+C removes them')
    .option('--cpu-image <image>', 'with --preview: base image of CPU endpoints (default strato/worker-cpu:py<version>)')
    .option('--gpu-image <image>', 'with --preview: base image of GPU endpoints (default strato/worker-gpu:py<version>)')
    .action(async (opts: { env?: string; exclude?: string; wait?: boolean; preview?: boolean; cpuImage?: string; gpuImage?: string }) => {
      if (opts.preview) return (await import('./preview')).runPreview(opts);
      const previewOnly = [opts.cpuImage !== undefined && '--cpu-image', opts.gpuImage !== undefined && '--gpu-image'].filter(Boolean);
      if (previewOnly.length)
        throw new UserError(
          `${previewOnly.join(' and ')} ${previewOnly.length > 1 ? 'are' : 'is'} for --preview (the base images of its containers): add --preview, or leave ${previewOnly.length > 1 ? 'them' : 'it'} out`,
        );
      const [{ commandContext }, { deployProject, sampleCall, READY_TIMEOUT_MS }, { formatDiagnostic }, { projectRootAt, notAProject }] = await Promise.all([
        import('../../deploy/context'),
        import('../../deploy'),
        import('../../project'),
        import('../../project/ignore'),
      ]);
      // A deploy packages a project's sources: STRATO_APP, which names the app of the other commands, is no way out.
      if (!projectRootAt(process.cwd())) throw new UserError(notAProject(process.cwd(), 'nothing was packaged', 'strato deploy'));
      const { root, target } = await commandContext(process.cwd());
      const progress = new Progress();
      const r = await deployProject(root, {
        target,
        env: opts.env,
        exclude: parseList(opts.exclude),
        readyTimeoutMs: opts.wait ? READY_TIMEOUT_MS : 0,
        onProgress: (m) => progress.update(m),
        onWarning: (d) => {
          progress.done();
          process.stderr.write(`${yellow(formatDiagnostic(d))}\n`);
        },
        onStep: (step, phase, detail, ms) => {
          if (phase === 'start') progress.update(`${STEP_LABEL[step]}...`);
          else {
            progress.done();
            process.stdout.write(`${green('✓')} ${STEP_LABEL[step].padEnd(10)} ${(detail ?? '').padEnd(58)} ${dim(`${Math.round(ms ?? 0)} ms`)}\n`);
          }
        },
      });
      const specs = new Map(r.buildResult.model.endpoints.map((e) => [e.name, e]));
      process.stdout.write(`\nDeployed ${bold(r.app.name)} to ${bold(r.environment.name)}${r.deleted.length ? ` (removed: ${r.deleted.join(', ')})` : ''}\n`);
      printEndpoints(r.endpoints, { sample: (e) => sampleCall(e, specs.get(e.name)) });
      if (target.source === 'local')
        process.stdout.write(
          `\n${dim("The key is in the local platform's key file: strato platform status shows where; export STRATO_API_KEY to use the samples.")}\n`,
        );
      if (r.starting.length)
        process.stdout.write(
          `\n${dim(
            `Minimum workers of ${r.starting.join(', ')} ${opts.wait ? `were still starting after ${READY_TIMEOUT_MS / 1000} s` : 'start in the background'}: ` +
              `calls made meanwhile wait for them; strato env get ${r.environment.name} shows when they are ready.`,
          )}\n`,
        );
      // Only --wait looks: the endpoints are deployed, but what it waited for failed (a CI job must see it).
      for (const p of r.problems) process.stderr.write(`${red('error')}: workers of ${p.endpoint} cannot start: ${p.error}\n`);
      if (r.problems.length) process.exitCode = 1;
      for (const e of r.endpoints) for (const n of e.notes) process.stderr.write(`${yellow('note')}: ${e.name}: ${n}\n`);
    });

  program
    .command('undeploy')
    .description("remove the environment's endpoints")
    .option('--env <name>', 'environment (default: the only one)')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--json', 'print the result as JSON')
    .action(async (opts: { env?: string; yes?: boolean; json?: boolean }) => {
      const { app, target, environments } = await environmentCommand();
      const current = await environments.getEnvironment(target, app, opts.env);
      if (!opts.yes) {
        if (!process.stdin.isTTY)
          throw new UserError(
            `undeploy removes ${current.endpoints.length} endpoint(s) of ${app}/${current.environment}: pass --yes to confirm without a terminal.`,
          );
        printEnvironment(current, environments.workersText, process.stderr);
        if (!(await confirm(`Remove these ${current.endpoints.length} endpoint(s)?`, false))) throw new UserError('nothing removed.');
      }
      const r = await environments.undeployEnvironment(target, app, current.environment);
      if (opts.json) process.stdout.write(JSON.stringify({ app, ...r }, null, 2) + '\n');
      else
        process.stdout.write(
          `${green('removed')} ${r.removed.length} endpoint(s) from ${app}/${r.environment}${r.removed.length ? `: ${r.removed.join(', ')}` : ''}\n`,
        );
    });

  const env = program.command('env').description('environments of this app');
  env
    .command('get')
    .description("show an environment's endpoints and their URLs")
    .argument('[NAME]', 'environment name (default: the only one)')
    .option(
      '--json',
      'print JSON: {app, environment, buildId, endpoints: [{name, type, id, url, routes, executionTimeoutMs, workers: {min, max, ready, starting, error, note}}], volumes: [{name, datacenter, sizeGb, usedBytes, endpoints}]}',
    )
    .action(async (name: string | undefined, opts: { json?: boolean }) => {
      const { app, target, environments } = await environmentCommand();
      const s = await environments.getEnvironment(target, app, name, 'strato env get NAME');
      if (opts.json) process.stdout.write(JSON.stringify(s, null, 2) + '\n');
      else printEnvironment(s, environments.workersText);
    });
  env
    .command('list')
    .description('list the environments of this app')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }) => {
      const { app, target, environments } = await environmentCommand();
      const list = await environments.listEnvironments(target, app);
      if (opts.json) process.stdout.write(JSON.stringify(list, null, 2) + '\n');
      else if (list.length === 0)
        process.stdout.write(
          `app ${app} has no environments (all were undeployed): strato deploy makes ${(await import('../../deploy/context')).DEFAULT_ENVIRONMENT}\n`,
        );
      else
        for (const e of list)
          process.stdout.write(`${e.environment.padEnd(20)} ${String(e.endpoints).padStart(3)} endpoint(s)${e.buildId ? `  build ${e.buildId}` : ''}\n`);
    });
}
