// The part of SqlStore about nodes and what they hold: their registration and heartbeats (on the database's clock),
// the jobs they own (adoption of a lost node's, hand-offs between nodes) and the worker slots their workers hold.
// Only the slot statements run on the embedded database (its one node holds every slot).
import type { JobRow, NodeRow, PlatformStore, SlotHolder, SqlDriver } from './types';

/** Now by the database's clock, in ms: nodes compare heartbeats on one clock, whatever theirs say. */
export const DB_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

export interface StoreIdentity {
  /** This node's instance id: the owner of the jobs it writes ('u1' on the embedded database). */
  nodeId: string;
  /** Control-plane changes are announced on CHANGES_CHANNEL (nodes sharing a server). */
  notify: boolean;
  /** A node whose heartbeat is older than this is lost: its jobs may be adopted, its expired rows deleted by others. */
  lostMs: number;
}

const LIVE = `('IN_QUEUE', 'IN_PROGRESS')`;

/**
 * The node row `n` is alive: its heartbeat is younger than the longer of this node's bound (the parameter `lostMs`)
 * and the node's own (nodes.lost_ms, what it registered with: it heartbeats at a third of it). A node started with a
 * short --node-lost-ms therefore never takes nodes that heartbeat at their own, slower pace for lost.
 */
export const aliveSql = (n: string, lostMs: string) => `${n}.heartbeat_at > ${DB_NOW} - greatest(${lostMs}::bigint, ${n}.lost_ms)`;

/**
 * The database server has run for the longest lost bound of the nodes (or this node's `lostMs`): after it restarted,
 * every node's heartbeat is as old as the outage, and none is lost for that before it had the time to heartbeat again
 * (at most half its bound apart). What taking a node's jobs or worker slots requires, whatever the taker saw of the
 * outage (cluster.ts waits too, after an outage it saw).
 */
const serverSettled = (lostMs: string) =>
  `${DB_NOW} - (extract(epoch from pg_postmaster_start_time()) * 1000)::bigint > greatest(${lostMs}::bigint, (select coalesce(max(lost_ms), 0) from nodes))`;

type NodePart = Pick<
  PlatformStore,
  | 'registerNode'
  | 'heartbeatNode'
  | 'listNodes'
  | 'adoptLostJobs'
  | 'adoptJob'
  | 'handOffJobs'
  | 'queuedElsewhere'
  | 'claimSlot'
  | 'releaseSlots'
  | 'syncSlots'
  | 'freeLostSlots'
  | 'forgetNodes'
  | 'slotHolders'
>;

export class NodeStatements implements NodePart {
  protected constructor(
    protected readonly db: SqlDriver,
    readonly identity: StoreIdentity,
  ) {}

