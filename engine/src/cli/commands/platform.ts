// `strato platform serve|start|stop|status` (and `agent`: platformAgent.ts): the embedded serverless platform in the foreground, or as the
// background process clients use when STRATO_API_URL is unset. Argument parsing and terminal output only.
import path from 'node:path';
import fs from 'node:fs';
import { Command, Option } from 'commander';
import { UserError } from '../../util/errors';
import { portFlag, wholeNumberFlag } from '../flags';
import { hostPort } from '../../util/hostUrl';
import { checkedPythonExecutable } from '../../util/paths';
import { onStopSignal } from '../signals';
import { DEFAULT_PORT, defaultPlatformDir, platformLayout } from '../../protocol/layout';
import type { RunningPlatform } from '../../platform/platform';
import { printHosts, registerAgent } from './platformAgent';
import { readKeyFile } from '../../protocol/layout';

interface ServeFlags {
  host: string;
  port?: string;
  dataDir?: string;
  apiKey?: string;
  python?: string;
  publicUrl?: string;
  daemon?: boolean;
  heartbeatMs?: string;
  groupCommitMs?: string;
  datacenter?: string[];
  database?: string;
  nodeUrl?: string;
  nodeHeartbeatMs?: string;
  nodeLostMs?: string;
}

async function serve(f: ServeFlags): Promise<void> {
  const explicitPort = portFlag('--port', f.port);
  const dataDir = f.dataDir ?? defaultPlatformDir();
  const base = {
    host: f.host,
    dataDir,
    apiKey: f.apiKey ?? process.env.STRATO_PLATFORM_API_KEY ?? undefined,
    python: checkedPythonExecutable(f.python),
    publicUrl: f.publicUrl,
    heartbeatMs: wholeNumberFlag('--heartbeat-ms', f.heartbeatMs, 10),
    groupCommitMs: wholeNumberFlag('--group-commit-ms', f.groupCommitMs),
    datacenters: f.datacenter,
    database: f.database,
    nodeUrl: f.nodeUrl,
    nodeHeartbeatMs: wholeNumberFlag('--node-heartbeat-ms', f.nodeHeartbeatMs, 10),
    nodeLostMs: wholeNumberFlag('--node-lost-ms', f.nodeLostMs, 20),
  };
  const { startPlatform } = await import('../../platform/platform');
  let platform: RunningPlatform;
  try {
    platform = await startPlatform({ ...base, port: explicitPort ?? DEFAULT_PORT });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE') throw e;
    if (explicitPort !== undefined) throw new UserError(`port ${explicitPort} on ${f.host} is in use; pick another with --port (0 picks a free one)`);
    platform = await startPlatform({ ...base, port: 0 }); // the default port is taken: any free one will do
  }
  const l = platformLayout(dataDir);
  const out = (s: string) => process.stdout.write(`${s}\n`);
  const bound = hostPort(f.host, platform.port);
  out(`Strato platform ${f.daemon ? '(background) ' : ''}listening on ${platform.url}${base.publicUrl ? ` (bound to ${bound})` : ''}`);
  out(`  data dir: ${platform.dataDir}`);
  if (base.datacenters?.length) out(`  datacenters: ${base.datacenters.join(', ')}`);
  if (platform.database) {
    out(`  database: ${platform.database} (node ${platform.instanceId})`);
    out(`  node URL: ${platform.nodeUrl} (where the other nodes reach this one${base.nodeUrl ? '' : '; --node-url to choose another'})`);
  }
  if (process.env.STRATO_GPUS !== undefined) {
    const { gpuList, gpuListNotes } = await import('../../platform/workers/gpus');
    const names = gpuList(process.env.STRATO_GPUS);
    out(`  GPUs: ${names.length ? names.join(', ') : 'none'} (STRATO_GPUS, in place of nvidia-smi's)`);
    for (const note of gpuListNotes(names)) process.stderr.write(`strato platform: note: ${note}\n`);
  }
  // Clients on this machine find the platform (and its key) in the default data dir only.
  const found = path.resolve(dataDir) === path.resolve(defaultPlatformDir());
  out(
    base.apiKey
      ? '  API key: the one given with --api-key'
      : found
        ? `  API key: in ${l.keyFile} (clients on this machine read it there)`
        : `  API key: in ${l.keyFile}; with this --data-dir, clients find neither the platform nor its key: set STRATO_API_URL=${platform.url} and STRATO_API_KEY to that file's key`,
  );
  out(`  queue endpoints: ${platform.url}/v2/<endpoint_id>/runsync   load-balanced: ${platform.url}/lb/<endpoint_id>/<route>`);
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (sig: string) => {
      if (stopping) {
        process.stderr.write(`${sig} again: exiting now\n`);
        process.exit(130);
      }
      stopping = true;
      out(`${sig}: stopping workers and committing the last writes...`);
      platform.close().then(resolve, (e: unknown) => {
        process.stderr.write(`error while stopping: ${(e as Error).message}\n`);
        resolve();
      });
    };
    onStopSignal(stop);
  });
  out('stopped');
}

