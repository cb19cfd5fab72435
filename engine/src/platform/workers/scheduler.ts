// Scaling and fault handling per endpoint: keeps `workers.min` up, starts more while work waits (scaling.ts: by the
// endpoint's scaler, QUEUE_DELAY or REQUEST_COUNT, up to `workers.max`), stops a worker above the minimum after
// `idle_timeout` without work, rolls workers to a new endpoint revision, replaces hung workers (no heartbeat) and
// dead ones, and backs off when workers cannot start. Both bounds are the whole service's: a worker starts only
// once it holds one of the endpoint's slots (workerStarts.ts claims them: slots.ts), and only the workers of slots
// below the minimum stay idle.
import type { Clock } from '../clock';
import type { ControlPlane, DeployedEndpoint } from '../controlPlane/service';
import type { Dispatcher } from '../jobs/dispatch';
import type { JobEngine } from '../jobs/jobEngine';
import type { Supervisor } from './supervisor';
import type { WorkerSlots } from './slots';
import { wantedWorkers } from './scaling';
import { Waiters } from '../../util/waiters';
import { healthBucket, isBusy, type Worker } from './worker';
import { withErrorOutput, withoutErrorOutput } from './exitText';
import { hungAfterMs, judgeLate } from './liveness';
import { fitsRevision, isLive, newEndpointWorkers, type EndpointWorkers } from './endpointWorkers';
import { WorkerStarts } from './workerStarts';

export interface SchedulerDeps {
  cp: ControlPlane;
  engine: JobEngine;
  dispatch: Dispatcher;
  supervisor: Supervisor;
  heartbeatMs: number;
  startTimeoutMs: number;
  /** Requests waiting for a load-balanced worker. */
  lbPending(endpointId: string): number;
  /** Jobs queued on other nodes that this node's workers are to take (a cluster's GPU backlog: gpuOffers.ts). */
  backlog?(ep: DeployedEndpoint): number;
  /** Why the endpoint's workers cannot start on this machine (a GPU driver below min_cuda_version), or null. */
  blocked(ep: DeployedEndpoint): string | null;
  /** The platform's clock: queue delay is measured on it, as job times are. */
  clock: Clock;
  /** The endpoints' worker slots, for the whole service. */
  slots: WorkerSlots;
  log(line: string): void;
}

/** How often this node checks that the store holds the slots of its workers, and nothing more. */
const SLOT_SYNC_MS = 5000;
export class Scheduler {
  private endpoints = new Map<string, EndpointWorkers>();
  private pending = new Set<string>();
  private ticker: NodeJS.Timeout | null = null;
  private closing = false;
  /** Requests waiting for a worker of an endpoint to be ready (load-balanced routes, lbRouter.ts). */
  private readonly readyWaiters = new Waiters();
  private lastSlotSync = 0;
  private readonly starter: WorkerStarts;

  constructor(private readonly d: SchedulerDeps) {
    this.starter = new WorkerStarts({
      cp: d.cp,
      dispatch: d.dispatch,
      supervisor: d.supervisor,
      slots: d.slots,
      log: (line) => d.log(line),
      closing: () => this.closing,
      allHeld: (id) => this.readyWaiters.wake(id),
      refused: (ep, s, error) => {
        this.d.log(`strato platform: ${error}`);
        if (s.starts.failed(ep.revision, error)) this.failQueued(ep.id, error);
      },
      demand: (id) => this.demand(id),
    });
  }

  start(): void {
    this.ticker = setInterval(() => this.tick(), Math.min(250, this.d.heartbeatMs));
    this.ticker.unref();
    for (const ep of this.d.cp.listEndpoints()) this.demand(ep.id);
  }

  state(endpointId: string): EndpointWorkers {
    let s = this.endpoints.get(endpointId);
    if (!s) this.endpoints.set(endpointId, (s = newEndpointWorkers()));
    return s;
  }

  workersOf(endpointId: string): Worker[] {
    return [...this.state(endpointId).workers];
  }

  /** Whether a worker of this node still runs from the build (deleted builds keep their files until none does). */
  runsBuild(buildId: string): boolean {
    for (const s of this.endpoints.values()) for (const w of s.workers) if (w.buildId === buildId) return true;
    return false;
  }

