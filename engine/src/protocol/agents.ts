// The worker-host protocol between `strato platform agent` and the platform (docs/operations.md): JSON over HTTP
// under /_agent/, authenticated with an admin key. The agent registers, long-polls for commands (the poll is also
// its heartbeat), posts its workers' output and exits, and downloads builds by id.

/** The path prefix of the agent routes on the platform's server. */
export const AGENT_PREFIX = '/_agent/';

/** `POST /_agent/register`: what a host offers. */
export interface HostRegistration {
  /** Unique per host; a host that registers again under its name replaces its earlier registration. */
  name: string;
  /**
   * The agent's own id, kept in its data dir: the same agent registering again (restarted, or after the platform forgot
   * it) replaces its registration; another agent is refused a name a live host holds (two machines cloned with one
   * hostname). Absent from older agents: their registration replaces any.
   */
  agent?: string;
  /** Catalog datacenter id; absent: the host stands in for every datacenter. */
  datacenter?: string;
  cpus: number;
  /** GPU names, in CUDA_VISIBLE_DEVICES index order. */
  gpus: string[];
  /** The newest CUDA version the host's driver supports ("12.4"). */
  cudaVersion?: string;
  version: string;
}

export interface HostRegistered {
  hostId: string;
  /** How long the agent may hold a poll; it polls again at once, so that its polls stay within the loss bound. */
  pollWaitMs: number;
  /** A host that sends nothing for this long is lost: its workers count as exited and its GPUs leave the pool. */
  lostAfterMs: number;
}

/** What the platform tells an agent to do (the answer of `POST /_agent/<hostId>/poll`: `{commands: [...]}`). */
export type AgentCommand =
  | {
      type: 'launch';
      workerId: string;
      buildId: string;
      /** Content id of the build (its archive's SHA-256): the agent's cache key. */
      sha256: string;
      handlerFile: string;
      /** The worker's own environment (endpoint env, STRATO_*, CUDA_VISIBLE_DEVICES of this host's GPUs). */
      env: Record<string, string>;
    }
  | { type: 'signal'; workerId: string; signal: 'SIGTERM' | 'SIGKILL' };

/** What an agent reports (`POST /_agent/<hostId>/events` with `{events: [...]}`). */
export type AgentEvent =
  { type: 'output'; workerId: string; stream: 'out' | 'err'; lines: string[] } | { type: 'exit'; workerId: string; code: number | null; signal: string | null };

/** One host as `GET /_agent/hosts` lists it (and `strato platform status` prints it). */
export interface HostView {
  name: string;
  /** Null: every datacenter. */
  datacenters: string[] | null;
  local: boolean;
  gpus: { total: number; free: number; names: string[] };
  cudaVersion: string | null;
  cpus: number;
  workers: number;
  /** Last request from the host (ms since the epoch); null for the platform's own machine. */
  lastSeen: number | null;
  /** In a cluster, the platform node that holds it: `local` is that node's machine, else an agent joined to it. */
  node?: string;
}
