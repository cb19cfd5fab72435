// Build artifacts: an upload location per build (HTTP PUT of the tar.gz, streamed to disk with its SHA-256),
// then, when the build is finalized, the archive is kept under artifacts/ and unpacked once under builds/<id>/
// where workers run from it (on a worker thread: unpack.ts). In a cluster the archive is also written to the
// database in pieces, and a node that must start a worker of a build it did not receive fetches and unpacks it first.
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { PlatformError, badRequest, conflict, notFound } from '../errors';
import { limits } from '../options';
import type { PlatformLayout } from '../../protocol/layout';
import type { UploadStore } from '../store/types';
import { ArchiveRefused, unpackArchive } from './unpack';

interface Upload {
  id: string;
  appId: string;
  size: number;
  expiresAt: number;
  received?: { file: string; size: number; sha256: string };
}

const UPLOAD_TTL_MS = 60 * 60 * 1000;

/** Bytes of one piece of an archive in the database (a row each). */
const PIECE_BYTES = 4 * 1048576;
/** A fetch of a build that failed is tried again after this long. */
const FETCH_RETRY_MS = 5000;

/** Where archives are shared between the nodes of a cluster. */
export type ArchiveStore = UploadStore;

export class Artifacts {
  private uploads = new Map<string, Upload>();
  /**
   * Uploads whose body is being received here now: one PUT at a time, or two bodies would mix in one file (in a
   * cluster, also in the database's pieces: the node receiving one claims the upload's row).
   */
  private receiving = new Set<string>();
  /** Builds being fetched from the database, and why the last fetch of a build failed (with when). */
  private fetching = new Map<string, Promise<void>>();
  private fetchFailed = new Map<string, { at: number; error: string }>();

  constructor(
    private readonly layout: PlatformLayout,
    private readonly shared?: ArchiveStore,
  ) {}

  /** The uploaded archive is build `buildId` now (cluster: its pieces in the database), before the build's row names it. */
  async publish(uploadId: string, buildId: string): Promise<void> {
    await this.shared?.uploadFinalized(uploadId, buildId);
  }

  /** Writes an archive to the database in pieces under `key` (an upload's id, renamed to its build's later). */
  private async writePieces(key: string, file: string): Promise<void> {
    const fd = await fs.promises.open(file, 'r');
    try {
      const buf = Buffer.alloc(PIECE_BYTES);
      for (let seq = 0; ; seq++) {
        const { bytesRead } = await fd.read(buf, 0, PIECE_BYTES, null);
        if (bytesRead === 0) break;
        await this.shared!.insertArchivePiece(key, seq, Buffer.from(buf.subarray(0, bytesRead)));
      }
    } finally {
      await fd.close();
    }
  }

  /**
   * Null when the build is unpacked on this node; else why its workers wait: it is being fetched from the database
   * (`ready` is called once it is here), or the last fetch failed.
   */
  missing(buildId: string, ready: () => void): string | null {
    if (!this.shared) return null; // one node: the build was unpacked when it was uploaded here
    if (fs.existsSync(this.buildDir(buildId))) return null;
    const failed = this.fetchFailed.get(buildId);
    if (failed && Date.now() - failed.at < FETCH_RETRY_MS) return `build ${buildId} could not be fetched from the database: ${failed.error}; trying again`;
    if (!this.fetching.has(buildId)) {
      const p = this.fetch(buildId)
        .then(() => void this.fetchFailed.delete(buildId))
        .catch((e: Error) => void this.fetchFailed.set(buildId, { at: Date.now(), error: e.message }))
        .finally(() => {
          this.fetching.delete(buildId);
          ready();
        });
      this.fetching.set(buildId, p);
    }
    return `fetching build ${buildId} from the database`;
  }

  private async fetch(buildId: string): Promise<void> {
    const archive = this.archivePath(buildId);
    await this.readPieces(buildId, archive);
    await this.unpack(buildId, archive);
  }

  /** Writes the archive stored under `key` to `archive`. */
  private async readPieces(key: string, archive: string): Promise<void> {
    const shared = this.shared!;
    const pieces = await shared.archivePieceCount(key);
    if (pieces === 0) throw new Error('the database holds no archive of it (uploaded to a node that was not part of a cluster?)');
    const part = `${archive}.part-${process.pid}`;
    const out = await fs.promises.open(part, 'w');
    try {
      for (let seq = 0; seq < pieces; seq++) {
        const data = await shared.archivePiece(key, seq);
        if (!data) throw new Error(`piece ${seq} of ${pieces} is missing`);
        await out.write(data);
      }
    } catch (e) {
      await out.close();
      fs.rmSync(part, { force: true });
      throw e;
    }
    await out.close();
    fs.renameSync(part, archive);
  }

