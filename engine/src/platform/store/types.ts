// The one store interface of the platform: control-plane records (apps, environments, builds, endpoints, API keys),
// the audit log and jobs. sqlStore.ts implements it with SQL that runs on PGlite (embedded) or on a PostgreSQL server.

import type { JobStatus } from '../../protocol/jobs';
import type { NamedCall } from './namedStatements';
export type { JobStatus };
export type JobKind = 'run' | 'runsync';

/** Where a job's row says it is: its endpoint, status and owner. */
export type JobPlace = Pick<JobRow, 'id' | 'endpoint_id' | 'status' | 'owner'>;

/** A job as stored. `input` and `output` hold JSON text, never re-encoded on the hot path. */
export interface JobRow {
  id: string;
  endpoint_id: string;
  kind: JobKind;
  status: JobStatus;
  input: string;
  output: string | null;
  error: string | null;
  created_at: number;
  queued_at: number;
  started_at: number | null;
  ended_at: number | null;
  expires_at: number | null;
  ttl_set: boolean;
  retention_ms: number;
  attempts: number;
  retries: number;
  worker_id: string | null;
  /** Chunks of an ended job that `/stream` has not handed out yet, as one JSON array (null: none). */
  stream: string | null;
  /** The output of an ended job is still to be handed out by `/stream` as its one chunk. */
  stream_output: boolean;
  /** The node that answers for the job and runs it (its instance id). */
  owner: string;
}

/** The counts of ended jobs per endpoint and state (health), read at start. */
export interface EndedJobCount {
  endpoint_id: string;
  status: JobStatus;
  jobs: number;
  retries: number;
}

/** An ended job whose retention ran out, as deleted. */
export interface ExpiredJob {
  id: string;
  endpoint_id: string;
  status: JobStatus;
  retries: number;
  owner: string;
}

/** The columns a state transition changes (everything but identity and input). */
export type JobStateRow = Omit<JobRow, 'endpoint_id' | 'kind' | 'input' | 'created_at' | 'owner'>;

/** An upload location shared by the nodes of a cluster. */
export interface UploadRow {
  id: string;
  app_id: string;
  size: number;
  expires_at: number;
  /** Set once the archive was received. */
  sha256: string | null;
}

/** A platform node of a cluster, as registered; `alive` and `now` by the database's clock. */
export interface NodeRow {
  id: string;
  url: string;
  started_at: number;
  heartbeat_at: number;
  /** The node's own lost bound (--node-lost-ms); absent where the row is made up (the asking node itself). */
  lost_ms?: number;
  alive: boolean;
}

/** A live node other than the asking one that holds worker slots of an endpoint: `slots` of its workers, starting or ready. */
export interface SlotHolder {
  id: string;
  url: string;
  slots: number;
}

/** One group commit: disjoint sets of new rows, changed rows and removed ids, applied atomically. */
export interface JobBatch {
  inserts: JobRow[];
  updates: JobStateRow[];
  deletes: string[];
}

export interface AppRow {
  id: string;
  name: string;
  created_at: number;
}

export interface EnvironmentRow {
  id: string;
  app_id: string;
  name: string;
  active_build_id: string | null;
  created_at: number;
}

export interface BuildRow {
  id: string;
  app_id: string;
  created_at: number;
  size: number;
  sha256: string;
  /** The manifest as JSON text. */
  manifest: string;
}

export interface EndpointRow {
  id: string;
  app_id: string;
  environment_id: string;
  name: string;
  build_id: string;
  /** The ResolvedEndpointConfig as JSON text. */
  config: string;
  created_at: number;
  updated_at: number;
}

/** An API key as stored: its SHA-256 hash, never the key. */
export interface KeyRow {
  id: string;
  name: string;
  /** SHA-256 of the key, hex. */
  hash: string;
  prefix: string;
  scope: string;
  /** JSON array of app names; [] for every app. */
  apps: string;
  created_at: number;
  /** Id of the key that created it. */
  created_by: string;
  last_used_at: number | null;
  revoked_at: number | null;
  revoked_by: string | null;
}

/** One entry of the audit log. `seq` is given by the store. */
export interface AuditRow {
  seq?: number;
  at: number;
  key_id: string;
  key_name: string;
  operation: string;
  outcome: 'ok' | 'denied';
  app: string | null;
  target_type: string;
  target_id: string | null;
  target_name: string | null;
  /** JSON text. */
  detail: string | null;
}

export interface AuditQuery {
  app?: string;
  keyName?: string;
  limit: number;
}

/** A deploy or an endpoint named a build that is no longer stored (pruned meanwhile, through another node). */
export class MissingBuild extends Error {
  constructor(readonly buildId: string) {
    super(`build ${buildId} is not stored`);
  }
}

