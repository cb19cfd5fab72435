// Worker processes: `<python> -u handler_<name>.py` in the unpacked build with PYTHONPATH=<root>:<root>/deps and
// the environment of docs/worker-protocol.md (and ./environment.ts). Output goes to logs/<endpoint_id>.log (logFile.ts);
// the last stderr lines are kept for error messages. Stopping is SIGTERM, then SIGKILL after a grace period.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DeployedEndpoint } from '../controlPlane/service';
import type { Worker } from './worker';
import type { HostPool } from './hosts';
import type { Templates } from './templates';
import { localLauncher, type WorkerLauncher } from './launcher';
import { inheritedWorkerEnv } from './environment';
import { volumeEnv } from '../controlPlane/volumes';
import { howItEnded, lastMeaningful } from './exitText';
import { formatLogRecord, type LogRecordStream } from './logFile';
import { LineSplitter } from '../../util/lines';
import { LOG_LIMITS } from '../../protocol/logs';

export interface SupervisorDeps {
  python: string;
  platformUrl(): string;
  heartbeatMs: number;
  stopGraceMs: number;
  logsDir: string;
  buildDir(buildId: string): string;
  /** App and environment names of an endpoint (STRATO_APP, STRATO_ENV). */
  context(ep: DeployedEndpoint): { app: string; env: string };
  /** The machines workers run on (hosts.ts): the platform's own and the worker hosts of agents. */
  hosts: HostPool;
  /** Warm templates to fork workers from; absent (or answering null) means a plain start. */
  templates?: Templates;
  onExit(w: Worker, code: number | null, signal: NodeJS.Signals | null, wasPhase: Worker['phase']): void;
  log(line: string): void;
  /** Starts workers elsewhere than in local processes (the preview's containers). */
  launcher?: WorkerLauncher;
  /** The folder of one of an endpoint's network volumes on this machine. */
  volumePath(ep: DeployedEndpoint, v: { name: string; datacenter: string }): string;
  /** A line reached the endpoint's log file (followers of its log wake up). */
  onLogLine?(endpointId: string): void;
}

const TAIL_LINES = 30;
/** The longest an exit waits for the worker's output pipes to end. */
const OUTPUT_GRACE_MS = 1000;

export class Supervisor {
  private logs = new Map<string, fs.WriteStream>();
  private seq = 0;

  private readonly launcher: WorkerLauncher;

  constructor(private readonly d: SupervisorDeps) {
    this.launcher = d.launcher ?? localLauncher(d.python);
  }

  /** Why a worker of this endpoint cannot start now (no free GPU, no host in its datacenters), else null. */
  /** Whether a host that may run the endpoint's workers has GPUs (hosts.ts). */
  hasGpuFor(ep: DeployedEndpoint): boolean {
    return this.d.hosts.hasGpuFor(ep);
  }

  cannotStart(ep: DeployedEndpoint): string | null {
    const down = this.launcher.unavailable?.();
    if (down) return down;
    const placed = this.d.hosts.place(ep);
    return typeof placed === 'string' ? placed : null;
  }

  /** A new worker id (the scheduler claims the worker's slot under it before the worker starts). */
  newId(ep: DeployedEndpoint): string {
    return `w-${ep.id.slice(0, 6)}-${(++this.seq).toString(36)}-${randomBytes(3).toString('hex')}`;
  }

