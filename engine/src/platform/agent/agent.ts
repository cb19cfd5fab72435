// `strato platform agent --join <url>[,<url>...]`: offers this machine's CPUs and GPUs to a platform. It registers the
// host, long-polls for commands (the poll is its heartbeat), starts the workers the platform places here from builds
// it caches (buildCache.ts), and sends their output and exits back. Workers talk to the platform directly at the URL
// of the node the host joined. Given several nodes of a cluster, the agent joins the first that answers and moves
// to the next when its node stays out of reach for FAILOVER_MS (its workers, that node's, are stopped first).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AgentCommand, AgentEvent, HostRegistered, HostRegistration } from '../../protocol/agents';
import { describeAnswer } from '../../api/http';
import { UserError } from '../../util/errors';
import { parseServerUrl } from '../../util/hostUrl';
import { inheritedWorkerEnv } from '../workers/environment';
import { detectGpus } from '../workers/gpus';
import { BuildCache } from './buildCache';
import { errorOf, PlatformLink, type JsonReply } from './link';
import { LineSplitter } from '../../util/lines';
import { LOG_LIMITS } from '../../protocol/logs';

export interface AgentOptions {
  /** The platform's base URL, as reachable from this host (and from its workers); several nodes' comma-separated. */
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
  /** The build folder it runs from, once fetched (kept in the cache while it runs). */
  root?: string;
}

const VERSION: string = (require('../../../../package.json') as { version: string }).version;
const CONNECT_TIMEOUT_MS = 10_000;
const RETRY_MS = 1000;
const OUTPUT_BACKLOG = 10_000;
const STOP_GRACE_MS = 5000;
/** The node this host joined stayed out of reach this long: join the next one given (a lost node's jobs move on after about as long). */
const FAILOVER_MS = 5000;

/** The short reason of a network error: its code (ECONNREFUSED, TIMEOUT...), else its message. */
/** This agent's id (HostRegistration.agent): made once and kept in its data dir, so that a restart keeps it. */
function agentId(dataDir: string): string {
  const file = path.join(dataDir, 'agent-id');
  try {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (/^[a-f0-9]{16}$/.test(id)) return id;
  } catch {
    /* made below */
  }
  const id = randomBytes(8).toString('hex');
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(file, `${id}\n`);
  return id;
}

function why(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}

export async function startAgent(o: AgentOptions): Promise<RunningAgent> {
  const urls = o.url
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean)
    .map((u) => {
      const base = parseServerUrl(u, '--join', "the platform's address, http://10.0.0.5:7450");
      if ('problem' in base) throw new UserError(base.problem);
      return base;
    });
  if (urls.length === 0) throw new UserError("--join needs the platform's address, e.g. http://10.0.0.5:7450 (several nodes: comma-separated)");
  return run(o, urls);
}

/** The node this host talks to: its URL and a connection pool of its own. */
interface Joined {
  url: string;
  link: PlatformLink;
}

function joinedTo(base: URL, key: string): Joined {
  return { url: base.href.replace(/\/+$/, ''), link: new PlatformLink(base, key) };
}

async function run(o: AgentOptions, urls: URL[]): Promise<RunningAgent> {
  let at = 0;
  let to = joinedTo(urls[0], o.key);
  const post = (p: string, body: unknown, timeoutMs = CONNECT_TIMEOUT_MS) => to.link.json('POST', p, body, timeoutMs);
  // The first node given that answers (a refused key or host is refused at once: every node would say the same).
  for (;;) {
    try {
      await to.link.json('GET', '/healthz', undefined, CONNECT_TIMEOUT_MS);
      break;
    } catch (e) {
      to.link.close(); // nothing keeps a refused agent's process alive
      if (at + 1 < urls.length) {
        o.log(`cannot reach ${to.url} (${why(e)}); trying ${urls[at + 1].href}`);
        to = joinedTo(urls[++at], o.key);
        continue;
      }
      throw new UserError(
        `cannot reach the platform at ${urls.map((u) => u.href.replace(/\/+$/, '')).join(', ')} (${why(e)}): check the address and port, and that the platform listens on an address this host ` +
          'can reach (strato platform serve --host 0.0.0.0; it listens on 127.0.0.1 alone by default)',
      );
    }
  }
  try {
    return await serve(
      o,
      urls,
      at,
      () => to,
      (next) => (to = next),
      post,
    );
  } catch (e) {
    to.link.close();
    throw e;
  }
}

