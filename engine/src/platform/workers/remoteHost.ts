// A worker host that joined with `strato platform agent`, as the platform sees it: a launcher that turns a worker's
// start into a `launch` command for the agent's long-poll, and worker processes whose output and exit arrive as the
// agent's events. A lost host ends its processes at once (killed), so the usual worker-loss path runs.
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type { AgentCommand, AgentEvent, HostRegistration } from '../../protocol/agents';
import { GpuAllocator, type GpuInventory } from './gpus';
import { HostChecks } from './hostChecks';
import type { WorkerHost } from './hosts';
import type { LaunchSpec, WorkerLauncher } from './launcher';
import type { Worker } from './worker';

/** A worker on a host, standing in for its process (the agent holds the real one). */
export class RemoteProcess extends EventEmitter {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private ended = false;

  constructor(
    readonly workerId: string,
    private readonly host: RemoteHost,
  ) {
    super();
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.ended) return false;
    // On a lost host nobody will report the exit: it counts as killed now.
    if (this.host.lost) this.finish(null, 'SIGKILL');
    else this.host.send({ type: 'signal', workerId: this.workerId, signal: signal === 'SIGKILL' ? 'SIGKILL' : 'SIGTERM' });
    return true;
  }

  finish(code: number | null, signal: string | null): void {
    if (this.ended) return;
    this.ended = true;
    this.stdout.end();
    this.stderr.end();
    // After the streams' last lines, as a child process's exit comes after its output.
    setImmediate(() => this.emit('exit', code, signal as NodeJS.Signals | null));
  }
}

export class RemoteHost implements WorkerHost {
  readonly datacenters: readonly string[] | null;
  readonly inventory: GpuInventory;
  readonly gpus: GpuAllocator;
  readonly checks: HostChecks;
  readonly cpus: number;
  readonly name: string;
  /** The agent's id (HostRegistration.agent) and the address it registered from. */
  readonly agent: string | undefined;
  readonly address: string;
  workers = 0;
  lastSeen = Date.now();
  lost = false;
  private queue: AgentCommand[] = [];
  private waiter: (() => void) | null = null;
  private procs = new Map<string, RemoteProcess>();

  readonly launcher: WorkerLauncher = {
    launch: (w: Worker, s: LaunchSpec) => {
      const p = new RemoteProcess(w.id, this);
      this.procs.set(w.id, p);
      p.once('exit', () => this.procs.delete(w.id));
      const { PYTHONPATH: _ignored, ...env } = s.env; // the agent sets its own paths to the build
      this.send({
        type: 'launch',
        workerId: w.id,
        buildId: s.endpoint.buildId,
        sha256: this.contentId(s.endpoint.buildId),
        handlerFile: s.endpoint.config.handlerFile,
        env,
      });
      return p;
    },
  };

  constructor(
    readonly id: string,
    reg: HostRegistration,
    /** The build's content id (archive SHA-256), the agent's cache key. */
    private readonly contentId: (buildId: string) => string,
    address = '',
  ) {
    this.name = reg.name;
    this.agent = reg.agent;
    this.address = address;
    this.datacenters = reg.datacenter ? [reg.datacenter] : null;
    this.inventory = { count: reg.gpus.length, names: reg.gpus, cudaVersion: reg.cudaVersion };
    this.gpus = new GpuAllocator(this.inventory);
    this.checks = new HostChecks(this.inventory);
    this.cpus = reg.cpus;
  }

  send(c: AgentCommand): void {
    this.queue.push(c);
    this.waiter?.();
  }

  /** The agent's long-poll: the commands waiting, or those that arrive within `waitMs`. */
  async poll(waitMs: number, onClose: (cb: () => void) => void): Promise<AgentCommand[]> {
    this.lastSeen = Date.now();
    if (this.queue.length === 0 && waitMs > 0) {
      this.waiter?.(); // one poll at a time: an older one answers (empty) now
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          if (this.waiter === done) this.waiter = null;
          resolve();
        };
        const t = setTimeout(done, waitMs);
        this.waiter = done;
        onClose(done);
      });
    }
    const out = this.queue;
    this.queue = [];
    return out;
  }

  /** Commands a poll took but could not deliver (its connection closed) go first into the next one. */
  requeue(cs: AgentCommand[]): void {
    this.queue.unshift(...cs);
  }

  event(e: AgentEvent): void {
    const p = this.procs.get(e.workerId);
    if (!p) return;
    if (e.type === 'output') for (const l of e.lines) (e.stream === 'err' ? p.stderr : p.stdout).write(`${l}\n`);
    else p.finish(e.code, e.signal);
  }

  /** The ids of the workers still running there. */
  workerIds(): string[] {
    return [...this.procs.keys()];
  }

  /** No word from the host within the bound: nothing more is sent; its workers' processes count as killed. */
  lose(): void {
    this.lost = true;
    this.waiter?.();
    this.queue = [];
  }
}
