// Runs the platform's workers as containers: the unpacked build mounted read-only at /app, the worker's own
// environment (never the host's), on the preview network under the endpoint's name. To the supervisor a container
// looks like a child process: its output on stdout/stderr, `exit` with its status, kill() as a signal.
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { containerAddress, createContainer, followLogs, killContainer, removeContainer, startContainer, waitContainer, type DockerEngine } from '../containers';
import type { LaunchSpec, WorkerLauncher } from '../platform/workers/launcher';
import { containerVolumePath, volumeEnv } from '../platform/controlPlane/volumes';
import type { Worker, WorkerProcess } from '../platform/workers/worker';

/** Errors of the engine's socket itself: the engine is gone, not the container. */
const ENGINE_GONE = new Set(['ENOENT', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EACCES']);
/** How often a gone engine is asked again whether it answers. */
const ENGINE_PROBE_MS = 1000;

/** The name containers reach the platform by (an extra host entry for the network's gateway). */
export const PLATFORM_HOST = 'strato-platform';
const APP_DIR = '/app';

export interface ContainerLauncherOptions {
  engine: DockerEngine;
  /** Set once the network exists (before any worker starts). */
  network: () => { name: string; gateway: string; platformPort: number };
  /** Image of each endpoint by name (its hardware's base image). */
  images: Map<string, string>;
  /** Whether the engine gives containers GPUs (an NVIDIA runtime); known once the engine is asked. */
  gpus: () => boolean;
  labels: Record<string, string>;
  /** Container name prefix (the project's preview). */
  prefix: string;
  /** Secrets from the project's .env, passed as environment. */
  secrets: Record<string, string>;
  log: (line: string) => void;
}

class ContainerProcess extends EventEmitter implements WorkerProcess {
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly pid = undefined;
  id: string | null = null;
  killed: NodeJS.Signals | null = null;
  exited = false;

  constructor(private readonly engine: DockerEngine) {
    super();
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    this.killed = signal;
    if (this.id && !this.exited) {
      const id = this.id;
      const done = signal === 'SIGKILL' ? removeContainer(this.engine, id) : killContainer(this.engine, id, signal);
      done.catch(() => {});
    }
    return true;
  }

  end(code: number | null, why?: string): void {
    if (this.exited) return;
    this.exited = true;
    if (why) this.stderr.write(`${why}\n`);
    this.stdout.end();
    this.stderr.end();
    const sig = this.killed && code !== 0 ? this.killed : null;
    setImmediate(() => this.emit('exit', sig ? null : code, sig));
  }
}

export class ContainerLauncher implements WorkerLauncher {
  /** Containers this launcher made and has not removed yet. */
  readonly live = new Set<string>();
  readonly runsImages = true;
  /** Each launched container's life, from its creation to its removal. */
  private readonly running = new Set<Promise<void>>();
  /** Why the engine is out of reach (its socket refused a start), while it is; a probe clears it once it answers. */
  private down: string | null = null;
  private probing = false;

  constructor(private readonly o: ContainerLauncherOptions) {}

  unavailable(): string | null {
    if (this.down && !this.probing) {
      this.probing = true;
      const probe = setTimeout(() => {
        this.o.engine
          .call('GET', '/_ping')
          .then(
            () => {
              this.o.log(`strato preview: the Docker engine answers again on ${this.o.engine.socket}: workers start again`);
              this.down = null;
            },
            () => undefined,
          )
          .finally(() => (this.probing = false));
      }, ENGINE_PROBE_MS);
      probe.unref();
    }
    return this.down;
  }

  launch(w: Worker, s: LaunchSpec): WorkerProcess {
    const proc = new ContainerProcess(this.o.engine);
    const running = this.run(w, s, proc).catch((e: NodeJS.ErrnoException) => {
      // The engine itself is gone (stopped, its socket removed): nothing is wrong with the endpoint. Workers wait for
      // it (unavailable()), and the endpoints' jobs wait rather than fail.
      if (e.code && ENGINE_GONE.has(e.code)) {
        if (!this.down)
          this.o.log(`strato preview: the Docker engine stopped answering on ${this.o.engine.socket} (${e.code}): workers start again once it answers`);
        this.down = `the Docker engine does not answer on ${this.o.engine.socket} (${e.code}): start it again, and the preview's workers start`;
        return proc.end(125, this.down);
      }
      proc.end(125, `the container of ${s.endpoint.name} could not start: ${e.message}`);
    });
    this.running.add(running);
    void running.finally(() => this.running.delete(running));
    return proc;
  }

  /**
   * Resolves when every container this launcher started has ended and its output and exit went to the supervisor
   * (timeoutMs at most). The platform's close does not wait for a worker it kills: the preview waits here before it
   * removes the network (still in use until then) and the data dir (the supervisor still writes the worker's log).
   */
  async settled(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.running.size && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.running]), new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref())]);
    }
    await new Promise((r) => setImmediate(r)); // the exit is emitted on the next turn
  }

  private async run(w: Worker, s: LaunchSpec, proc: ContainerProcess): Promise<void> {
    const net = this.o.network();
    const gpuCount = this.o.gpus() ? s.gpuCount : 0;
    const env: Record<string, string> = {
      ...this.o.secrets,
      ...s.env,
      PYTHONPATH: `${APP_DIR}:${APP_DIR}/deps`,
      STRATO_PLATFORM_URL: `http://${PLATFORM_HOST}:${net.platformPort}`,
    };
    if (w.loadBalanced) env.STRATO_LB_HOST = '0.0.0.0';
    // Volumes are mounted read-write at the documented container path; their variables say where.
    Object.assign(env, volumeEnv(s.volumes, containerVolumePath));
    // Without a GPU runtime the devices are not there: let frameworks see none instead of a host index.
    if (!gpuCount) delete env.CUDA_VISIBLE_DEVICES;
    const id = await createContainer(this.o.engine, {
      name: `${this.o.prefix}-${s.endpoint.name}-${w.id.slice(-6)}`,
      image: this.o.images.get(s.endpoint.name) ?? '',
      cmd: ['python3', '-u', s.endpoint.config.handlerFile],
      env,
      workingDir: APP_DIR,
      labels: { ...this.o.labels, 'strato.endpoint': s.endpoint.name, 'strato.worker': w.id },
      mounts: [
        { host: s.root, container: APP_DIR },
        ...s.volumes.map((v, i) => ({ host: v.hostPath, container: containerVolumePath(i, v.name), writable: true })),
      ],
      network: net.name,
      aliases: [s.endpoint.name],
      extraHosts: [`${PLATFORM_HOST}:${net.gateway}`],
      gpuCount,
    });
    proc.id = id;
    this.live.add(id);
    if (proc.killed) {
      await this.remove(id);
      proc.end(null);
      return;
    }
    let logs: Awaited<ReturnType<typeof followLogs>>;
    try {
      await startContainer(this.o.engine, id);
      // The platform forwards load-balanced requests to the container's address (the port the worker reports).
      if (w.loadBalanced) w.host = await containerAddress(this.o.engine, id, net.name);
      logs = await followLogs(this.o.engine, id, (text, isErr) => (isErr ? proc.stderr : proc.stdout).write(text));
    } catch (e) {
      // A container that did not start is not left behind (one more on every retry of its worker).
      await this.remove(id);
      throw e;
    }
    const code = await waitContainer(this.o.engine, id);
    // Let the last log lines arrive: they explain the exit.
    await new Promise<void>((r) => {
      if (logs.readableEnded) return r();
      logs.once('end', () => r());
      setTimeout(r, 500).unref();
    });
    logs.destroy();
    await this.remove(id);
    proc.end(code);
  }

  private async remove(id: string): Promise<void> {
    try {
      await removeContainer(this.o.engine, id);
    } catch (e) {
      this.o.log(`strato preview: could not remove container ${id.slice(0, 12)}: ${(e as Error).message}`);
    }
    this.live.delete(id);
  }
}
