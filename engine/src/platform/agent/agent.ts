// `strato platform agent --join <url>`: offers this machine's CPUs and GPUs to a platform. It registers the host,
// long-polls for commands (the poll is its heartbeat), starts the workers the platform places here from builds it
// caches (buildCache.ts), and sends their output and exits back. Workers talk to the platform directly at <url>.
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import type { AgentCommand, AgentEvent, HostRegistered, HostRegistration } from '../../protocol/agents';
import { UserError } from '../../util/errors';
import { inheritedWorkerEnv } from '../workers/environment';
import { detectGpus } from '../workers/gpus';
import { BuildCache } from './buildCache';
import { errorOf, PlatformLink } from './link';

export interface AgentOptions {
  /** The platform's base URL, as reachable from this host (and from its workers). */
  url: string;
  /** An admin key of that platform. */
  key: string;
  name: string;
  datacenter?: string;
  /** GPU names standing in for nvidia-smi's (--gpus); absent: detected (STRATO_GPUS overrides too). */
  gpus?: string[];
  dataDir: string;
  python: string;
  log(line: string): void;
}

export interface RunningAgent {
  hostId: string;
  /** Leaves the platform (its jobs here run again elsewhere), stops the workers and returns. */
  close(): Promise<void>;
}

interface HostWorker {
  child: ChildProcess | null;
  /** A signal that came before the process started (the build was still downloading). */
  signal: NodeJS.Signals | null;
}

const VERSION: string = (require('../../../../package.json') as { version: string }).version;
const CONNECT_TIMEOUT_MS = 10_000;
const RETRY_MS = 1000;
const OUTPUT_BACKLOG = 10_000;
const STOP_GRACE_MS = 5000;

/** The short reason of a network error: its code (ECONNREFUSED, TIMEOUT...), else its message. */
function why(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}