  counts(endpointId: string): { idle: number; running: number; initializing: number } {
    const c = { idle: 0, running: 0, initializing: 0 };
    for (const w of this.state(endpointId).workers) {
      const b = healthBucket(w);
      if (b) c[b]++;
    }
    return c;
  }

  /** Why the workers of the endpoint's current revision fail to start, if they do (an older revision's failure says nothing). */
  lastError(endpointId: string): string | null {
    return this.state(endpointId).starts.lastError(this.d.cp.endpoint(endpointId)?.revision);
  }

  /** Workers of the endpoint's current revision that ended before they were ready, in a row (0 once one is ready). */
  failedStarts(endpointId: string): number {
    return this.state(endpointId).starts.failures(this.d.cp.endpoint(endpointId)?.revision);
  }

  /** Why more workers wanted by the endpoint are not starting (all GPUs held), else null. */
  waitingReason(endpointId: string): string | null {
    return this.state(endpointId).waiting;
  }

  /** Something changed on the endpoint (jobs queued, a worker freed, config saved): reconcile soon. */
  demand(endpointId: string): void {
    if (this.pending.has(endpointId) || this.closing || !this.ticker) return; // not started yet
    this.pending.add(endpointId);
    queueMicrotask(() => {
      this.pending.delete(endpointId);
      this.reconcile(endpointId);
    });
  }

  /** Resolves when a worker of the endpoint becomes ready (or after `ms`). */
  whenReady(endpointId: string, ms: number): Promise<void> {
    return this.readyWaiters.wait(endpointId, ms);
  }

  /** The worker said it is ready (imports done; load-balanced: listening on `port`). */
  ready(w: Worker, port?: number): void {
    if (w.phase === 'initializing') w.phase = 'ready';
    if (port) w.port = port;
    w.readyAt = w.readyAt ?? Date.now();
    this.state(w.endpointId).starts.cleared();
    this.readyWaiters.wake(w.endpointId);
    this.demand(w.endpointId);
  }

  /** A worker of this revision of the endpoint is starting here. */
  starting(endpointId: string, revision: number): boolean {
    return [...this.state(endpointId).workers].some((w) => w.phase === 'initializing' && w.revision === revision);
  }

  /**
   * When this node's last claim found every slot of the endpoint held (by other nodes' workers, or older revisions'
   * still draining), if it starts no worker of the revision: a request waiting here may go to a node that has one.
   */
  slotsHeldSince(ep: DeployedEndpoint): number | null {
    return this.starting(ep.id, ep.revision) ? null : this.d.slots.fullSince(ep.id, ep.config.workersMax);
  }

  /**
   * Runs at every change of an endpoint's work (twice a job: queued, ended), so its usual course makes no array and no
   * closure: it counts the workers in one pass (it was 2 KB of the 23 KB a sequential `/runsync` allocated, by V8's
   * sampling heap profiler).
   */
  reconcile(endpointId: string): void {
    if (this.closing) return;
    const s = this.state(endpointId);
    const ep = this.d.cp.endpoint(endpointId);
    if (!ep) {
      for (const w of [...s.workers]) if (isLive(w)) this.retire(w);
      return;
    }
    s.starts.follow(ep.revision);
    const cfg = ep.config;
    // An older revision's workers, and those of slots a lowered max no longer has, finish and go; their slots are
    // free once they exited, so a roll never has more than max workers.
    let current = 0;
    let inFlight = 0;
    let retiring: Worker[] | null = null;
    // Workers of a GPU endpoint that started on the CPU (no GPU for it then, or not yet: a worker host joining late)
    // give way to workers on a GPU once a host has one for it; they finish their jobs first.
    const gpuCame = !cfg.cpu && [...s.workers].some((w) => w.onCpu && isLive(w)) && this.d.supervisor.hasGpuFor(ep);
    for (const w of s.workers) {
      if (!isLive(w)) continue;
      if (fitsRevision(w, ep) && !(gpuCame && w.onCpu)) {
        current++;
        inFlight += w.inFlight;
      } else (retiring ??= []).push(w);
    }
    if (retiring) for (const w of retiring) this.retire(w);
    const now = this.d.clock.now();
    let work: number;
    if (cfg.kind === 'QUEUE') {
      const c = this.d.engine.counts(endpointId);
      const backlog = this.d.backlog?.(ep) ?? 0;
      s.backlogSince = backlog > 0 ? (s.backlogSince ?? now) : undefined;
      work = c.inQueue + c.inProgress + backlog;
    } else work = this.d.lbPending(endpointId) + inFlight;
    const { wanted, scaledUp } = wantedWorkers(cfg, {
      current,
      work,
      oldestQueuedAt: () => {
        const here = this.d.engine.oldestQueuedAt(ep.id);
        return here === undefined || s.backlogSince === undefined ? (here ?? s.backlogSince) : Math.min(here, s.backlogSince);
      },
      now,
      lastScaleUpAt: s.lastScaleUpAt,
    });
    if (scaledUp) s.lastScaleUpAt = now;
    s.waiting = null;
    // Every slot held (elsewhere) is known for a while without a statement: the tick asks again later.
    const more = current < wanted && !this.d.slots.knownFull(ep.id, cfg.workersMax) ? wanted - current : 0;
    if (!s.claiming && (more > 0 || this.starter.minimumOpen(ep, s.workers)) && Date.now() >= s.starts.nextStartAt && !this.d.blocked(ep)) {
      // GPUs are exclusive: a worker starts only when its GPUs are free (never oversubscribed).
      s.waiting = this.d.supervisor.cannotStart(ep);
      if (!s.waiting)
        this.starter.claimAndStart(ep, s, more).catch((e: Error) => this.d.log(`strato platform: starting a worker of ${ep.name} failed: ${e.message}`));
    }
    if (work === 0) this.stopIdle(ep, s.workers);
  }