  spawn(ep: DeployedEndpoint, id = this.newId(ep)): Worker {
    const host = this.d.hosts.place(ep);
    if (typeof host === 'string') throw new Error(`no host for a worker of ${ep.name} (${host}): the scheduler asks cannotStart() first`);
    const root = this.d.buildDir(ep.buildId);
    const now = Date.now();
    const w: Worker = {
      id,
      endpointId: ep.id,
      token: randomBytes(24).toString('base64url'),
      revision: ep.revision,
      buildId: ep.buildId,
      maxConcurrency: ep.config.maxConcurrency,
      loadBalanced: ep.config.kind === 'LOAD_BALANCED',
      phase: 'initializing',
      process: null,
      jobs: new Set(),
      inFlight: 0,
      spawnedAt: now,
      lastSeen: now,
      lastBusy: now,
      cancelRequested: new Map(),
      stderrTail: [],
      hostId: host.id,
    };
    const { app, env } = this.d.context(ep);
    const inherited = inheritedWorkerEnv();
    const own: Record<string, string> = {
      ...ep.config.env,
      PYTHONPATH: [root, path.join(root, 'deps')].join(path.delimiter),
      PYTHONUNBUFFERED: '1',
      STRATO_PLATFORM_URL: this.d.platformUrl(),
      STRATO_WORKER_TOKEN: w.token,
      STRATO_WORKER_ID: w.id,
      STRATO_ENDPOINT_ID: ep.id,
      STRATO_ENDPOINT_NAME: ep.name,
      STRATO_MAX_CONCURRENCY: String(ep.config.maxConcurrency),
      STRATO_HEARTBEAT_MS: String(this.d.heartbeatMs),
      STRATO_APP: app,
      STRATO_ENV: env,
    };
    if (w.loadBalanced) own.STRATO_LB_PORT = '0';
    const volumes = ep.config.volumes.map((v) => ({ name: v.name, hostPath: this.d.volumePath(ep, v) }));
    Object.assign(
      own,
      volumeEnv(volumes, (i) => volumes[i].hostPath),
    );
    const isGpu = !ep.config.cpu;
    if (isGpu) {
      const devices = host.gpus.assign(w.id, ep.id, { count: ep.config.gpuCount, gpuIds: ep.config.gpuIds });
      if (devices === null) throw new Error(`no free GPU for a worker of ${ep.name}: the scheduler asks canStart() first`);
      own.CUDA_VISIBLE_DEVICES = devices;
      w.onCpu = devices === '';
      // CUDA numbers GPUs fastest first unless told otherwise; the indexes above are nvidia-smi's (PCI bus order).
      if (devices) own.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
    } else own.CUDA_VISIBLE_DEVICES = ''; // a CPU endpoint never takes a GPU, whatever the machine's detection missed
    const processEnv: NodeJS.ProcessEnv = { ...inherited, ...own };
    // Warm templates fork local processes; another launcher (the preview's containers, a worker host's agent)
    // starts workers its own way.
    const launcher = host.launcher ?? this.launcher;
    const forked = this.d.launcher || host.launcher ? null : (this.d.templates?.fork(ep, root, processEnv, w.id) ?? null);
    w.forked = forked !== null;
    const local = !host.launcher && !this.d.launcher; // a process of this machine (not a container, not a host's)
    const child = forked ?? launcher.launch(w, { endpoint: ep, root, env: own, processEnv, gpuCount: isGpu ? ep.config.gpuCount : 0, volumes });
    w.process = child;
    host.workers++;
    if (host.launcher)
      this.writeLog(ep.id, w.id, 'P', `started on worker host ${host.name}${own.CUDA_VISIBLE_DEVICES ? ` (GPU ${own.CUDA_VISIBLE_DEVICES})` : ''}`);
    const note = isGpu ? host.gpus.note(ep.config.gpuIds) : null;
    if (note) this.writeLog(ep.id, w.id, 'P', note);
    if (forked) this.writeLog(ep.id, w.id, 'P', "forked from the endpoint's template");
    // The process may exit before its pipes deliver the last of its output: the exit is handled once both ended.
    let open = 0;
    let outputEnded = () => undefined as void;
    /** Logs a stream's lines as they come; returns what logs its last line when it has no newline (a crash's message). */
    const pipe = (stream: NodeJS.ReadableStream | null, isErr: boolean) => {
      const lines = new LineSplitter((line) => {
        this.writeLog(ep.id, w.id, isErr ? 'E' : 'O', line);
        if (isErr) {
          w.stderrTail.push(line);
          if (w.stderrTail.length > TAIL_LINES) w.stderrTail.shift();
        }
      }, LOG_LIMITS.lineChars);
      const flush = () => lines.flush();
      stream?.setEncoding('utf8');
      stream?.on('data', (text: string) => lines.push(text));
      if (stream) open++;
      stream?.on('end', () => {
        flush();
        if (--open === 0) outputEnded();
      });
      return flush;
    };
    const flushes = [pipe(child.stdout, false), pipe(child.stderr, true)];
    let ended = false;
    const end = (code: number | null, signal: NodeJS.Signals | null) => {
      if (ended) return;
      ended = true;
      // What the worker started (a DataLoader's processes) is in its process group (runtime.py): it goes with the worker,
      // before the worker's GPUs are handed to another. Only here: a worker host's agent ends its own workers' groups.
      if (local && child.pid) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // no process of its group is left
        }
      }
      host.gpus.release(w.id);
      host.workers--;
      // Nothing more goes to it; its jobs fail or run again once its last lines are in the log, which they explain (a
      // job's error sends the reader there): after its pipes end (OUTPUT_GRACE_MS at most: a process it started
      // outside its group may hold them) and the log has them.
      const was = w.phase;
      w.phase = 'exited';
      let handled = false;
      const handle = () => {
        if (handled) return;
        handled = true;
        clearTimeout(grace);
        for (const flush of flushes) flush();
        this.logFor(ep.id).write('', () => {
          w.process = null;
          this.d.onExit(w, code, signal, was);
        });
      };
      const grace = setTimeout(handle, OUTPUT_GRACE_MS);
      if (open === 0) setImmediate(handle);
      else outputEnded = handle;
    };
    child.on('error', (e) => {
      w.spawnError = `could not start ${this.d.python}: ${e.message} (set STRATO_PYTHON or --python to a Python 3 interpreter)`;
      if (child.pid === undefined) end(127, null); // never started: no 'exit' event follows
    });
    child.on('exit', end);
    return w;
  }

  /** SIGTERM now, SIGKILL after the grace period if it is still running. */
  stop(w: Worker): void {
    if (w.phase === 'exited') return;
    w.phase = 'stopping';
    const child = w.process;
    if (!child) return;
    child.kill('SIGTERM');
    const t = setTimeout(() => {
      if (w.process === child) child.kill('SIGKILL');
    }, this.d.stopGraceMs);
    t.unref();
  }

  kill(w: Worker): void {
    w.process?.kill('SIGKILL');
  }

  /** How the worker ended, and the last line of its error output that explains it (if any). */
  describeExit(w: Worker, code: number | null, signal: NodeJS.Signals | null): { how: string; tail: string } {
    const how = w.spawnError ? `worker ${w.id}: ${w.spawnError}` : `worker ${w.id} ${howItEnded(code, signal)}`;
    return { how, tail: lastMeaningful(w.stderrTail) };
  }

  /** One line into the endpoint's log: a worker's or a template's output (templates.ts), or a note of the platform. */
  writeLog(endpointId: string, source: string, stream: LogRecordStream, line: string): void {
    this.logFor(endpointId).write(formatLogRecord(source, stream, line), () => this.d.onLogLine?.(endpointId));
  }

  close(): void {
    this.d.templates?.close();
    for (const s of this.logs.values()) s.end();
    this.logs.clear();
  }

  private logFor(endpointId: string): fs.WriteStream {
    let s = this.logs.get(endpointId);
    if (!s) {
      s = fs.createWriteStream(path.join(this.d.logsDir, `${endpointId}.log`), { flags: 'a' });
      s.on('error', (e) => this.d.log(`strato platform: cannot write worker log: ${e.message}`));
      this.logs.set(endpointId, s);
    }
    return s;
  }
}