export async function startAgent(o: AgentOptions): Promise<RunningAgent> {
  let base: URL;
  try {
    base = new URL(o.url);
  } catch {
    throw new UserError(`--join ${JSON.stringify(o.url)} is not a URL; give the platform's address, e.g. http://10.0.0.5:7450`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UserError(`--join ${o.url} must be an http:// or https:// URL`);
  const url = base.href.replace(/\/+$/, '');
  const link = new PlatformLink(base, o.key);
  try {
    return await run(o, url, link);
  } catch (e) {
    link.close(); // nothing keeps a refused agent's process alive
    throw e;
  }
}

async function run(o: AgentOptions, url: string, link: PlatformLink): Promise<RunningAgent> {
  const post = (p: string, body: unknown, timeoutMs = CONNECT_TIMEOUT_MS) => link.json('POST', p, body, timeoutMs);
  try {
    await link.json('GET', '/healthz', undefined, CONNECT_TIMEOUT_MS);
  } catch (e) {
    throw new UserError(
      `cannot reach the platform at ${url} (${why(e)}): check the address and port, and that the platform listens on an address this host ` +
        'can reach (strato platform serve --host 0.0.0.0; it listens on 127.0.0.1 alone by default)',
    );
  }

  const inv = o.gpus ? { count: o.gpus.length, names: o.gpus, cudaVersion: process.env.STRATO_CUDA_VERSION || undefined } : detectGpus();
  const registration: HostRegistration = {
    name: o.name,
    datacenter: o.datacenter,
    cpus: os.cpus().length,
    gpus: inv.names,
    cudaVersion: inv.cudaVersion,
    version: VERSION,
  };
  const register = async (): Promise<HostRegistered> => {
    const r = await post('/_agent/register', registration);
    const msg = errorOf(r.body);
    if (r.status === 401)
      throw new UserError(`the platform at ${url} refused the key (${msg}); pass an admin key of that platform with --key or STRATO_API_KEY`);
    if (r.status === 404) throw new UserError(`${url} does not take worker hosts (${msg}); is it a Strato platform of this version (${VERSION})?`);
    if (r.status !== 200) throw new UserError(`the platform at ${url} refused this host: ${msg}`);
    return r.body as HostRegistered;
  };
  let reg = await register();
  o.log(
    `joined ${url} as worker host ${o.name} (${o.datacenter ?? 'every datacenter'}, ${registration.cpus} CPUs, ${inv.count ? `GPUs ${inv.names.join(', ')}` : 'no GPU'})`,
  );

  const builds = new BuildCache(
    o.dataDir,
    (id) => link.request('GET', `/_agent/builds/${encodeURIComponent(id)}`, undefined, CONNECT_TIMEOUT_MS),
    (id, dir) => o.log(`fetched build ${id} once for this host (cached in ${dir})`),
  );
  const workers = new Map<string, HostWorker>();
  let events: AgentEvent[] = [];
  let flushing: Promise<void> | null = null;
  let flushTimer: NodeJS.Timeout | null = null;
  let closing = false;

  const flush = async (): Promise<void> => {
    flushTimer = null;
    while (events.length && !flushing) {
      const batch = events;
      events = [];
      flushing = post(`/_agent/${reg.hostId}/events`, { events: batch })
        .then(() => undefined)
        .catch(() => {
          events = [...batch.filter((e) => e.type === 'exit' || events.length < OUTPUT_BACKLOG), ...events];
          return new Promise<void>((r) => setTimeout(r, RETRY_MS));
        })
        .finally(() => (flushing = null));
      await flushing;
    }
  };
  const report = (e: AgentEvent, now = false) => {
    events.push(e);
    if (now) void flush();
    else flushTimer ??= setTimeout(() => void flush(), 50);
  };

  const launch = async (c: Extract<AgentCommand, { type: 'launch' }>) => {
    const hw: HostWorker = { child: null, signal: null };
    workers.set(c.workerId, hw);
    const fail = (line: string) => {
      report({ type: 'output', workerId: c.workerId, stream: 'err', lines: [line] });
      report({ type: 'exit', workerId: c.workerId, code: 127, signal: null }, true);
      workers.delete(c.workerId);
    };
    let root: string;
    try {
      root = await builds.get(c.buildId, c.sha256);
    } catch (e) {
      return fail(`worker host ${o.name} could not fetch build ${c.buildId}: ${why(e)}`);
    }
    if (hw.signal) {
      workers.delete(c.workerId);
      return report({ type: 'exit', workerId: c.workerId, code: null, signal: hw.signal }, true);
    }
    const env = {
      ...inheritedWorkerEnv(),
      ...c.env,
      PYTHONPATH: [root, path.join(root, 'deps')].join(path.delimiter),
      STRATO_PLATFORM_URL: url,
      STRATO_WORKER_HOST: o.name,
    };
    // stdin is a pipe the worker watches: when this agent dies, its workers go too (runtime.py).
    const child = spawn(o.python, ['-u', c.handlerFile], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    hw.child = child;
    for (const [stream, name] of [
      [child.stdout, 'out'],
      [child.stderr, 'err'],
    ] as const) {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (t: string) => {
        const lines = (partial + t).split('\n');
        partial = lines.pop() ?? '';
        if (lines.length) report({ type: 'output', workerId: c.workerId, stream: name, lines });
      });
      stream.on('end', () => partial && report({ type: 'output', workerId: c.workerId, stream: name, lines: [partial] }));
    }
    child.stdin.on('error', () => {}); // the worker closed it: nothing to tell
    child.on('error', (e) => {
      if (child.pid === undefined) fail(`worker host ${o.name} could not start ${o.python}: ${e.message} (set STRATO_PYTHON or --python there)`);
    });
    child.on('close', (code, signal) => {
      workers.delete(c.workerId);
      report({ type: 'exit', workerId: c.workerId, code, signal }, true);
    });
  };

  const signalWorker = (id: string, sig: NodeJS.Signals) => {
    const hw = workers.get(id);
    if (!hw) return report({ type: 'exit', workerId: id, code: null, signal: sig }, true); // gone already: say so again
    if (hw.child) hw.child.kill(sig);
    else hw.signal = sig;
  };
  const stopAll = (sig: NodeJS.Signals) => {
    for (const hw of workers.values()) hw.child?.kill(sig);
  };

  const loop = (async () => {
    let unreachableSince = 0;
    while (!closing) {
      try {
        const r = await post(`/_agent/${reg.hostId}/poll`, { waitMs: reg.pollWaitMs }, reg.pollWaitMs + CONNECT_TIMEOUT_MS);
        if (r.status === 404) {
          o.log(`the platform forgot this host (lost, or restarted): stopping its ${workers.size} workers and registering again`);
          stopAll('SIGKILL');
          workers.clear();
          events = [];
          reg = await register();
          continue;
        }
        if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${errorOf(r.body)}`);
        const { commands } = r.body as { commands: AgentCommand[] };
        if (unreachableSince) o.log(`the platform answers again after ${Math.round((Date.now() - unreachableSince) / 1000)} s`);
        unreachableSince = 0;
        for (const c of commands) {
          if (c.type === 'launch') void launch(c);
          else if (c.type === 'signal') signalWorker(c.workerId, c.signal);
        }
      } catch (e) {
        if (closing) break;
        if (!unreachableSince) {
          unreachableSince = Date.now();
          o.log(`cannot reach the platform at ${url} (${why(e)}); trying again every ${RETRY_MS / 1000} s`);
        }
        await new Promise((r) => setTimeout(r, RETRY_MS));
      }
    }
  })();

  return {
    get hostId() {
      return reg.hostId;
    },
    close: async () => {
      closing = true;
      // Leave first: the platform runs this host's jobs again elsewhere and stops expecting its workers.
      await post(`/_agent/${reg.hostId}/leave`, {}).catch(() => undefined);
      stopAll('SIGTERM');
      const deadline = Date.now() + STOP_GRACE_MS;
      while (workers.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      stopAll('SIGKILL');
      if (flushTimer) clearTimeout(flushTimer);
      await loop.catch(() => undefined);
      link.close();
    },
  };
}