  /** Retires the ready workers above the minimum (slots from workers.min up) idle for the endpoint's idle_timeout. */
  private stopIdle(ep: DeployedEndpoint, workers: Iterable<Worker>): void {
    const now = Date.now();
    let idle: Worker[] | null = null;
    for (const w of workers)
      if (w.phase === 'ready' && fitsRevision(w, ep) && (w.slot ?? 0) >= ep.config.workersMin && !isBusy(w) && now - w.lastBusy >= ep.config.idleTimeout * 1000)
        (idle ??= []).push(w);
    if (idle) for (const w of idle) this.retire(w);
  }

  /** Takes a worker out of service: it finishes what it runs, then stops. */
  private retire(w: Worker): void {
    if (w.phase === 'initializing' || !isBusy(w)) {
      this.d.dispatch.releaseTakers(w);
      this.d.supervisor.stop(w);
    } else {
      w.phase = 'draining';
      this.d.dispatch.releaseTakers(w);
    }
  }

  /**
   * A job or request of the worker ended: a draining worker may stop now. A job taken from a worker whose
   * handler is synchronous (cancelled, timed out) may still run in it: the worker is retired, which stops it.
   */
  freed(w: Worker, abandoned = false): void {
    if (abandoned && w.phase === 'ready' && !this.d.cp.endpoint(w.endpointId)?.config.asyncHandler) {
      this.d.log(`strato platform: retiring worker ${w.id}: a job it ran was cancelled or timed out, and stopping the worker stops its synchronous handler`);
      this.retire(w);
    }
    if (w.phase === 'draining' && !isBusy(w)) this.d.supervisor.stop(w);
    else this.demand(w.endpointId);
  }

  /** The heartbeat watchdog and idle timeouts, every few hundred ms. */
  private tick(): void {
    const now = Date.now();
    if (now - this.lastSlotSync >= SLOT_SYNC_MS) {
      this.lastSlotSync = now;
      void this.syncSlots();
    }
    const hungAfter = hungAfterMs(this.d.heartbeatMs);
    for (const [endpointId, s] of this.endpoints) {
      for (const w of s.workers) {
        if (w.phase === 'initializing' && now - w.spawnedAt > this.d.startTimeoutMs) {
          w.stderrTail.push(`the worker was not ready ${Math.round(this.d.startTimeoutMs / 1000)} s after it started`);
          this.d.supervisor.kill(w);
        } else if (w.phase === 'ready' || w.phase === 'draining') {
          const late = judgeLate(w, now, hungAfter);
          if (!late) continue;
          if (late.computing) {
            if (late.first)
              this.d.log(
                `strato platform: worker ${w.id} sent no heartbeat for ${now - w.lastSeen} ms but is computing (one long call of C code ` +
                  "holds Python's GIL); its jobs go on until their execution timeout",
              );
            continue;
          }
          this.d.log(`strato platform: worker ${w.id} sent no heartbeat for ${now - w.lastSeen} ms; replacing it`);
          this.d.dispatch.workerGone(w, 'requeue', late.why);
          w.phase = 'stopping';
          this.d.supervisor.kill(w);
        }
      }
      this.reconcile(endpointId);
    }
  }