  private async unpack(buildId: string, archive: string): Promise<string> {
    const dir = this.buildDir(buildId);
    const tmp = `${dir}.tmp-${process.pid}`;
    try {
      await unpackArchive(archive, tmp);
    } catch (e) {
      fs.rmSync(archive, { force: true });
      if (e instanceof ArchiveRefused) throw badRequest(`the artifact is not a valid tar.gz archive (${e.message}); rebuild it with strato build`);
      await fs.promises.rm(tmp, { recursive: true, force: true }); // the thread failed: it may have left part of the tree
      throw e;
    }
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
    return dir;
  }

  /** A new upload location for an artifact of `size` bytes (in a cluster, known to every node). */
  async beginUpload(appId: string, size: number): Promise<Upload> {
    if (!Number.isInteger(size) || size <= 0) throw badRequest('size must be the artifact size in bytes (> 0)');
    if (size > limits.deploymentBytes) {
      throw new PlatformError(
        'TOO_LARGE',
        `the artifact is ${(size / 1048576).toFixed(0)} MB, above the ${limits.deploymentBytes / 1048576} MB limit; ` + 'exclude large packages with --exclude',
      );
    }
    const up: Upload = { id: `upl_${randomBytes(12).toString('hex')}`, appId, size, expiresAt: Date.now() + UPLOAD_TTL_MS };
    await this.shared?.insertUpload({ id: up.id, app_id: appId, size, expires_at: up.expiresAt, sha256: null });
    this.uploads.set(up.id, up);
    return up;
  }

  /** The app an upload location was given for. */
  async appOf(uploadId: string): Promise<string> {
    return (await this.live(uploadId)).appId;
  }

  /** Receives the PUT body of an upload, checking the declared size. */
  async receive(uploadId: string, req: IncomingMessage): Promise<{ size: number; sha256: string }> {
    const up = await this.live(uploadId);
    const busy = () => conflict(`another PUT to upload ${uploadId} is in progress: wait for it to end, or request a new upload for this one`);
    if (this.receiving.has(up.id)) throw busy();
    this.receiving.add(up.id);
    try {
      if (this.shared && !(await this.shared.claimUpload(up.id))) throw busy();
      try {
        return await this.receiveOne(up, req);
      } finally {
        // Kept when the database is out of reach: this node may claim it again, others once this node is lost.
        await this.shared?.releaseUpload(up.id).catch(() => undefined);
      }
    } finally {
      this.receiving.delete(up.id);
    }
  }