export function register(program: Command): void {
  const platform = program.command('platform').description('run the embedded serverless platform (jobs API, load-balanced endpoints, workers) on this machine');

  platform
    .command('serve')
    .description('run the platform in the foreground (Ctrl+C stops it)')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', `port to listen on (default ${DEFAULT_PORT}, or a free one when it is taken)`)
    .option('--data-dir <dir>', 'database, builds, logs and key (default: the user data dir)')
    .option('--api-key <key>', 'the platform key, an admin key (default: generated at first start and kept in the data dir)')
    .option('--python <path>', 'Python interpreter for workers (default: $STRATO_PYTHON or python3)')
    .option('--public-url <url>', 'base URL clients should use, when a proxy sits in front')
    .option(
      '--database <url>',
      'keep all state in this PostgreSQL server (postgres://...; default: the embedded database in the data dir, or $STRATO_DATABASE_URL)',
    )
    .option('--datacenter <ids...>', 'datacenters this platform serves, e.g. EU-RO-1 US-KS-2 (default: it stands in for all of them)')
    .option(
      '--node-url <url>',
      "with --database: the URL the other nodes reach this node at (default: its listening address; for 0.0.0.0, this machine's first non-loopback address)",
    )
    .option('--node-lost-ms <ms>', 'with --database: a node silent this long is lost and its jobs are adopted (default 10000)')
    .addOption(new Option('--node-heartbeat-ms <ms>').hideHelp())
    .addOption(new Option('--daemon').hideHelp())
    .addOption(new Option('--heartbeat-ms <ms>').hideHelp())
    .addOption(new Option('--group-commit-ms <ms>').hideHelp())
    .action((f: ServeFlags) => serve(f));

  platform
    .command('start')
    .description('start the platform in the background (state in the user data dir)')
    .option('--host <host>', 'interface to listen on')
    .option('--port <port>', `port to listen on (default ${DEFAULT_PORT}, or a free one when it is taken)`)
    .option('--api-key <key>', 'the platform key, an admin key (default: the one in the data dir, generated at first start)')
    .option('--python <path>', 'Python interpreter for workers')
    .action(async (f: { host?: string; port?: string; apiKey?: string; python?: string }) => {
      const { daemonStatus, startDaemon } = await import('../../api/localPlatform');
      const before = await daemonStatus();
      if (!before.running) checkedPythonExecutable(f.python);
      const s = before.running ? before : await startDaemon({ host: f.host, port: portFlag('--port', f.port), apiKey: f.apiKey, python: f.python });
      process.stdout.write(
        `${before.running ? 'already running' : 'started'}: ${s.state?.url} (pid ${s.state?.pid})\n` + `  key file: ${s.keyFile}\n  log: ${s.logFile}\n`,
      );
      const given = Object.entries({ '--host': f.host, '--port': f.port, '--api-key': f.apiKey, '--python': f.python }).filter(([, v]) => v !== undefined);
      if (before.running && given.length)
        process.stderr.write(
          `note: ${given.map(([k]) => k).join(', ')} not applied: the platform was already running as it is; strato platform stop, then start it again with them\n`,
        );
    });

  registerAgent(platform);

  platform
    .command('stop')
    .description('stop the background platform (its workers stop; queued jobs are kept)')
    .action(async () => {
      const { stopDaemon } = await import('../../api/localPlatform');
      const r = await stopDaemon();
      process.stdout.write(r.stopped ? `stopped (pid ${r.pid})\n` : 'not running\n');
    });

  platform
    .command('status')
    .description("show whether the platform runs, where, and its nodes (the one STRATO_API_URL or the project's .env names, else the background one)")
    .option('--json', 'print the status as JSON')
    .action(async (f: { json?: boolean }) => {
      const { namedApiUrl } = await import('../../api/config');
      if (namedApiUrl({ projectDir: process.cwd() })) return remoteStatus(f);
      const { daemonStatus } = await import('../../api/localPlatform');
      const s = await daemonStatus();
      const nodes = s.running ? await platformNodes().catch(() => undefined) : undefined;
      if (f.json) {
        const hosts = s.running && s.state ? await hostsJson(s.state.url, readKeyFile(s.keyFile) ?? process.env.STRATO_API_KEY) : undefined;
        process.stdout.write(`${JSON.stringify({ ...s, nodes: nodes?.nodes, ...hosts }, null, 2)}\n`);
      } else if (s.running && s.state) {
        const up = Math.round((Date.now() - s.state.startedAt) / 1000);
        process.stdout.write(
          `running: ${s.state.url} (pid ${s.state.pid}, up ${up} s, version ${s.state.version})\n` +
            `  data dir: ${s.dataDir}\n  key file: ${s.keyFile}\n` +
            // A platform run in the foreground (`platform serve`) writes its log to its terminal.
            `  log: ${fs.existsSync(s.logFile) ? s.logFile : 'in the terminal of its strato platform serve'}\n` +
            (nodes ? nodeLines(nodes.nodes, nodes.instanceId) : ''),
        );
        await printHosts(s.state.url, readKeyFile(s.keyFile) ?? process.env.STRATO_API_KEY);
      } else {
        process.stdout.write(`not running (data dir: ${s.dataDir}); start it with \`strato platform start\`\n`);
      }
      if (!s.running) process.exitCode = 3;
    });
}

