// Starts one platform node: the store (PGlite in the data dir, or a PostgreSQL server that other nodes may share:
// cluster.ts), the control plane, the job engine with its write-behind writer, the scheduler and supervisor of worker
// processes, and the HTTP server; `close()` stops workers (their jobs return to the queue), flushes the last group
// commit and releases the data dir.
import fs from 'node:fs';
import type { Principal } from './auth';
import { Artifacts } from './controlPlane/artifacts';
import { KeyRing } from './controlPlane/keys';
import { ControlPlane } from './controlPlane/service';
import { auditEntry } from './controlPlane/audit';
import { sendError } from './http';
import { startHousekeeping } from './housekeeping';
import { JobExpiry } from './jobs/jobExpiry';
import { Guard } from './graphql/guard';
import { graphqlHandler } from './graphql/handler';
import { jobsApi } from './jobsApi';
import { healthLoader, type HealthDeps, type HealthNotes } from './serviceHealth';
import { Dispatcher } from './jobs/dispatch';
import { INSTANCE_ID, JobEngine } from './jobs/jobEngine';
import { defaultNodeUrl, nodeIdOf } from './cluster';
import { localUrl } from '../util/hostUrl';
import { ClusterNode } from './clusterNode';
import { serviceHosts } from './serviceHosts';
import { LbRouter } from './lbRouter';
import { acquireLock } from './lock';
import { limits, resolveOptions, type PlatformOptions } from './options';
import { ensureLayout, loadOrCreateKey, platformLayout, userDataRoot, writeState } from '../protocol/layout';
import { createServer, listen } from './server';
import { workerChannels } from './workerChannel';
import { JobWriter } from './store/jobWriter';
import { defaultTemplateDir, openPglite } from './store/pglite';
import { SqlStore } from './store/sqlStore';
import { openPostgres, redactDatabaseUrl } from './store/postgres';
import { workerApi } from './workerApi';
import { Scheduler } from './workers/scheduler';
import { Supervisor } from './workers/supervisor';
import { WorkerSlots } from './workers/slots';
import { GpuAllocator, detectGpus } from './workers/gpus';
import { Templates } from './workers/templates';
import { Waiters } from '../util/waiters';
import { HostChecks } from './workers/hostChecks';
import { Volumes } from './controlPlane/volumes';
import { HostPool, localHost } from './workers/hosts';
import { AgentApi } from './agentApi';

export const PLATFORM_VERSION: string = (require('../../../package.json') as { version: string }).version;

export interface RunningPlatform {
  /** Base URL for clients ({base_url}). */
  url: string;
  port: number;
  apiKey: string;
  dataDir: string;
  /** This node's instance id: `u1` on the embedded database, a node id of its own on a PostgreSQL server. */
  instanceId: string;
  /** On a PostgreSQL server: the URL the other nodes reach this node at (`--node-url`, or a default: defaultNodeUrl). */
  nodeUrl?: string;
  /** The PostgreSQL server's URL as it may be shown (its password masked); absent on the embedded database. */
  database?: string;
  /** Job writer figures (group commits) and what jobs hold in memory, for the bench and tests. */
  stats(): { flushes: number; rows: number; failures: number; jobsInMemory: number; jobMemoryBytes: number; endedJobsCached: number };
  close(): Promise<void>;
}

