// A worker as the platform tracks it: one Python process serving one endpoint. The supervisor owns the
// process; the job engine owns which jobs it runs; the scheduler decides when it starts and stops.
import type { EventEmitter } from 'node:events';
import type { Job } from '../jobs/job';
import type { Taker } from '../jobs/endpointQueue';

/** Health buckets of decisions.md plus the platform's own retirement states. */
export type WorkerPhase = 'initializing' | 'ready' | 'draining' | 'stopping' | 'exited';

export interface Worker {
  readonly id: string;
  readonly endpointId: string;
  /** Bearer token of this worker on `/_worker/...`. */
  readonly token: string;
  /** Endpoint configuration revision the worker was started with; older ones are drained. */
  readonly revision: number;
  /** The build it runs from (its files stay while it runs: controlPlane/artifacts.ts). */
  readonly buildId: string;
  readonly maxConcurrency: number;
  readonly loadBalanced: boolean;
  phase: WorkerPhase;
  process: WorkerProcess | null;
  /** Forked from the endpoint's template rather than started as a new interpreter. */
  forked?: boolean;
  /** Jobs the worker owns (queue endpoints). */
  jobs: Set<Job>;
  /** Requests being proxied to it (load-balanced endpoints). */
  inFlight: number;
  /** Load-balanced workers: the port its HTTP server listens on. */
  port?: number;
  /** Load-balanced workers: the address of that server when it is not loopback (a container). */
  host?: string;
  spawnedAt: number;
  readyAt?: number;
  /** Last request of any kind from the worker (heartbeat watchdog), real time. */
  lastSeen: number;
  /** While its heartbeats are late: the CPU time its process had used, when that last grew, whether that was logged (liveness.ts). */
  /** The watchdog's samples of a late worker's CPU time: the last one, and when it last grew (undefined: not yet). */
  lateCpu?: { ms: number; at?: number; told: boolean };
  /** Last time it had work; with idle_timeout it decides when a worker above the minimum stops. */
  lastBusy: number;
  /** Job id -> when the platform first told the worker to drop it (cancel, timeout). */
  cancelRequested: Map<string, number>;
  /** Last lines of stderr, for error messages. */
  stderrTail: string[];
  /** Why the platform could not start its process: the platform's own words, not the worker's output (exitText.ts). */
  spawnError?: string;
  /** The host it runs on (hosts.ts): 'local', or a worker host's id. */
  hostId?: string;
  /** A GPU endpoint's worker started on the CPU (no host had a GPU for it then): it gives way once one has. */
  onCpu?: boolean;
  /** The endpoint's worker slot it holds for the whole service (slots.ts); below workers.min: a minimum's worker. */
  slot?: number;
  /** Its job channel (workerChannel.ts), parked on its queue for as long as it is open; else it long-polls `take`. */
  channel?: WorkerChannel;
}

export interface WorkerChannel {
  taker: Taker;
  close(reason: string): void;
}

/** What the supervisor needs of a running worker: a child process, one forked from a template (forked.ts), or a
 * container that behaves like one (emits `exit` with (code, signal) and `error`; kill() sends a signal). */
export interface WorkerProcess extends EventEmitter {
  readonly pid?: number;
  readonly stdout: NodeJS.ReadableStream | null;
  readonly stderr: NodeJS.ReadableStream | null;
  kill(signal?: NodeJS.Signals): boolean;
}

export function isBusy(w: Worker): boolean {
  return w.jobs.size > 0 || w.inFlight > 0;
}

/** The health bucket a worker counts in: `initializing`, `running`, `idle`, or none when retiring. */
export function healthBucket(w: Worker): 'initializing' | 'running' | 'idle' | null {
  if (w.phase === 'initializing') return 'initializing';
  if (w.phase === 'exited') return null;
  if (isBusy(w)) return 'running';
  return w.phase === 'ready' ? 'idle' : null;
}
