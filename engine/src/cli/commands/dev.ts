// `strato dev` (and its hidden alias `strato run`): the development server on localhost:8888 with a route
// table, /docs, reload on save, and live- endpoints on the platform that are removed on Ctrl+C.
import { kindLabel } from '../../protocol/endpointKind';
import { Command } from 'commander';
import path from 'node:path';
import { UserError } from '../../util/errors';
import { portFlag } from '../flags';
import { hostPort } from '../../util/hostUrl';
import { bold, confirm, dim, green, red, yellow } from '../output';
import { onStopSignal } from '../signals';

interface DevOptions {
  host: string;
  port: string;
  reload: boolean;
  autoProvision?: boolean;
  debug?: boolean;
}

const AUTO_PROVISION_CONFIRM_ABOVE = 5;

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r, n) => `  ${r.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd() + (n === 0 ? `\n  ${widths.map((w) => '-'.repeat(w)).join('  ')}` : ''))
    .join('\n');
}

async function runDev(opts: DevOptions): Promise<void> {
  const port = portFlag('--port', opts.port) as number;
  const [
    { resolveProjectContext },
    { createDevServer, listen },
    { DevSession, describeDevError, projectWide },
    { LIVE_PREFIX },
    devState,
    { projectRootAt, notAProject },
  ] = await Promise.all([
    import('../../deploy/context'),
    import('../../dev/server'),
    import('../../dev/session'),
    import('../../dev/liveEndpoints'),
    import('../../dev/state'),
    import('../../project/ignore'),
  ]);
  // In a subfolder it serves the whole project, as deploy acts on it (not a second app named after the subfolder).
  const projectRoot = projectRootAt(process.cwd());
  // Before anything starts (the local platform takes seconds on a first run): build and deploy refuse such a folder too.
  if (!projectRoot) throw new UserError(notAProject(process.cwd(), 'nothing was served', 'strato dev'));
  // Two servers of one project would share its live- endpoints, and the first to stop would remove them under the other.
  const running = devState.readDevState(projectRoot);
  if (running && running.pid !== process.pid)
    throw new UserError(
      `strato dev already serves this project at ${running.url} (pid ${running.pid}): use that one, or stop it first (Ctrl+C in its terminal)`,
    );
  const { root, target } = await resolveProjectContext(projectRoot);
  const session = new DevSession(
    root,
    target,
    {
      log: (l) => process.stderr.write(`${dim(l)}\n`),
      reloading: () => process.stderr.write(`${dim('reloading saved changes...')}\n`),
      reloaded: (errors, ms) => {
        if (errors.length)
          process.stderr.write(
            `${red('reload failed')}: ${projectWide(errors) ? 'every route answers' : 'the routes of the files above, and of those changed since the last build, answer'} with the error until a save fixes it\n`,
          );
        else process.stderr.write(`${green('reloaded')} in ${ms} ms\n`);
      },
    },
    { debug: opts.debug, reload: opts.reload },
  );
  // The server listens first: a host or port it cannot have is refused before anything is made on the platform.
  const server = createDevServer(session, opts.host);
  const used = await listen(server, opts.host, port);
  if (port !== 0 && used !== port) process.stderr.write(`${yellow(`port ${port} is taken`)}: using ${used}\n`);
  // From here a stop signal removes what was made (the live environment, endpoints), once the step in progress ends.
  let startup: Promise<unknown> = Promise.resolve();
  let stopping: Promise<void> | undefined;
  let serving = false;
  const stopped = new Promise<void>((resolve) => {
    onStopSignal(() => {
      if (stopping) process.exit(130);
      stopping = (async () => {
        process.stderr.write('\nstopping: removing live endpoints...\n');
        server.close();
        server.closeAllConnections();
        await startup.catch(() => {});
        session.live.onChange = undefined;
        const removed = await session.close().catch(() => []);
        devState.removeDevState(root);
        process.stderr.write(`${removed.length ? `removed ${removed.map((n) => LIVE_PREFIX + n).join(', ')}` : 'no live endpoint to remove'}\n`);
        // Stopped while starting (a confirmation prompt may still wait for an answer): the start goes no further.
        if (!serving) process.exit(130);
        resolve();
      })();
    });
  });
  try {
    startup = session.start();
    await startup;
    if (stopping) return stopped; // its cleanup exits
    for (const e of session.errors) process.stderr.write(`${red(describeDevError(e))}\n`);

    if (opts.autoProvision && session.build) {
      const n = Object.keys(session.build.manifest.resources).length;
      if (n > AUTO_PROVISION_CONFIRM_ABOVE) {
        if (!process.stdin.isTTY)
          throw new UserError(
            `--auto-provision would deploy ${n} live endpoints (more than ${AUTO_PROVISION_CONFIRM_ABOVE}) and there is no terminal to confirm: run ` +
              `without --auto-provision to provision each endpoint on its first call.`,
          );
        if (!(await confirm(`--auto-provision will deploy ${n} live endpoints. Continue?`, false)))
          throw new UserError('nothing provisioned; run without --auto-provision to provision endpoints on their first call.');
      }
      const provisioning = session.live.provisionAll(3);
      startup = provisioning;
      const r = await provisioning;
      if (stopping) return stopped;
      process.stderr.write(`${green('provisioned')} ${r.created.length} live endpoint(s)\n`);
    }
  } catch (e) {
    // A start that failed (a platform out of reach, a refused confirmation) leaves nothing behind and no server.
    server.close();
    server.closeAllConnections();
    if (session.build) await session.close().catch(() => []); // before its build, nothing was made
    throw e;
  }

  if (opts.reload) session.watch();

  const base = `http://${hostPort(opts.host, used)}`;
  // .strato/dev.json says that this server runs, where, and which live- endpoints it made (the extension reads it).
  const writeState = () =>
    devState.writeDevState(root, {
      pid: process.pid,
      url: base,
      port: used,
      startedAt,
      app: session.appName,
      platformUrl: target.baseUrl,
      endpoints: session.live.endpoints(),
    });
  const startedAt = Date.now();
  session.live.onChange = () => {
    try {
      writeState();
    } catch {
      // a read-only project folder: the server works without its state file
    }
  };
  session.live.onChange();
  process.on('exit', () => devState.removeDevState(root));
  const rows = [
    ['METHOD', 'PATH', 'FUNCTION', 'TYPE', 'Description'],
    ...session.routes.map((r) => [r.method, r.path, r.function.name, kindLabel(r.kind, 'short'), r.summary ?? '']),
  ];
  process.stdout.write(
    `\n${bold('strato dev')}  ${session.appName} on ${target.source === 'local' ? 'the embedded platform' : target.baseUrl}\n\n${table(rows)}\n\n`,
  );
  process.stdout.write(
    `  API explorer: ${base}/docs\n  Calls run on ${LIVE_PREFIX}<name> endpoints ` +
      `(${opts.autoProvision ? 'provisioned' : 'provisioned on first call'})${opts.reload ? '; saved changes reload' : ''}.\n  Press Ctrl+C to stop ` +
      `and remove them.\n\n`,
  );
  if (opts.debug)
    process.stdout.write(
      `  Debugging: each new worker listens for a debugger (debugpy) and waits a few seconds for one; in VS Code run ` +
        `"Strato: Attach Debugger to Dev Server" (workers announce themselves in ${path.relative(process.cwd(), session.debugDir)}).\n\n`,
    );

  serving = true;
  return stopped;
}

export function register(program: Command): void {
  const configure = (cmd: Command) =>
    cmd
      .description('development server: every function served over HTTP, run on live- endpoints of the platform')
      .option('--host <host>', 'interface to listen on', 'localhost')
      .option('-p, --port <port>', 'port (the next free one is used when it is taken)', '8888')
      .option('--reload', 'reload on saved changes', true)
      .option('--no-reload', 'do not watch the files')
      .option('--auto-provision', 'provision every endpoint at startup (at most 3 at once)')
      .option('--debug', 'workers listen for a debugger (debugpy) that VS Code attaches to; local platform only')
      .action((opts: DevOptions) => runDev(opts));
  configure(program.command('dev'));
  // The spec keeps `run` as a hidden alias that behaves identically.
  const run = new Command('run');
  configure(run);
  program.addCommand(run, { hidden: true });
}