export async function startPlatform(options: PlatformOptions & { pgliteTemplateDir?: string }): Promise<RunningPlatform> {
  const o = resolveOptions(options);
  const startedAt = Date.now();
  const layout = platformLayout(o.dataDir);
  ensureLayout(layout);
  const lock = acquireLock(layout.lockFile);
  // What a start that fails half-way must close again, latest first: a node whose port is taken would otherwise keep
  // its database connections and timers, and never exit.
  const undo: Array<() => unknown> = [];
  try {
    const apiKey = o.apiKey ?? loadOrCreateKey(layout.keyFile);
    // A PostgreSQL server when one is given (several nodes can share it), else the embedded PGlite in the data dir.
    const driver = o.database
      ? await openPostgres(o.database, o.log, o.databaseFrom)
      : await openPglite(layout.db, { templateDir: options.pgliteTemplateDir ?? defaultTemplateDir(userDataRoot()), log: o.log });
    // On a server other nodes may share, this node has an id of its own (kept in its data dir) and owns the jobs it accepts.
    undo.push(() => driver.close());
    const nodeId = o.database ? nodeIdOf(layout.root) : INSTANCE_ID;
    const store = await SqlStore.open(driver, { nodeId, notify: Boolean(o.database), lostMs: o.nodeLostMs });
    const artifacts = new Artifacts(layout, o.database ? store : undefined);
    const volumes = new Volumes(layout.volumes);
    let hosts: HostPool | null = null;
    const cp = await ControlPlane.load(store, artifacts, o.clock, {
      // Worker hosts add the datacenters they stand in for while they are connected.
      get datacenters() {
        return hosts ? hosts.served() : o.datacenters;
      },
      runsImages: options.workerLauncher?.runsImages ?? false,
      volumes,
    });
    cp.sync.clustered = Boolean(o.database);
    cp.log = o.log;
    const keys = await KeyRing.load(apiKey, store, o.clock, o.log);
    undo.push(() => keys.close());
    const delays = { eagerMs: o.groupCommitMs, lazyMs: o.lazyCommitMs, syncMs: o.syncCommitMs };
    const writer = new JobWriter(store, delays, (e) => o.log(`strato platform: the job store could not commit (${e.message}); retrying`));
    undo.push(() => writer.close());
    let port = o.port;
    const workerUrl = () => localUrl(o.host, port);

    // The parts reference each other through these late-bound hooks.
    let scheduler: Scheduler | null = null;
    let dispatch: Dispatcher | null = null;
    const engine = new JobEngine({
      clock: o.clock,
      instanceId: nodeId,
      writer,
      store,
      endedJobCacheBytes: o.endedJobCacheBytes,
      retention: o.retention,
      maxQueuedPerEndpoint: o.maxQueuedPerEndpoint,
      hasEndpoint: (id) => cp.endpoint(id)?.config.kind === 'QUEUE',
      onDemand: (id) => {
        dispatch?.wake(id);
        scheduler?.demand(id);
      },
      onWorkerFreed: (w, abandoned) => {
        scheduler?.freed(w, abandoned);
        dispatch?.offer(w); // after `freed`, which may retire it
      },
    });
    dispatch = new Dispatcher(engine, {
      executionTimeoutMs: (id) => cp.endpoint(id)?.config.executionTimeoutMs ?? limits.defaultExecutionLimitMs,
      streams: (id) => cp.endpoint(id)?.config.streaming ?? false,
      heartbeatMs: o.heartbeatMs,
      cancelGraceMs: Math.max(5000, 5 * o.heartbeatMs),
    });
    const inventory = detectGpus();
    const gpus = new GpuAllocator(inventory);
    const hostChecks = new HostChecks(inventory);
    const pool = (hosts = new HostPool(localHost(o.datacenters, inventory, gpus, hostChecks)));
    const templates = o.workerTemplates ? new Templates({ python: o.python, writeLog: (...a) => supervisor.writeLog(...a), log: o.log }) : undefined;
    const logWaiters = new Waiters();
    const supervisor = new Supervisor({
      onLogLine: (id) => logWaiters.wake(id),
      hosts: pool,
      templates,
      python: o.python,
      platformUrl: workerUrl,
      heartbeatMs: o.heartbeatMs,
      stopGraceMs: o.workerStopGraceMs,
      logsDir: layout.logs,
      buildDir: (id) => artifacts.buildDir(id),
      context: (ep) => ({
        app: cp.app(ep.appId)?.name ?? '',
        env: cp.environment(ep.environmentId)?.name ?? '',
      }),
      onExit: (w, code, signal, was) => scheduler?.exited(w, code, signal, was),
      log: o.log,
      launcher: options.workerLauncher,
      volumePath: (ep, v) => volumes.pathOf(ep.appId, v.datacenter, v.name),
    });
    undo.push(() => supervisor.close());
    let lb: LbRouter | null = null;
    let node: ClusterNode | undefined; // a cluster's node (PostgreSQL), once the server listens
    let nodeUrl: string | undefined;
    const slots = new WorkerSlots({ store, released: (id) => void node?.cluster.notify(`slot ${id} ${nodeId}`), log: o.log });
    // Slots this node held before it stopped (a crash) are free again: its workers went with it.
    await slots.sync(() => []);
    scheduler = new Scheduler({
      slots,
      cp,
      engine,
      dispatch,
      supervisor,
      heartbeatMs: o.heartbeatMs,
      startTimeoutMs: o.workerStartTimeoutMs,
      lbPending: (id) => lb?.pendingOf(id) ?? 0,
      backlog: (ep) => node?.gpuOffers.backlog(ep) ?? 0,
      // A build this node did not receive is fetched from the database first (clusters).
      blocked: (ep) => pool.unplaceable(ep) ?? artifacts.missing(ep.buildId, () => sched.demand(ep.id)),
      clock: o.clock,
      log: o.log,
    });
    const sched = scheduler;
    artifacts.inUse = (id) => sched.runsBuild(id);
    lb = new LbRouter({ keys, cp, scheduler: sched, coldStartWaitMs: Math.min(o.workerStartTimeoutMs, 120_000), peers: () => node?.lbPeers });
    undo.push(() => lb?.close());
    cp.onEndpointChange((ev) => {
      if (ev.type === 'deleted') {
        engine.dropEndpoint(ev.endpoint.id);
        templates?.drop(ev.endpoint.id);
      }
      sched.demand(ev.endpoint.id);
    });

    await store.deleteExpiredJobs(o.clock.now(), []);
    const loaded = engine.load(await store.loadLiveJobs(), await store.countEndedJobs());
    if (loaded.queued + loaded.rerun > 0) o.log(`strato platform: ${loaded.queued} queued jobs restored (${loaded.rerun} of them were running and run again)`);

    let baseUrl = '';
    /** Why an endpoint's workers cannot start here, and what this node's machine lacks for them. */
    const notes = (id: string): HealthNotes => {
      const ep = cp.endpoint(id);
      // The health view has one free-text note: the missing hardware, what the host lacks, a volume over its
      // quota, and why workers start without a template.
      const blocked = ep ? pool.unplaceable(ep) : null;
      const notes = [
        blocked,
        ep ? pool.gpuNote(ep) : null,
        ...(ep ? [...hostChecks.notes(ep.config), ...cp.volumeNotes(ep)] : []),
        sched.waitingReason(id),
        templates?.note(id) ?? null,
      ].filter(Boolean);
      const hardwareNote = notes.length ? [...new Set(notes)].join('; ') : null;
      return { lastError: sched.lastError(id) ?? (ep && templates?.lastError(ep)) ?? null, hardwareNote, blocked, defers: !!ep && pool.defers(ep) };
    };
    const healthDeps: HealthDeps = {
      engine,
      workerCounts: (id) => sched.counts(id),
      notes,
      get cluster() {
        return node?.cluster;
      },
    };
    const agents = new AgentApi({
      keys,
      hosts: pool,
      listHosts: () => serviceHosts(pool, node?.cluster),
      lostAfterMs: o.hostLostMs,
      build: (id) => {
        const b = cp.build(id);
        return b ? { file: artifacts.archivePath(id), sha256: b.sha256 } : null;
      },
      onHostLost: (ids, reason) => {
        for (const id of ids) {
          const w = engine.workers.get(id);
          if (w && w.phase !== 'exited') sched.replace(w, reason);
        }
      },
      log: o.log,
    });
    /** A key's scope checks; a refused change is written to the audit log (answered even when it cannot be written). */
    const guardOf = (principal: Principal) =>
      new Guard(principal, o.clock, (row) =>
        store.insertAudit(row).catch((e: Error) => o.log(`strato platform: could not write an audit entry (${e.message})`)),
      );
    const workerDeps = { engine, dispatch, scheduler: sched, log: o.log };
    const channels = workerChannels(workerDeps);
    const server = createServer({
      agent: agents.handle,
      keys,
      graphql: graphqlHandler(
        keys,
        (principal) => ({
          cp,
          keys,
          guard: guardOf(principal),
          baseUrl,
          version: PLATFORM_VERSION,
          instanceId: nodeId,
          nodes: async () => (node ? node.cluster.views() : [{ id: nodeId, url: baseUrl, startedAt, heartbeatAt: Date.now(), state: 'alive' as const }]),
          health: healthLoader(healthDeps),
          notes: (ep) => hostChecks.notes(ep.config),
          hosts: () => serviceHosts(pool, node?.cluster),
          audit: async (q) => (await store.listAudit(q)).map(auditEntry),
        }),
        o.log,
        () => cp.sync.catchUp(),
      ),
      jobs: jobsApi({
        keys,
        cp,
        engine,
        writer,
        store,
        health: healthDeps,
        streamWaitMs: o.streamWaitMs,
        logs: {
          logsDir: layout.logs,
          waiters: logWaiters,
          get cluster() {
            return node?.cluster;
          },
        },
        get cluster() {
          return node?.cluster;
        },
        get queueBound() {
          return node?.queueBound;
        },
        get sharing() {
          return node?.sharing;
        },
        log: o.log,
      }),
      lb: (req, res) => lb!.handle(req, res),
      worker: workerApi(workerDeps),
      workerChannel: (req, socket, head) => channels.open(req, socket, head),
      cluster: o.database
        ? async (req, res) => {
            if (node) return node.cluster.handle(req, res);
            req.resume();
            sendError(res, 503, 'this node is still joining its cluster; try again in a moment');
          }
        : undefined,
      upload: async (id, req, by) => {
        const target = cp.target('app', await artifacts.appOf(id));
        const app = target.app ?? '';
        await guardOf(by).change('uploadBuild', { ...target, app }, `upload builds to app "${app}"`);
        return artifacts.receive(id, req);
      },
      info: () => ({ version: PLATFORM_VERSION, instanceId: nodeId }),
      log: o.log,
    });
    const addr = await listen(server, o.host, o.port);
    port = addr.port;
    // A wildcard address is not one clients can call: local clients use loopback, remote ones --public-url.
    baseUrl = (o.publicUrl ?? localUrl(o.host, port)).replace(/\/+$/, '');
    if (o.database) {
      nodeUrl = o.nodeUrl ?? defaultNodeUrl(o.host, port);
      node = new ClusterNode({
        nodeId,
        store,
        driver,
        url: () => nodeUrl!,
        heartbeatMs: o.nodeHeartbeatMs,
        lostMs: o.nodeLostMs,
        forgetMs: o.nodeForgetMs,
        engine,
        cp,
        keys,
        writer,
        health: healthDeps,
        hosts: pool,
        logs: { logsDir: layout.logs, waiters: logWaiters },
        maxQueuedPerEndpoint: o.maxQueuedPerEndpoint,
        onSlotFreed: (id) => {
          slots.freedElsewhere(id);
          sched.demand(id);
        },
        log: o.log,
      });
      undo.push(() => {
        server.close();
        server.closeAllConnections();
      });
      await node.start();
    }
    sched.start();
    const expiry = new JobExpiry({ engine, writer, store, clock: o.clock, instanceId: nodeId });
    const stopHousekeeping = startHousekeeping({ expiry, store, artifacts, log: o.log });
    if (o.writeStateFile) {
      writeState(layout.stateFile, {
        pid: process.pid,
        url: baseUrl,
        host: o.host,
        port,
        startedAt: Date.now(),
        version: PLATFORM_VERSION,
        dataDir: layout.root,
      });
    }

    let closing: Promise<void> | null = null;
    return {
      url: baseUrl,
      port,
      apiKey,
      dataDir: layout.root,
      instanceId: nodeId,
      nodeUrl,
      database: o.database && redactDatabaseUrl(o.database),
      stats: () => {
        const m = engine.memory();
        return { ...writer.stats, jobsInMemory: m.jobs, jobMemoryBytes: m.memoryBytes, endedJobsCached: m.cachedJobs };
      },
      close: () =>
        (closing ??= (async () => {
          stopHousekeeping();
          // A waiting /runsync is answered with its job's id and state (committed first), not cut off with the server.
          engine.stopWaits();
          await writer.durable().catch(() => {});
          await new Promise((r) => setImmediate(r));
          await node?.close();
          logWaiters.wakeAll();
          await sched.close(o.workerStopGraceMs);
          agents.close();
          channels.closeAll();
          await new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          });
          lb?.close();
          await keys.close();
          await writer.close();
          await store.close();
          supervisor.close();
          if (o.writeStateFile) fs.rmSync(layout.stateFile, { force: true });
          lock.release();
        })()),
    };
  } catch (e) {
    for (const step of undo.reverse()) {
      try {
        await step();
      } catch {
        /* closing what a failed start opened: the start's own error is the one to tell */
      }
    }
    lock.release();
    throw e;
  }
}
