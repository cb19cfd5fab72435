// Everything a platform instance can be told at start, with the defaults from the catalog's `limits`.
// Tests shorten windows and timers here; `strato platform serve` maps its flags onto the same options.
import catalog from '../catalog/catalog.json';
import { Clock, systemClock } from './clock';
import { DEFAULT_PORT } from '../protocol/layout';
import type { WorkerLauncher } from './workers/launcher';
import { checkDatacenters } from '../catalog/parameterRules';
import { UserError } from '../util/errors';
import { pythonExecutable } from '../util/paths';
import { parseServerUrl } from '../util/hostUrl';

export interface RetentionWindows {
  /** `/run` jobs: kept this long after they end. */
  runMs: number;
  /** `/runsync` jobs without `wait`. */
  runsyncMs: number;
  /** `/runsync` jobs with `wait`. */
  runsyncWaitMs: number;
}

export interface PlatformOptions {
  /** Interface to listen on; loopback unless told otherwise. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Holds the database, artifacts, unpacked builds, worker logs, key and state files. */
  dataDir: string;
  /** The account key; without it the key file in the data dir is used, created at first start. */
  apiKey?: string;
  /** Python interpreter for workers: STRATO_PYTHON, else `python3`. */
  python?: string;
  /** Base URL clients should use when it differs from the listening address (a proxy in front). */
  publicUrl?: string;
  clock?: Clock;
  retention?: Partial<RetentionWindows>;
  /** Worker heartbeat period sent to workers (STRATO_HEARTBEAT_MS). */
  heartbeatMs?: number;
  /** How long `/stream` waits for a new chunk while the job runs. */
  streamWaitMs?: number;
  /** A worker that is not ready after this long is killed (its imports hang). */
  workerStartTimeoutMs?: number;
  /** Grace between SIGTERM and SIGKILL when stopping a worker. */
  workerStopGraceMs?: number;
  /** Longest wait before a commit someone waits for (`/run` accepting a job), in ms. */
  groupCommitMs?: number;
  /** Longest wait before committing transitions nobody waits for (started, completed...), in ms. */
  lazyCommitMs?: number;
  /** Longest wait before the first commit of a `/runsync` job that is running or answered (jobWriter.ts), in ms. */
  syncCommitMs?: number;
  /** Jobs waiting in one endpoint's queue before `/run` answers 429. */
  maxQueuedPerEndpoint?: number;
  /**
   * Bytes that ended jobs may keep in memory once their rows are durable (their JSON texts: input, output, error, stream
   * chunks; and about 1 KB each), for the next `/status` or `/stream`; the others are read from the store.
   */
  endedJobCacheBytes?: number;
  /** Write the state file (pid, URL) that clients use to find the local platform. */
  writeStateFile?: boolean;
  /** Fork workers from a warm template process per endpoint revision (default on; STRATO_WORKER_TEMPLATES=0 turns it off). */
  workerTemplates?: boolean;
  /** Where diagnostics go (default: stderr). */
  log?: (line: string) => void;
  /** Runs workers other than as local processes (the preview's containers). */
  workerLauncher?: WorkerLauncher;
  /** The datacenters this platform serves (`--datacenter`); absent means it stands in for all of them. */
  datacenters?: string[];
  /** A PostgreSQL server's URL (`--database`); absent means the embedded PGlite in the data dir. */
  database?: string;
  /** A worker host whose agent sends nothing for this long is lost (default `limits.hostLostMs`). */
  hostLostMs?: number;
  /** Cluster only: the URL other nodes reach this node at (`--node-url`; default: --public-url, else the listening address). */
  nodeUrl?: string;
  /** Cluster only: how often this node heartbeats in the `nodes` table. */
  nodeHeartbeatMs?: number;
  /** Cluster only: a node whose heartbeat is older than this is lost, and live nodes adopt its jobs. */
  nodeLostMs?: number;
  /** Cluster only: a node silent this long leaves the node list (default `limits.nodeForgetMs`, a day). */
  nodeForgetMs?: number;
}

export interface ResolvedOptions {
  host: string;
  port: number;
  dataDir: string;
  apiKey?: string;
  python: string;
  publicUrl?: string;
  clock: Clock;
  retention: RetentionWindows;
  heartbeatMs: number;
  streamWaitMs: number;
  workerStartTimeoutMs: number;
  workerStopGraceMs: number;
  groupCommitMs: number;
  lazyCommitMs: number;
  syncCommitMs: number;
  maxQueuedPerEndpoint: number;
  endedJobCacheBytes: number;
  writeStateFile: boolean;
  workerTemplates: boolean;
  datacenters?: string[];
  database?: string;
  /** Where the database URL came from, as errors name it: `--database`, or `STRATO_DATABASE_URL`. */
  databaseFrom: string;
  hostLostMs: number;
  nodeUrl?: string;
  nodeHeartbeatMs: number;
  nodeLostMs: number;
  nodeForgetMs: number;
  log: (line: string) => void;
}

export const limits = catalog.limits;

/**
 * Builds kept per app besides those deployed: the newest this many (to deploy again, roll back); a worker host keeps
 * as many it ran last. Older ones that no environment deploys and no endpoint runs are deleted with their archives, in
 * the store and on every node's and host's disk: each deploy adds a build (up to the artifact limit, 1.5 GB, and
 * unpacked besides), and nothing else ever removed one.
 */
export const KEPT_BUILDS = 5;