  private async receiveOne(up: Upload, req: IncomingMessage): Promise<{ size: number; sha256: string }> {
    const part = path.join(this.layout.uploads, `${up.id}.part`);
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > up.size) {
          cb(badRequest(`the upload is larger than the ${up.size} bytes declared when it was requested`));
          return;
        }
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(req, meter, fs.createWriteStream(part));
    } catch (e) {
      fs.rmSync(part, { force: true });
      throw e instanceof PlatformError ? e : badRequest(`the upload was interrupted: ${(e as Error).message}`);
    }
    if (size !== up.size) {
      fs.rmSync(part, { force: true });
      throw badRequest(`the upload has ${size} bytes but ${up.size} were declared; upload the whole artifact`);
    }
    const file = path.join(this.layout.uploads, `${up.id}.tar.gz`);
    fs.renameSync(part, file);
    const received = { file, size, sha256: hash.digest('hex') };
    if (this.shared) {
      // The finalize may reach another node: the archive waits in the database under the upload's id, in place of
      // what an earlier PUT left there.
      await this.shared.uploadReplaced(up.id);
      await this.writePieces(up.id, file);
      await this.shared.uploadReceived(up.id, size, received.sha256);
    }
    up.received = received;
    return { size, sha256: received.sha256 };
  }

  /** What was uploaded to `uploadId` (its size and SHA-256), checked as finalize checks it. */
  async received(uploadId: string, appId: string): Promise<{ size: number; sha256: string }> {
    const up = await this.live(uploadId);
    if (up.appId !== appId) throw badRequest(`upload ${uploadId} belongs to another app`);
    if (!up.received) throw badRequest(`nothing was uploaded to ${uploadId} yet; PUT the artifact to its URL first`);
    return { size: up.received.size, sha256: up.received.sha256 };
  }

  /** Drops an upload taken as a build that exists already (the same bytes): its archive is not kept twice. */
  async discard(uploadId: string): Promise<void> {
    const up = this.uploads.get(uploadId);
    if (up?.received) fs.rmSync(up.received.file, { force: true });
    this.uploads.delete(uploadId);
    await this.shared?.uploadDiscarded(uploadId);
  }

  /** Keeps the uploaded archive as build `buildId` and unpacks it; returns the manifest text it carries. */
  async finalize(uploadId: string, appId: string, buildId: string): Promise<{ size: number; sha256: string; manifestText: string | null; dir: string }> {
    const up = await this.live(uploadId);
    if (up.appId !== appId) throw badRequest(`upload ${uploadId} belongs to another app`);
    if (!up.received) throw badRequest(`nothing was uploaded to ${uploadId} yet; PUT the artifact to its URL first`);
    if (!fs.existsSync(up.received.file)) await this.readPieces(up.id, up.received.file); // it reached another node
    const archive = this.archivePath(buildId);
    fs.renameSync(up.received.file, archive);
    this.uploads.delete(uploadId);
    const dir = await this.unpack(buildId, archive);
    const manifestFile = path.join(dir, 'strato_manifest.json');
    const manifestText = fs.existsSync(manifestFile) ? fs.readFileSync(manifestFile, 'utf8') : null;
    return { size: up.received.size, sha256: up.received.sha256, manifestText, dir };
  }

  /**
   * Deletes received archives nobody finalized here (abandoned, or finalized through another node of a cluster, which
   * read them from the database) once their location has long expired.
   */
  async sweepUploads(now = Date.now()): Promise<void> {
    for (const name of await fs.promises.readdir(this.layout.uploads).catch(() => [] as string[])) {
      if (this.uploads.has(name.replace(/\.(tar\.gz|part)$/, ''))) continue;
      const file = path.join(this.layout.uploads, name);
      const st = await fs.promises.stat(file).catch(() => null);
      if (st && now - st.mtimeMs > 2 * UPLOAD_TTL_MS) await fs.promises.rm(file, { force: true });
    }
  }

  /** Whether a worker of this node runs from the build (set by the platform: the scheduler knows). */
  inUse: (buildId: string) => boolean = () => false;
  /** Builds deleted while a worker here still ran from them: their files go once none does (sweepRetired). */
  private retired = new Set<string>();

  /** Removes a deleted build's archive and unpacked tree (its app was deleted, or it was pruned), at once or once no worker here runs from it. */
  removeBuild(buildId: string): void {
    if (this.inUse(buildId)) {
      this.retired.add(buildId);
      return;
    }
    this.retired.delete(buildId);
    fs.rmSync(this.buildDir(buildId), { recursive: true, force: true });
    fs.rmSync(this.archivePath(buildId), { force: true });
  }

  /** Removes the files of deleted builds whose last worker here has ended (housekeeping). */
  sweepRetired(): void {
    for (const id of [...this.retired]) if (!this.inUse(id)) this.removeBuild(id);
  }

  /** The build's archive as uploaded (worker hosts download it). */
  archivePath(buildId: string): string {
    return path.join(this.layout.artifacts, `${buildId}.tar.gz`);
  }

  buildDir(buildId: string): string {
    return path.join(this.layout.builds, buildId);
  }

  private async live(uploadId: string): Promise<Upload> {
    let up = this.uploads.get(uploadId);
    if (this.shared) {
      // In a cluster the row is the truth, whichever node gave the location: the PUT may have reached another node,
      // or another node's PUT replaced what this one received (its file here is then not the upload's any more).
      const row = await this.shared.getUpload(uploadId);
      if (!row) up = undefined;
      else {
        up ??= { id: row.id, appId: row.app_id, size: Number(row.size), expiresAt: Number(row.expires_at) };
        if (!row.sha256) up.received = undefined;
        else if (up.received?.sha256 !== row.sha256) {
          const file = path.join(this.layout.uploads, `${row.id}.tar.gz`);
          if (up.received) fs.rmSync(file, { force: true }); // this node's earlier body: finalize reads the pieces
          up.received = { file, size: Number(row.size), sha256: row.sha256 };
        }
        this.uploads.set(up.id, up);
      }
    }
    if (!up || up.expiresAt < Date.now()) {
      this.uploads.delete(uploadId);
      throw notFound(`upload ${uploadId} is unknown or expired; request a new upload location`);
    }
    return up;
  }
}