type NodesAnswer = Awaited<ReturnType<import('../../api/controlPlane').ControlPlaneClient['platformNodes']>>;

async function platformNodes(): Promise<NodesAnswer> {
  const [{ resolveApiConfig }, { ControlPlaneClient }] = await Promise.all([import('../../api/config'), import('../../api/controlPlane')]);
  return new ControlPlaneClient(await resolveApiConfig({ projectDir: process.cwd() })).platformNodes();
}

/** The nodes, one a line: id, state, URL, seconds since its last heartbeat; the answering node is marked. */
function nodeLines(nodes: NodesAnswer['nodes'], answering: string): string {
  const alive = nodes.filter((n) => n.state === 'alive').length;
  const lines = nodes.map((n) => {
    const ago = Math.max(0, Math.round((Date.now() - n.heartbeatAt) / 1000));
    return `    ${n.id}  ${n.state.padEnd(5)}  ${n.url}  heartbeat ${ago} s ago${n.id === answering ? '  (answered this)' : ''}`;
  });
  return `  nodes: ${nodes.length} (${alive} alive, ${nodes.length - alive} lost)\n${lines.join('\n')}\n`;
}

/** The platform STRATO_API_URL (or the project's .env) names: its nodes, as the node that answers sees them. */
async function remoteStatus(f: { json?: boolean }): Promise<void> {
  const p = await platformNodes();
  const { resolveApiConfig } = await import('../../api/config');
  const c = await resolveApiConfig({ projectDir: process.cwd() });
  if (f.json) {
    process.stdout.write(`${JSON.stringify({ url: c.baseUrl, ...p, ...(await hostsJson(c.baseUrl, c.apiKey)) }, null, 2)}\n`);
    return;
  }
  process.stdout.write(`platform: ${c.baseUrl}\n${nodeLines(p.nodes, p.instanceId)}`);
  await printHosts(c.baseUrl, c.apiKey);
}

/** `{hosts}` for --json, or `{hostsError}` saying why they are not listed (a key that is not an admin's). */
async function hostsJson(baseUrl: string, apiKey: string | undefined): Promise<{ hosts: unknown } | { hostsError: string }> {
  const { listHosts } = await import('../../api/hosts');
  try {
    return { hosts: await listHosts({ baseUrl, apiKey: apiKey ?? '' }) };
  } catch (e) {
    return { hostsError: (e as Error).message };
  }
}