async function serve(
  o: AgentOptions,
  urls: URL[],
  first: number,
  current: () => Joined,
  use: (j: Joined) => void,
  post: (p: string, body: unknown, timeoutMs?: number) => Promise<JsonReply>,
): Promise<RunningAgent> {
  let at = first;
  const inv = o.gpus ? { count: o.gpus.length, names: o.gpus, cudaVersion: process.env.STRATO_CUDA_VERSION || undefined } : detectGpus();
  const registration: HostRegistration = {
    name: o.name,
    agent: agentId(o.dataDir),
    datacenter: o.datacenter,
    cpus: os.cpus().length,
    gpus: inv.names,
    cudaVersion: inv.cudaVersion,
    version: VERSION,
  };
  const register = async (): Promise<HostRegistered> => {
    const r = await post('/_agent/register', registration);
    const msg = errorOf(r.body);
    const platformAnswer = typeof r.body === 'object' && r.body !== null && typeof (r.body as { error?: unknown }).error === 'string';
    if (r.status !== 200 && !platformAnswer)
      throw new UserError(
        `${current().url} does not answer as a Strato platform (POST /_agent/register answered HTTP ${r.status} with ${describeAnswer(r.body)}): ` +
          "--join must be a platform's base URL, such as http://10.0.0.5:7450",
      );
    if (r.status === 401)
      throw new UserError(`the platform at ${current().url} refused the key (${msg}); pass an admin key of that platform with --key or STRATO_API_KEY`);
    if (r.status === 404) throw new UserError(`${current().url} does not take worker hosts (${msg}); is it a Strato platform of this version (${VERSION})?`);
    if (r.status !== 200) throw new UserError(`the platform at ${current().url} refused this host: ${msg}`);
    return r.body as HostRegistered;
  };
  let reg = await register();
  o.log(
    `joined ${current().url} as worker host ${o.name} (${o.datacenter ?? 'every datacenter'}, ${registration.cpus} CPUs, ${inv.count ? `GPUs ${inv.names.join(', ')}` : 'no GPU'})`,
  );

  const builds = new BuildCache(
    o.dataDir,
    (id) => current().link.request('GET', `/_agent/builds/${encodeURIComponent(id)}`, undefined, CONNECT_TIMEOUT_MS),
    (id, dir) => o.log(`fetched build ${id} once for this host (cached in ${dir})`),
    () => new Set([...workers.values()].flatMap((w) => (w.root ? [w.root] : []))),
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
          // Once the host has left, what it still has to tell goes nowhere: no retry keeps the process alive.
          if (closing) {
            events = [];
            return undefined;
          }
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
      hw.root = root;
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
      STRATO_PLATFORM_URL: current().url,
      STRATO_WORKER_HOST: o.name,
    };
    // stdin is a pipe the worker watches: when this agent dies, its workers go too (runtime.py).
    const child = spawn(o.python, ['-u', c.handlerFile], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe'] });
    hw.child = child;
    for (const [stream, name] of [
      [child.stdout, 'out'],
      [child.stderr, 'err'],
    ] as const) {
      let lines: string[] = [];
      const split = new LineSplitter((line) => lines.push(line), LOG_LIMITS.lineChars);
      const send = () => {
        if (lines.length) report({ type: 'output', workerId: c.workerId, stream: name, lines });
        lines = [];
      };
      stream.setEncoding('utf8');
      stream.on('data', (t: string) => (split.push(t), send()));
      stream.on('end', () => (split.flush(), send()));
    }
    child.stdin.on('error', () => {}); // the worker closed it: nothing to tell
    child.on('error', (e) => {
      if (child.pid === undefined) fail(`worker host ${o.name} could not start ${o.python}: ${e.message} (set STRATO_PYTHON or --python there)`);
    });
    // What the worker started is in its process group (runtime.py): it goes with the worker, and with it the GPUs it
    // held (a leftover holding the worker's output pipes would also hold back 'close', the exit's report).
    child.on('exit', () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // no process of its group is left
      }
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

  /** The node stayed out of reach: its workers stop (their jobs run again elsewhere), and the next node given is joined. */
  const moveOn = async (reason: string) => {
    const from = current().url;
    stopAll('SIGKILL');
    workers.clear();
    events = [];
    for (let tried = 1; tried < urls.length && !closing; tried++) {
      at = (at + 1) % urls.length;
      current().link.close();
      use(joinedTo(urls[at], o.key));
      try {
        reg = await register();
        o.log(`${from} was out of reach for ${FAILOVER_MS / 1000} s (${reason}): joined ${current().url} as worker host ${o.name}`);
        return;
      } catch (e) {
        o.log(`cannot join ${current().url} either (${(e as Error).message})`);
      }
    }
  };

  const loop = (async () => {
    let unreachableSince = 0;
    while (!closing) {
      try {
        const r = await post(`/_agent/${reg.hostId}/poll`, { waitMs: reg.pollWaitMs }, reg.pollWaitMs + CONNECT_TIMEOUT_MS);
        if (r.status === 404) {
          if (closing) break; // the host left: the platform forgot it, as asked
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
          // A refusal (registering again: another agent took this host's name meanwhile) is said as the platform put it.
          const what = e instanceof UserError ? e.message : `cannot reach the platform at ${current().url} (${why(e)})`;
          o.log(`${what}; trying again every ${RETRY_MS / 1000} s`);
        }
        if (urls.length > 1 && Date.now() - unreachableSince >= FAILOVER_MS) {
          await moveOn(why(e));
          unreachableSince = 0;
          continue;
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
      current().link.close();
    },
  };
}
