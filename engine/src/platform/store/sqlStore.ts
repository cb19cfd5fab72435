// PlatformStore over any SqlDriver. Control-plane writes are rare: each is one transaction with its audit entry.
// Job writes arrive as group-commit batches and are applied with one statement per batch (JSON arrays expanded in
// SQL), because a statement costs far more than a row on an embedded database.
import { aliveSql, type StoreIdentity } from './nodeStatements';
import { UploadStatements } from './uploadStatements';
import { SCHEMA_VERSION, schemaSql } from './schema';
import { DELETE_JOBS, INSERT_JOBS, UPDATE_JOBS } from './jobStatements';
import type { NamedCall } from './namedStatements';
import { UserError } from '../../util/errors';
import {
  type AppRow,
  type AuditQuery,
  type AuditRow,
  type BuildRow,
  type EndedJobCount,
  type EndpointRow,
  type EnvironmentRow,
  type ExpiredJob,
  type JobBatch,
  type JobPlace,
  type JobRow,
  type KeyRow,
  MissingBuild,
  type PlatformStore,
  type SqlDriver,
} from './types';

type Tx = Pick<SqlDriver, 'query'>;

const AUDIT_COLUMNS = ['at', 'key_id', 'key_name', 'operation', 'outcome', 'app', 'target_type', 'target_id', 'target_name', 'detail'] as const;
const INSERT_AUDIT = `insert into audit_log (${AUDIT_COLUMNS.join(', ')}) values (${AUDIT_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`;

/** bigint columns come back as strings from some drivers (pg); the platform works with numbers. */
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const ENDED = `('COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT')`;

/** The advisory lock key that serialises migrations of one database (any constant; "strato" in ASCII). */
const MIGRATION_LOCK = 0x737472_61746f;

/**
 * The advisory lock that orders deleting builds (pruneBuilds) against naming one (a deploy, an endpoint saved): a build
 * that an environment or an endpoint names is never deleted, even when two nodes do both at once.
 */
const BUILDS_LOCK = 0x737472_6264;

/** Takes the builds lock and checks that the build still exists (within the transaction that names it). */
async function namingBuild(tx: Tx, buildId: string): Promise<void> {
  await tx.query(`select pg_advisory_xact_lock(${BUILDS_LOCK})`);
  if ((await tx.query('select 1 from builds where id = $1', [buildId])).length === 0) throw new MissingBuild(buildId);
}

/**
 * Expired rows deleted before the embedded database vacuums `jobs` (vacuumJobsIfDue). A vacuum after 18,000 deleted
 * rows beside 200,000 live ones took 24-87 ms on 2 cores, and the table then stayed at its size.
 */
export const VACUUM_AFTER_DELETED_ROWS = 10_000;

/**
 * The LISTEN/NOTIFY channel between nodes: `cp <node id>` (it changed control-plane records or keys), `queued <endpoint
 * id> <node id>` (it has queued jobs its workers do not take).
 */
export const CHANGES_CHANNEL = 'strato_changes';

export type { StoreIdentity };

/**
 * Migrates the schema, in one place for PGlite and PostgreSQL alike; nodes starting together take turns (a transaction
 * lock, released when the statements' implicit transaction ends). A database a newer release migrated is left alone.
 */
async function migrate(db: SqlDriver): Promise<void> {
  await db.exec('set standard_conforming_strings = on');
  const found = await schemaVersionOf(db);
  if (found > Number(SCHEMA_VERSION))
    throw new UserError(
      `the database holds Strato's schema version ${found}, newer than this platform's (${SCHEMA_VERSION}): a newer release of Strato ` +
        'migrated it. Run that release here too (every node of a cluster on the same one); this one leaves the database as it is.',
    );
  await db.exec(`select pg_advisory_xact_lock(${MIGRATION_LOCK});\n${schemaSql}`);
  await db.query(`insert into meta (key, value) values ('schema_version', $1) on conflict (key) do update set value = excluded.value`, [SCHEMA_VERSION]);
}

/** The schema version a database was last migrated to; 0 for a new database. */
async function schemaVersionOf(db: SqlDriver): Promise<number> {
  const [table] = await db.query<{ found: string | null }>(`select to_regclass('meta')::text as found`);
  if (!table?.found) return 0;
  const [row] = await db.query<{ value: string }>(`select value from meta where key = 'schema_version'`);
  return Number(row?.value ?? 0) || 0;
}

