// `strato platform agent --join <url>` (a worker host offering this machine's CPUs and GPUs to a platform) and the
// hosts table of `strato platform status`. Argument parsing and terminal output only: platform/agent does the work.
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { datacenterFlag } from '../../catalog';
import { userDataRoot } from '../../protocol/layout';
import type { HostView } from '../../protocol/agents';
import { UserError } from '../../util/errors';
import { checkedPythonExecutable } from '../../util/paths';
import { onStopSignal } from '../signals';

interface AgentFlags {
  join: string;
  key?: string;
  name?: string;
  datacenter?: string;
  gpus?: string;
  dataDir?: string;
  python?: string;
}

async function agent(f: AgentFlags): Promise<void> {
  const key = f.key ?? process.env.STRATO_API_KEY;
  if (!key) throw new UserError('no key: pass an admin key of the platform with --key, or set STRATO_API_KEY (strato keys create --scope admin makes one)');
  let datacenter: string | undefined;
  if (f.datacenter) {
    const dc = datacenterFlag(f.datacenter);
    if ('error' in dc) throw new UserError(dc.error);
    datacenter = dc.id;
  }
  const { gpuList, gpuListNotes } = await import('../../platform/workers/gpus');
  const given = f.gpus ?? process.env.STRATO_GPUS;
  const gpus = given === undefined ? undefined : gpuList(given);
  const { startAgent } = await import('../../platform/agent/agent');
  const out = (s: string) => process.stdout.write(`${s}\n`);
  for (const note of gpuListNotes(gpus ?? [])) process.stderr.write(`strato agent: note: ${note}\n`);
  const running = await startAgent({
    url: f.join,
    key,
    name: f.name ?? os.hostname(),
    datacenter,
    gpus,
    dataDir: path.resolve(f.dataDir ?? path.join(userDataRoot(), 'agent')),
    python: checkedPythonExecutable(f.python),
    log: (l) => out(`strato agent: ${l}`),
  });
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (sig: string) => {
      if (stopping) process.exit(130);
      stopping = true;
      out(`${sig}: leaving the platform and stopping this host's workers...`);
      running.close().then(resolve, resolve);
    };
    onStopSignal(stop);
  });
  out('stopped');
}

export function registerAgent(platform: Command): void {
  platform
    .command('agent')
    .description("offer this machine's CPUs and GPUs to a platform as a worker host (runs the workers the platform places here)")
    .requiredOption(
      '--join <url>',
      'the platform to join, as this host reaches it (it must listen on an address other hosts can reach: platform serve --host 0.0.0.0); ' +
        "a cluster's nodes comma-separated: the host joins the first that answers and moves to the next when its node is out of reach",
    )
    .option('--key <key>', 'an admin key of that platform (default: $STRATO_API_KEY)')
    .option('--name <name>', "the host name the platform shows (default: this machine's hostname)")
    .option('--datacenter <id>', 'the datacenter this host is in, e.g. US-KS-2 (default: it stands in for all of them)')
    .option('--gpus <names>', "GPU names standing in for nvidia-smi's, comma-separated (default: detected, or $STRATO_GPUS)")
    .option('--data-dir <dir>', "where builds are cached (default: the user data dir's agent folder)")
    .option('--python <path>', 'Python interpreter for workers (default: $STRATO_PYTHON or python3)')
    .action((f: AgentFlags) => agent(f));
}

/** The hosts table of `strato platform status`. */
export function formatHosts(hosts: HostView[], now = Date.now()): string {
  // In a cluster each host belongs to a node: its machine, or an agent that joined it.
  const rows = hosts.map((h) => [
    h.node ? `${h.name} (${h.local ? 'node' : 'agent of node'} ${h.node})` : h.local ? `${h.name} (this machine)` : h.name,
    h.datacenters?.join(',') ?? 'all',
    h.gpus.total ? `${h.gpus.free}/${h.gpus.total} free` : '-',
    String(h.workers),
    h.lastSeen === null ? '-' : `${Math.max(0, Math.round((now - h.lastSeen) / 1000))} s ago`,
  ]);
  const head = ['host', 'datacenter', 'GPUs', 'workers', 'last heartbeat'];
  const widths = head.map((t, i) => Math.max(t.length, ...rows.map((r) => r[i].length)));
  return [head, ...rows].map((r) => `  ${r.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd()).join('\n');
}

/** `strato platform status` for the platform STRATO_API_URL names: its worker hosts. */
/** Prints the platform's worker hosts; a platform that cannot list them (an older one, a key that is not an admin's) gets a line saying so. */
export async function printHosts(baseUrl: string, apiKey: string | undefined): Promise<void> {
  const { listHosts } = await import('../../api/hosts');
  try {
    const hosts = await listHosts({ baseUrl, apiKey: apiKey ?? '' });
    process.stdout.write(`  worker hosts:\n${formatHosts(hosts)}\n`);
  } catch (e) {
    process.stdout.write(`  worker hosts: not listed (${(e as Error).message})\n`);
  }
}
