// The part of SqlStore about build uploads and archives in the database (clusters: the request for a location, the PUT
// and the finalize may each reach another node): upload rows, the claim of the node receiving a PUT, and archives
// kept in pieces under the upload's id, then the build's.
import { aliveSql, NodeStatements } from './nodeStatements';
import type { UploadRow, UploadStore } from './types';

export class UploadStatements extends NodeStatements implements UploadStore {
  insertUpload(r: UploadRow): Promise<void> {
    return this.db.transaction(async (tx) => {
      await tx.query('delete from build_archives where build_id in (select id from uploads where expires_at < $1)', [r.expires_at - 2 * 3600_000]);
      await tx.query('delete from uploads where expires_at < $1', [r.expires_at - 2 * 3600_000]);
      await tx.query('insert into uploads (id, app_id, size, expires_at, sha256) values ($1, $2, $3, $4, $5)', [
        r.id,
        r.app_id,
        r.size,
        r.expires_at,
        r.sha256,
      ]);
    });
  }
  async getUpload(id: string): Promise<UploadRow | undefined> {
    return (await this.db.query<UploadRow>('select * from uploads where id = $1', [id]))[0];
  }
  uploadReplaced(id: string): Promise<void> {
    return this.db.transaction(async (tx) => {
      await tx.query('update uploads set sha256 = null where id = $1', [id]);
      await tx.query('delete from build_archives where build_id = $1', [id]);
    });
  }
  async uploadReceived(id: string, size: number, sha256: string): Promise<void> {
    await this.db.query('update uploads set size = $2, sha256 = $3 where id = $1', [id, size, sha256]);
  }
  uploadDiscarded(id: string): Promise<void> {
    return this.db.transaction(async (tx) => {
      await tx.query('delete from build_archives where build_id = $1', [id]);
      await tx.query('delete from uploads where id = $1', [id]);
    });
  }
  uploadFinalized(id: string, buildId: string): Promise<void> {
    return this.db.transaction(async (tx) => {
      await tx.query('update build_archives set build_id = $2 where build_id = $1', [id, buildId]);
      await tx.query('delete from uploads where id = $1', [id]);
    });
  }

  async claimUpload(id: string): Promise<boolean> {
    const rows = await this.db.query<{ id: string }>(
      `update uploads u set receiving_node = $2 where u.id = $1 and (u.receiving_node is null or u.receiving_node = $2 or not exists
         (select 1 from nodes n where n.id = u.receiving_node and ${aliveSql('n', '$3')})) returning u.id`,
      [id, this.identity.nodeId, this.identity.lostMs],
    );
    return rows.length > 0;
  }

  async releaseUpload(id: string): Promise<void> {
    await this.db.query('update uploads set receiving_node = null where id = $1 and receiving_node = $2', [id, this.identity.nodeId]);
  }

  async insertArchivePiece(buildId: string, seq: number, data: Buffer): Promise<void> {
    await this.db.query('insert into build_archives (build_id, seq, data) values ($1, $2, $3) on conflict do nothing', [buildId, seq, data]);
  }
  async archivePieceCount(buildId: string): Promise<number> {
    const rows = await this.db.query<{ n: number }>('select count(*)::int as n from build_archives where build_id = $1', [buildId]);
    return rows[0]?.n ?? 0;
  }
  async archivePiece(buildId: string, seq: number): Promise<Buffer | undefined> {
    const rows = await this.db.query<{ data: Uint8Array }>('select data from build_archives where build_id = $1 and seq = $2', [buildId, seq]);
    return rows[0] ? Buffer.from(rows[0].data) : undefined;
  }
}