/**
 * The default bound of the cache of ended jobs (endedJobCacheBytes): about 16,000 jobs of small texts. Every cached job
 * lives in V8's old generation, where each full collection marks it: at 64 MB (about 62,000 jobs) a node under
 * sustained `/run` load spent 20-30% more CPU per job once the cache was full, and served 2,000-2,300 jobs/s against
 * 2,350-2,500 with 16 MB (2 cores, rounds of 30,000 jobs); on 16 cores a lone node's CPU per job rose from 100-106 to
 * 117-143 µs by its fourth round of 30,000 while nodes of three, a third as full, stayed at 100-129. A job read after it
 * left the cache is read from the store.
 */
export const ENDED_JOB_CACHE_BYTES = 16 * 1024 * 1024;

/** Options that only mean something for nodes sharing a PostgreSQL server, by their flag names. */
const CLUSTER_ONLY: Array<[keyof PlatformOptions, string]> = [
  ['nodeUrl', '--node-url'],
  ['nodeHeartbeatMs', '--node-heartbeat-ms'],
  ['nodeLostMs', '--node-lost-ms'],
];

export function resolveOptions(o: PlatformOptions): ResolvedOptions {
  if (o.database !== undefined && !o.database.trim())
    throw new UserError(
      '--database is empty: give a PostgreSQL URL (postgres://user:password@host:5432/strato), or leave the flag out for the embedded database',
    );
  const database = o.database ?? (process.env.STRATO_DATABASE_URL || undefined);
  if (!database) {
    const given = CLUSTER_ONLY.filter(([k]) => o[k] !== undefined).map(([, flag]) => flag);
    if (given.length)
      throw new UserError(
        `${given.join(' and ')} ${given.length > 1 ? 'are' : 'is'} for platform nodes that share a PostgreSQL server, and this platform keeps its ` +
          'state in the embedded database of its data dir: add --database postgres://... (every node the same), or leave ' +
          `${given.length > 1 ? 'them' : 'it'} out`,
      );
  }
  const nodeLostMs = o.nodeLostMs ?? limits.nodeLostMs;
  const nodeHeartbeatMs = o.nodeHeartbeatMs ?? Math.min(limits.nodeHeartbeatMs, Math.floor(nodeLostMs / 3));
  if (nodeHeartbeatMs * 2 > nodeLostMs)
    throw new UserError(
      `--node-lost-ms (${nodeLostMs}) must be at least twice --node-heartbeat-ms (${nodeHeartbeatMs}), or live nodes would be taken for lost`,
    );
  for (const [value, flag, example] of [
    [o.nodeUrl, '--node-url', 'the address other nodes reach this node at, http://10.0.0.5:7450'],
    [o.publicUrl, '--public-url', 'the address clients reach the platform at, https://strato.example.com'],
  ] as const) {
    const parsed = value === undefined ? undefined : parseServerUrl(value, flag, example);
    if (parsed && 'problem' in parsed) throw new UserError(parsed.problem);
  }
  return {
    host: o.host ?? '127.0.0.1',
    port: o.port ?? DEFAULT_PORT,
    dataDir: o.dataDir,
    apiKey: o.apiKey,
    python: pythonExecutable(o.python),
    publicUrl: o.publicUrl,
    clock: o.clock ?? systemClock,
    retention: {
      runMs: o.retention?.runMs ?? limits.runRetentionMs,
      runsyncMs: o.retention?.runsyncMs ?? limits.runsyncRetentionMs,
      runsyncWaitMs: o.retention?.runsyncWaitMs ?? limits.runsyncWaitRetentionMs,
    },
    heartbeatMs: o.heartbeatMs ?? 1000,
    streamWaitMs: o.streamWaitMs ?? 3000,
    workerStartTimeoutMs: o.workerStartTimeoutMs ?? 300_000,
    workerStopGraceMs: o.workerStopGraceMs ?? 5000,
    groupCommitMs: o.groupCommitMs ?? 2,
    lazyCommitMs: o.lazyCommitMs ?? 20,
    syncCommitMs: o.syncCommitMs ?? 100,
    maxQueuedPerEndpoint: o.maxQueuedPerEndpoint ?? 200_000,
    endedJobCacheBytes: o.endedJobCacheBytes ?? ENDED_JOB_CACHE_BYTES,
    writeStateFile: o.writeStateFile ?? true,
    workerTemplates: o.workerTemplates ?? process.env.STRATO_WORKER_TEMPLATES !== '0',
    datacenters: o.datacenters?.length ? servedDatacenters(o.datacenters) : undefined,
    database,
    databaseFrom: o.database !== undefined ? '--database' : 'STRATO_DATABASE_URL',
    nodeUrl: o.nodeUrl?.replace(/\/+$/, ''),
    nodeHeartbeatMs,
    nodeLostMs,
    nodeForgetMs: Math.max(o.nodeForgetMs ?? limits.nodeForgetMs, nodeLostMs),
    hostLostMs: o.hostLostMs ?? limits.hostLostMs,
    log: o.log ?? ((line) => process.stderr.write(`${line}\n`)),
  };
}

/** `--datacenter` values as catalog ids (any case, '_' for '-'), or a sentence naming the unknown one. */
function servedDatacenters(ids: string[]): string[] {
  const r = checkDatacenters(
    ids
      .flatMap((d) => d.split(','))
      .map((d) => d.trim())
      .filter(Boolean),
  );
  if (!r.ok) throw new UserError(`--datacenter: ${r.message}`);
  return r.value;
}