/**
 * Every control-plane write takes the audit entry that records it, written in the same transaction: a change is
 * never stored without the key that made it.
 */
export interface PlatformStore {
  listApps(): Promise<AppRow[]>;
  insertApp(row: AppRow, audit: AuditRow): Promise<void>;
  /** Deletes the app with its environments, builds, endpoints and their jobs. */
  deleteApp(id: string, audit: AuditRow): Promise<void>;

  listEnvironments(): Promise<EnvironmentRow[]>;
  insertEnvironment(row: EnvironmentRow, audit: AuditRow): Promise<void>;
  /** Rejects with MissingBuild when the build is no longer stored (so does saveEndpoint). */
  setActiveBuild(environmentId: string, buildId: string, audit: AuditRow): Promise<void>;
  /** Deletes the environment with its endpoints and their jobs. */
  deleteEnvironment(id: string, audit: AuditRow): Promise<void>;

  listBuilds(): Promise<BuildRow[]>;
  insertBuild(row: BuildRow, audit: AuditRow): Promise<void>;
  /**
   * Deletes those of the app's builds `ids` that no environment deploys and no endpoint runs (checked in the same
   * transaction), with their archives; the ids deleted. `audit` is given them (null: nothing recorded).
   */
  pruneBuilds(appId: string, ids: string[], audit: (deleted: string[]) => AuditRow | null): Promise<string[]>;

  listEndpoints(): Promise<EndpointRow[]>;
  /** Inserts or replaces the endpoint with this id. */
  saveEndpoint(row: EndpointRow, audit: AuditRow): Promise<void>;
  /** Deletes the endpoint and its jobs. */
  deleteEndpoint(id: string, audit: AuditRow): Promise<void>;

  listKeys(): Promise<KeyRow[]>;
  insertKey(row: KeyRow, audit: AuditRow): Promise<void>;
  revokeKey(id: string, revokedAt: number, revokedBy: string, audit: AuditRow): Promise<void>;
  /** Records when keys were last used (a later time than the stored one wins). */
  touchKeys(lastUsed: Array<{ id: string; last_used_at: number }>): Promise<void>;

  /** An entry that goes with no change (a refused attempt). */
  insertAudit(row: AuditRow): Promise<void>;
  /** Newest first. */
  listAudit(q: AuditQuery): Promise<AuditRow[]>;

  /**
   * This node's jobs that have not ended (the platform keeps them in memory); ended jobs are read one by one
   * (`getJob`). Every write of jobs is limited to this node's rows (`owner`).
   */
  loadLiveJobs(): Promise<JobRow[]>;
  countEndedJobs(): Promise<EndedJobCount[]>;
  getJob(id: string): Promise<JobRow | undefined>;
  /** Which node owns a job and how it stands, without its input and output (up to 10 and 20 MB): what routing needs. */
  getJobPlace(id: string): Promise<JobPlace | undefined>;
  writeJobs(batch: JobBatch): Promise<void>;
  /**
   * Deletes ended jobs that expired by `now`, except those named in `keep` (their rows are about to change); at most
   * `limit` of them when given (the others are left for the next call).
   */
  deleteExpiredJobs(now: number, keep: string[], limit?: number): Promise<ExpiredJob[]>;
  /**
   * Where the database does not vacuum itself (the embedded one), vacuums the jobs table once enough expired rows were
   * deleted since the last time; true when it did.
   */
  vacuumJobsIfDue(): Promise<boolean>;

  /** Registers this node (or registers it again after a restart) with a fresh heartbeat. */
  registerNode(url: string): Promise<void>;
  /** Renews this node's heartbeat; false when its row is gone. */
  heartbeatNode(): Promise<boolean>;
  /** Every registered node, alive when its heartbeat is younger than the lost bound. */
  listNodes(): Promise<NodeRow[]>;
  /**
   * Takes over up to `limit` jobs that have not ended from nodes that are not alive (or that have no row), rows locked
   * with SKIP LOCKED so that two adopters never take the same one. Returns the rows taken, now this node's.
   */
  adoptLostJobs(limit: number): Promise<JobRow[]>;
  /** Takes over one job (ended or not) of a node that is not alive; undefined when its owner is alive or it is gone. */
  adoptJob(id: string): Promise<JobRow | undefined>;