  async registerNode(url: string): Promise<void> {
    await this.db.query(
      `insert into nodes (id, url, started_at, heartbeat_at, lost_ms) values ($1, $2, ${DB_NOW}, ${DB_NOW}, $3)
       on conflict (id) do update set url = excluded.url, started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, lost_ms = excluded.lost_ms`,
      [this.identity.nodeId, url, this.identity.lostMs],
    );
  }
  async heartbeatNode(): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(`update nodes set heartbeat_at = ${DB_NOW} where id = $1 returning id`, [this.identity.nodeId]);
    return rows.length > 0;
  }
  listNodes(): Promise<NodeRow[]> {
    return this.db.query<NodeRow>(`select id, url, started_at, heartbeat_at, lost_ms, ${aliveSql('nodes', '$1')} as alive from nodes order by started_at, id`, [
      this.identity.lostMs,
    ]);
  }
  async adoptLostJobs(limit: number): Promise<JobRow[]> {
    // The partial index on live jobs finds them; `status in (...)` is spelled as in its predicate so that it is used.
    return this.db.query<JobRow>(
      `with taken as (select id from jobs where status in ${LIVE} and ${this.lostOwner()} order by queued_at limit $3 for update skip locked)
       update jobs j set owner = $1 from taken where j.id = taken.id returning j.*`,
      [this.identity.nodeId, this.identity.lostMs, limit],
    );
  }
  async adoptJob(id: string): Promise<JobRow | undefined> {
    const rows = await this.db.query<JobRow>(`update jobs set owner = $1 where id = $3 and ${this.lostOwner()} returning *`, [
      this.identity.nodeId,
      this.identity.lostMs,
      id,
    ]);
    return rows[0];
  }
  /** The row's owner is another node that is not alive (lost, or never registered: jobs from before clusters); $1 me, $2 lostMs. */
  private lostOwner(): string {
    return `owner <> $1 and not exists (select 1 from nodes n where n.id = jobs.owner and ${aliveSql('n', '$2')}) and ${serverSettled('$2')}`;
  }

  handOffJobs(ids: string[], to: string): Promise<JobRow[]> {
    return this.db.query<JobRow>(`update jobs set owner = $2 where id = any($1::text[]) and owner = $3 and status = 'IN_QUEUE' returning *`, [
      ids,
      to,
      this.identity.nodeId,
    ]);
  }
  queuedElsewhere(endpointIds: string[]): Promise<Array<{ endpoint_id: string; owner: string; jobs: number }>> {
    return this.db.query(
      `select distinct on (endpoint_id) endpoint_id, owner, count(*)::int as jobs from jobs
       where endpoint_id = any($1::text[]) and status = 'IN_QUEUE' and owner <> $2 group by endpoint_id, owner order by endpoint_id, jobs desc`,
      [endpointIds, this.identity.nodeId],
    );
  }
  async claimSlot(endpointId: string, below: number, workerId: string, fair = false): Promise<number | null> {
    // Two nodes that pick the same free slot at once: the primary key lets one in, the other gets no row (and asks again).
    // The share counts live nodes on the database's clock (none registered: the embedded database's one node).
    const share = fair
      ? `and (select count(*) from worker_slots m where m.endpoint_id = $1 and m.node_id = $2 and m.slot < $4) <
           ceil($4::numeric / greatest(1, (select count(*) from nodes n where ${aliveSql('n', '$5')})))`
      : 'and $5::bigint >= 0';
    const rows = await this.db.query<{ slot: number }>(
      `insert into worker_slots (endpoint_id, slot, node_id, worker_id)
       select $1, s, $2, $3 from generate_series(0, $4::int - 1) s
       where not exists (select 1 from worker_slots w where w.endpoint_id = $1 and w.slot = s) ${share} order by s limit 1
       on conflict do nothing returning slot`,
      [endpointId, this.identity.nodeId, workerId, below, this.identity.lostMs],
    );
    return rows.length > 0 ? Number(rows[0].slot) : null;
  }
  async releaseSlots(workerIds: string[]): Promise<void> {
    await this.db.query('delete from worker_slots where node_id = $1 and worker_id = any($2::text[])', [this.identity.nodeId, workerIds]);
  }
  async syncSlots(keep: string[]): Promise<string[]> {
    await this.db.query('delete from worker_slots where node_id = $1 and not (worker_id = any($2::text[]))', [this.identity.nodeId, keep]);
    const rows = await this.db.query<{ worker_id: string }>('select worker_id from worker_slots where node_id = $1', [this.identity.nodeId]);
    return rows.map((r) => r.worker_id);
  }
  async freeLostSlots(): Promise<string[]> {
    const rows = await this.db.query<{ endpoint_id: string }>(
      `delete from worker_slots w where w.node_id <> $1
       and not exists (select 1 from nodes n where n.id = w.node_id and ${aliveSql('n', '$2')}) and ${serverSettled('$2')} returning endpoint_id`,
      [this.identity.nodeId, this.identity.lostMs],
    );
    return [...new Set(rows.map((r) => r.endpoint_id))];
  }
  async forgetNodes(silentMs: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(`delete from nodes where id <> $1 and heartbeat_at < ${DB_NOW} - $2 returning id`, [
      this.identity.nodeId,
      silentMs,
    ]);
    return rows.map((r) => r.id);
  }
  slotHolders(endpointId: string): Promise<SlotHolder[]> {
    // The primary key (endpoint_id, slot) finds the endpoint's few rows; lost nodes' slots are about to be freed.
    return this.db.query<SlotHolder>(
      `select n.id, n.url, count(*)::int as slots from worker_slots w join nodes n on n.id = w.node_id
       where w.endpoint_id = $1 and w.node_id <> $2 and ${aliveSql('n', '$3')} group by n.id, n.url order by n.id`,
      [endpointId, this.identity.nodeId, this.identity.lostMs],
    );
  }
}