  /** Workers whose slots the store no longer holds (taken while this node counted as lost) stop; gone ones' rows go. */
  private async syncSlots(): Promise<void> {
    const all = () => [...this.endpoints.values()].flatMap((s) => [...s.workers]).filter((w) => w.slot !== undefined);
    try {
      const lost = new Set(await this.d.slots.sync(() => all().map((w) => w.id)));
      for (const w of all())
        if (lost.has(w.id) && w.phase !== 'exited' && w.phase !== 'stopping') {
          this.d.log(`strato platform: stopping worker ${w.id}: its slot went to another node while this node was out of reach of the database`);
          w.slot = undefined; // the slot is another worker's now: not released when this one exits
          this.replace(w, 'its slot went to another node');
        }
    } catch {
      /* the database is out of reach: the next tick tries again */
    }
  }

  /** Replaces a worker whose cancelled job kept running (its other jobs run again elsewhere). */
  replace(w: Worker, reason: string): void {
    this.d.log(`strato platform: replacing worker ${w.id}: ${reason}`);
    this.d.dispatch.workerGone(w, 'requeue', `worker ${w.id} was replaced: ${reason}`);
    w.phase = 'stopping';
    this.d.supervisor.kill(w);
  }

  /** A worker process ended. Unexpected ends fail its jobs; repeated start failures fail the queue. */
  exited(w: Worker, code: number | null, signal: NodeJS.Signals | null, wasPhase: Worker['phase']): void {
    const s = this.state(w.endpointId);
    s.workers.delete(w);
    if (w.slot !== undefined) this.d.slots.release(w.endpointId, w.id);
    const { how, tail } = this.d.supervisor.describeExit(w, code, signal);
    const expected = wasPhase === 'stopping' || wasPhase === 'draining' || this.closing;
    // A job's error is read by every caller of the endpoint: it says where the worker's output is, not what it was.
    const endpointName = this.d.cp.endpoint(w.endpointId)?.name;
    const jobError = `${how} ${expected ? 'while it was being stopped' : 'while running this job'}`;
    this.d.dispatch.workerGone(w, expected ? 'requeue' : 'fail', withoutErrorOutput(withErrorOutput(jobError, tail), endpointName));
    // A worker of an older revision that fails to start (a roll to a fix under way) counts for nothing now.
    const current = this.d.cp.endpoint(w.endpointId)?.revision === w.revision;
    if (!expected && !w.readyAt && current) {
      const error = withErrorOutput(`the endpoint's worker failed to start: ${how}`, tail);
      this.d.log(`strato platform: ${error}`);
      if (s.starts.failed(w.revision, error)) this.failQueued(w.endpointId, withoutErrorOutput(error, endpointName));
    } else if (!expected) this.d.log(`strato platform: ${withErrorOutput(how, tail)}`);
    this.demand(w.endpointId);
  }

  private failQueued(endpointId: string, error: string): void {
    this.d.engine.failQueued(endpointId, `${error}; fix the endpoint and deploy it again (under strato dev: save the fix), then retry the job`);
  }

  /** Stops every worker (platform shutdown); resolves when all exited or after the grace period. */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    if (this.ticker) clearInterval(this.ticker);
    const all = [...this.endpoints.values()].flatMap((s) => [...s.workers]);
    for (const w of all) {
      this.d.dispatch.releaseTakers(w);
      this.d.supervisor.stop(w);
    }
    const deadline = Date.now() + graceMs + 1000;
    // Exited, and its exit handled (its process let go once its last output is logged).
    const running = (w: Worker) => w.phase !== 'exited' || w.process !== null;
    while (all.some(running) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    for (const w of all) if (running(w)) this.d.supervisor.kill(w);
  }
}