/** The statements about nodes and what they hold are its base class's (nodeStatements.ts). */
export class SqlStore extends UploadStatements implements PlatformStore {
  private constructor(db: SqlDriver, identity: StoreIdentity) {
    super(db, identity);
  }

  static async open(db: SqlDriver, identity: StoreIdentity = { nodeId: 'u1', notify: false, lostMs: 0 }): Promise<SqlStore> {
    try {
      await migrate(db);
    } catch (e) {
      if ((e as { code?: string }).code !== '42501') throw e;
      throw new UserError(
        `the database user may not use or create Strato's tables (${(e as Error).message}): start the platform as the user that ` +
          "owns them (the one that started it first), or as the database's owner; a new database needs a user that may create " +
          'tables (GRANT CREATE ON SCHEMA public TO <user>, as the owner).',
      );
    }
    return new SqlStore(db, identity);
  }

  /** A control-plane change and the audit entry that records it, in one transaction. */
  private async change(audit: AuditRow, fn: (tx: Tx) => Promise<unknown>): Promise<void> {
    await this.changeWith(() => audit, fn);
  }

  /** A change whose audit entry depends on what it did; null: it changed nothing, and nothing is recorded. */
  private changeWith<T>(audit: (done: T) => AuditRow | null, fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      const done = await fn(tx);
      const entry = audit(done);
      if (!entry) return done;
      await insertAudit(tx, entry);
      if (this.identity.notify) {
        // Delivered when the transaction commits, to every node listening (cluster.ts); nothing when it rolls back.
        await tx.query('select pg_notify($1, $2)', [CHANGES_CHANNEL, `cp ${this.identity.nodeId}`]);
        // The version a node compares before an operation, so that it never answers from records older than a change
        // another node already confirmed (NOTIFY may arrive a moment later).
        await tx.query(`insert into meta (key, value) values ('cp_version', '1') on conflict (key) do update set value = (meta.value::bigint + 1)::text`);
      }
      return done;
    });
  }

  listApps(): Promise<AppRow[]> {
    return this.db.query<AppRow>('select * from apps order by created_at');
  }
  insertApp(r: AppRow, audit: AuditRow): Promise<void> {
    return this.change(audit, (tx) => tx.query('insert into apps (id, name, created_at) values ($1, $2, $3)', [r.id, r.name, r.created_at]));
  }
  deleteApp(id: string, audit: AuditRow): Promise<void> {
    return this.change(audit, async (tx) => {
      await tx.query('delete from jobs where endpoint_id in (select id from endpoints where app_id = $1)', [id]);
      await tx.query('delete from build_archives where build_id in (select id from builds where app_id = $1)', [id]);
      await tx.query('delete from apps where id = $1', [id]);
    });
  }

  listEnvironments(): Promise<EnvironmentRow[]> {
    return this.db.query<EnvironmentRow>('select * from environments order by created_at');
  }
  insertEnvironment(r: EnvironmentRow, audit: AuditRow): Promise<void> {
    return this.change(audit, (tx) =>
      tx.query('insert into environments (id, app_id, name, active_build_id, created_at) values ($1, $2, $3, $4, $5)', [
        r.id,
        r.app_id,
        r.name,
        r.active_build_id,
        r.created_at,
      ]),
    );
  }
  async setActiveBuild(environmentId: string, buildId: string, audit: AuditRow): Promise<void> {
    await this.change(audit, async (tx) => {
      await namingBuild(tx, buildId);
      await tx.query('update environments set active_build_id = $2 where id = $1', [environmentId, buildId]);
    });
  }
  deleteEnvironment(id: string, audit: AuditRow): Promise<void> {
    return this.change(audit, async (tx) => {
      await tx.query('delete from jobs where endpoint_id in (select id from endpoints where environment_id = $1)', [id]);
      await tx.query('delete from environments where id = $1', [id]);
    });
  }

  listBuilds(): Promise<BuildRow[]> {
    return this.db.query<BuildRow>('select * from builds order by created_at');
  }
  insertBuild(r: BuildRow, audit: AuditRow): Promise<void> {
    return this.change(audit, (tx) =>
      tx.query('insert into builds (id, app_id, created_at, size, sha256, manifest) values ($1, $2, $3, $4, $5, $6)', [
        r.id,
        r.app_id,
        r.created_at,
        r.size,
        r.sha256,
        r.manifest,
      ]),
    );
  }

  pruneBuilds(appId: string, ids: string[], audit: (deleted: string[]) => AuditRow | null): Promise<string[]> {
    return this.changeWith(audit, async (tx) => {
      await tx.query(`select pg_advisory_xact_lock(${BUILDS_LOCK})`);
      const rows = await tx.query<{ id: string }>(
        `delete from builds where app_id = $1 and id = any($2::text[])
           and id not in (select active_build_id from environments where active_build_id is not null)
           and id not in (select build_id from endpoints)
         returning id`,
        [appId, ids],
      );
      const deleted = rows.map((r) => r.id);
      if (deleted.length > 0) await tx.query('delete from build_archives where build_id = any($1::text[])', [deleted]);
      return deleted;
    });
  }

  listEndpoints(): Promise<EndpointRow[]> {
    return this.db.query<EndpointRow>('select * from endpoints order by created_at');
  }
  async saveEndpoint(r: EndpointRow, audit: AuditRow): Promise<void> {
    await this.change(audit, async (tx) => {
      await namingBuild(tx, r.build_id);
      await tx.query(
        `insert into endpoints (id, app_id, environment_id, name, build_id, config, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8)
       on conflict (id) do update set name = excluded.name, build_id = excluded.build_id,
         config = excluded.config, updated_at = excluded.updated_at`,
        [r.id, r.app_id, r.environment_id, r.name, r.build_id, r.config, r.created_at, r.updated_at],
      );
    });
  }
  deleteEndpoint(id: string, audit: AuditRow): Promise<void> {
    return this.change(audit, async (tx) => {
      await tx.query('delete from jobs where endpoint_id = $1', [id]);
      await tx.query('delete from endpoints where id = $1', [id]);
    });
  }

  async listKeys(): Promise<KeyRow[]> {
    const rows = await this.db.query<KeyRow>('select * from api_keys order by created_at, id');
    return rows.map((r) => ({ ...r, created_at: Number(r.created_at), last_used_at: num(r.last_used_at), revoked_at: num(r.revoked_at) }));
  }
  insertKey(r: KeyRow, audit: AuditRow): Promise<void> {
    return this.change(audit, (tx) =>
      tx.query(
        `insert into api_keys (id, name, hash, prefix, scope, apps, created_at, created_by, last_used_at, revoked_at, revoked_by)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
        [r.id, r.name, r.hash, r.prefix, r.scope, r.apps, r.created_at, r.created_by, r.last_used_at, r.revoked_at, r.revoked_by],
      ),
    );
  }
  revokeKey(id: string, revokedAt: number, revokedBy: string, audit: AuditRow): Promise<void> {
    return this.change(audit, (tx) =>
      tx.query('update api_keys set revoked_at = $2, revoked_by = $3 where id = $1 and revoked_at is null', [id, revokedAt, revokedBy]),
    );
  }
  async touchKeys(lastUsed: Array<{ id: string; last_used_at: number }>): Promise<void> {
    if (lastUsed.length === 0) return;
    await this.db.query(
      `update api_keys k set last_used_at = greatest(coalesce(k.last_used_at, 0), u.last_used_at)
       from json_to_recordset($1::json) as u(id text, last_used_at bigint) where k.id = u.id`,
      [JSON.stringify(lastUsed)],
    );
  }

  insertAudit(r: AuditRow): Promise<void> {
    return insertAudit(this.db, r);
  }
  async listAudit(q: AuditQuery): Promise<AuditRow[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.app !== undefined) where.push(`app = $${params.push(q.app)}`);
    if (q.keyName !== undefined) where.push(`key_name = $${params.push(q.keyName)}`);
    const sql = `select * from audit_log ${where.length ? `where ${where.join(' and ')}` : ''} order by seq desc limit $${params.push(q.limit)}`;
    const rows = await this.db.query<AuditRow>(sql, params);
    return rows.map((r) => ({ ...r, seq: Number(r.seq), at: Number(r.at) }));
  }

  loadLiveJobs(): Promise<JobRow[]> {
    return this.db.query<JobRow>(`select * from jobs where status not in ${ENDED} and owner = $1 order by created_at`, [this.identity.nodeId]);
  }
  countEndedJobs(): Promise<EndedJobCount[]> {
    return this.db.query<EndedJobCount>(
      `select endpoint_id, status, count(*)::int as jobs, coalesce(sum(retries), 0)::int as retries from jobs where status in ${ENDED} ` +
        'and owner = $1 group by endpoint_id, status',
      [this.identity.nodeId],
    );
  }
  async getJob(id: string): Promise<JobRow | undefined> {
    return (await this.db.query<JobRow>('select * from jobs where id = $1', [id]))[0];
  }
  async getJobPlace(id: string): Promise<JobPlace | undefined> {
    return (await this.db.query<JobPlace>('select id, endpoint_id, status, owner from jobs where id = $1', [id]))[0];
  }
  /**
   * Rows deleted from `jobs` since it was last vacuumed. Without a vacuum the space of deleted rows is never used
   * again: the embedded database grew by 2.6 MB for every 10,000 jobs that came and expired, with none left.
   */
  private deletedSinceVacuum = 0;

  async vacuumJobsIfDue(): Promise<boolean> {
    if (this.db.vacuumsItself || this.deletedSinceVacuum < VACUUM_AFTER_DELETED_ROWS) return false;
    this.deletedSinceVacuum = 0;
    await this.db.exec('vacuum jobs');
    return true;
  }

  async deleteExpiredJobs(now: number, keep: string[], limit?: number): Promise<ExpiredJob[]> {
    // This node's rows, and those of lost nodes (nobody else deletes them); only its own are counted out of its health.
    const expired =
      `status in ${ENDED} and expires_at <= $1 and not (id = any($2::text[])) ` +
      `and (owner = $3 or not exists (select 1 from nodes n where n.id = jobs.owner and ${aliveSql('n', '$4')}))`;
    const which = limit === undefined ? expired : `id in (select id from jobs where ${expired} limit ${Math.max(1, Math.floor(limit))})`;
    const gone = await this.db.query<ExpiredJob>(`delete from jobs where ${which} returning id, endpoint_id, status, retries, owner`, [
      now,
      keep,
      this.identity.nodeId,
      this.identity.lostMs,
    ]);
    this.deletedSinceVacuum += gone.length;
    return gone;
  }

  /** One transaction of the group commit's statements (jobStatements.ts). */
  async writeJobs(b: JobBatch): Promise<void> {
    // Only this node's rows: once another node adopted a job, what this one still says about it is dropped.
    const me = this.identity.nodeId;
    const calls: NamedCall[] = [];
    if (b.inserts.length > 0) calls.push({ statement: INSERT_JOBS, args: [JSON.stringify(b.inserts)] });
    if (b.updates.length > 0) calls.push({ statement: UPDATE_JOBS, args: [JSON.stringify(b.updates), JSON.stringify(b.updates.map((u) => u.id)), me] });
    if (b.deletes.length > 0) calls.push({ statement: DELETE_JOBS, args: [JSON.stringify(b.deletes), me] });
    if (calls.length > 0) await this.db.execNamed(calls);
  }

  async metaOnce(key: string, value: string): Promise<string> {
    await this.db.query('insert into meta (key, value) values ($1, $2) on conflict (key) do nothing', [key, value]);
    return (await this.getMeta(key)) ?? value;
  }

  async controlPlaneVersion(): Promise<number> {
    return Number((await this.getMeta('cp_version')) ?? 0);
  }

  async getMeta(key: string): Promise<string | undefined> {
    const rows = await this.db.query<{ value: string }>('select value from meta where key = $1', [key]);
    return rows[0]?.value;
  }
  async setMeta(key: string, value: string): Promise<void> {
    await this.db.query('insert into meta (key, value) values ($1, $2) on conflict (key) do update set value = excluded.value', [key, value]);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

async function insertAudit(tx: Tx, r: AuditRow): Promise<void> {
  await tx.query(
    INSERT_AUDIT,
    AUDIT_COLUMNS.map((c) => r[c]),
  );
}