  /** Moves queued jobs of this node to node `to` (a hand-off); returns the rows moved. */
  handOffJobs(ids: string[], to: string): Promise<JobRow[]>;
  /** Per endpoint, the node other than this one with the most queued jobs (a hint: rows change behind commits). */
  queuedElsewhere(endpointIds: string[]): Promise<Array<{ endpoint_id: string; owner: string; jobs: number }>>;
  /**
   * Claims for worker `workerId` of this node the lowest slot of the endpoint below `below` that no node holds; its
   * number, or null when every one is held (or another node took the same one at the same moment). With `fair`, only
   * while this node holds fewer of those slots than its share: `below` over the live nodes, rounded up.
   */
  claimSlot(endpointId: string, below: number, workerId: string, fair?: boolean): Promise<number | null>;
  /** Releases this node's slots held by these workers (they are gone). */
  releaseSlots(workerIds: string[]): Promise<void>;
  /**
   * Deletes this node's slots held by none of `keep` (workers gone while a release failed, or before a restart) and
   * answers the workers of `keep` that still hold theirs.
   */
  syncSlots(keep: string[]): Promise<string[]>;
  /** Frees the slots of nodes that are not alive; the endpoints whose slots were freed. */
  freeLostSlots(): Promise<string[]>;
  /**
   * Deletes the rows of other nodes silent for `silentMs` (a node of an elastic group never comes back under its id);
   * the ids deleted. Everything that reads nodes takes a missing row for a lost node, and a node that does come back
   * registers again.
   */
  forgetNodes(silentMs: number): Promise<string[]>;
  /** The live nodes other than this one that hold slots of the endpoint (load-balanced requests go to their workers). */
  slotHolders(endpointId: string): Promise<SlotHolder[]>;
  /** The value of a meta key, set to `value` first when it has none (the first of several nodes wins). */
  metaOnce(key: string, value: string): Promise<string>;

  /** How many control-plane changes were committed (clusters; 0 on the embedded database). */
  controlPlaneVersion(): Promise<number>;

  /** Upload locations of a cluster (expired ones, and their pieces, are deleted on the way). */
  insertUpload(row: UploadRow): Promise<void>;
  getUpload(id: string): Promise<UploadRow | undefined>;
  /**
   * This node receives a PUT to the upload: true unless another node that is alive receives one now. Released with
   * `releaseUpload` however the PUT ends.
   */
  claimUpload(id: string): Promise<boolean>;
  releaseUpload(id: string): Promise<void>;
  /** A PUT to the upload was received whole: what an earlier PUT stored (its pieces, its digest) goes first. */
  uploadReplaced(id: string): Promise<void>;
  /** The archive was received (its pieces are stored under the upload's id). */
  uploadReceived(id: string, size: number, sha256: string): Promise<void>;
  /** The upload became build `buildId`: its pieces are the build's now, the location is gone. */
  uploadFinalized(id: string, buildId: string): Promise<void>;
  /** The upload was taken as a build that exists (the same bytes): its row and its archive's pieces go. */
  uploadDiscarded(id: string): Promise<void>;

  /** Build archives in the database, piece by piece (clusters: any node may start a build's workers). */
  insertArchivePiece(buildId: string, seq: number, data: Buffer): Promise<void>;
  archivePieceCount(buildId: string): Promise<number>;
  archivePiece(buildId: string, seq: number): Promise<Buffer | undefined>;

  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;

  close(): Promise<void>;
}

/** The SQL a store needs from a database connection; PGlite and a PostgreSQL client both fit. */
export interface SqlDriver {
  /** The database vacuums its own tables (a PostgreSQL server's autovacuum); the embedded PGlite has no autovacuum. */
  readonly vacuumsItself: boolean;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Several statements, no parameters (schema set-up). */
  exec(sql: string): Promise<void>;
  /** Runs the calls in order, in one transaction (namedStatements.ts: planned once, or inlined). */
  execNamed(calls: readonly NamedCall[]): Promise<void>;
  /** Runs `fn` in one transaction. */
  transaction<T>(fn: (tx: Pick<SqlDriver, 'query'>) => Promise<T>): Promise<T>;
  /**
   * PostgreSQL servers only: calls `onNotify` with each payload sent on `channel`, on a connection of its own that is
   * made again when it breaks (`onReconnect` then: notifications may have been missed).
   */
  listen?(channel: string, onNotify: (payload: string) => void, onReconnect: () => void): Promise<{ close(): Promise<void> }>;
  close(): Promise<void>;
}

/** What build uploads and archives need of the store (clusters): statements of their own (uploadStatements.ts). */
export type UploadStore = Pick<
  PlatformStore,
  | 'insertUpload'
  | 'getUpload'
  | 'claimUpload'
  | 'releaseUpload'
  | 'uploadReplaced'
  | 'uploadReceived'
  | 'uploadDiscarded'
  | 'uploadFinalized'
  | 'insertArchivePiece'
  | 'archivePieceCount'
  | 'archivePiece'
>;
