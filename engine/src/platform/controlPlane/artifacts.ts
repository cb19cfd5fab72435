// Build artifacts: an upload location per build (HTTP PUT of the tar.gz, streamed to disk with its SHA-256),
// then, when the build is finalized, the archive is kept under artifacts/ and unpacked once under builds/<id>/
// where workers run from it (on a worker thread: unpack.ts).
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { PlatformError, badRequest, notFound } from '../errors';
import { limits } from '../options';
import type { PlatformLayout } from '../../protocol/layout';
import { ArchiveRefused, unpackArchive } from './unpack';

interface Upload {
  id: string;
  appId: string;
  size: number;
  expiresAt: number;
  received?: { file: string; size: number; sha256: string };
}

const UPLOAD_TTL_MS = 60 * 60 * 1000;

export class Artifacts {
  private uploads = new Map<string, Upload>();

  constructor(private readonly layout: PlatformLayout) {}

  /** A new upload location for an artifact of `size` bytes. */
  beginUpload(appId: string, size: number): Upload {
    if (!Number.isInteger(size) || size <= 0) throw badRequest('size must be the artifact size in bytes (> 0)');
    if (size > limits.deploymentBytes) {
      throw new PlatformError(
        'TOO_LARGE',
        `the artifact is ${(size / 1048576).toFixed(0)} MB, above the ${limits.deploymentBytes / 1048576} MB limit; ` + 'exclude large packages with --exclude',
      );
    }
    const up: Upload = { id: `upl_${randomBytes(12).toString('hex')}`, appId, size, expiresAt: Date.now() + UPLOAD_TTL_MS };
    this.uploads.set(up.id, up);
    return up;
  }

  /** The app an upload location was given for. */
  appOf(uploadId: string): string {
    return this.live(uploadId).appId;
  }

  /** Receives the PUT body of an upload, checking the declared size. */
  async receive(uploadId: string, req: IncomingMessage): Promise<{ size: number; sha256: string }> {
    const up = this.live(uploadId);
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
    up.received = { file, size, sha256: hash.digest('hex') };
    return { size, sha256: up.received.sha256 };
  }

  /** Keeps the uploaded archive as build `buildId` and unpacks it; returns the manifest text it carries. */
  async finalize(uploadId: string, appId: string, buildId: string): Promise<{ size: number; sha256: string; manifestText: string | null; dir: string }> {
    const up = this.live(uploadId);
    if (up.appId !== appId) throw badRequest(`upload ${uploadId} belongs to another app`);
    if (!up.received) throw badRequest(`nothing was uploaded to ${uploadId} yet; PUT the artifact to its URL first`);
    const archive = this.archivePath(buildId);
    fs.renameSync(up.received.file, archive);
    this.uploads.delete(uploadId);
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
    const manifestFile = path.join(dir, 'strato_manifest.json');
    const manifestText = fs.existsSync(manifestFile) ? fs.readFileSync(manifestFile, 'utf8') : null;
    return { size: up.received.size, sha256: up.received.sha256, manifestText, dir };
  }

  /** Removes a build's archive and unpacked tree (its app was deleted). */
  removeBuild(buildId: string): void {
    fs.rmSync(this.buildDir(buildId), { recursive: true, force: true });
    fs.rmSync(this.archivePath(buildId), { force: true });
  }

  /** The build's archive as uploaded (worker hosts download it). */
  archivePath(buildId: string): string {
    return path.join(this.layout.artifacts, `${buildId}.tar.gz`);
  }

  buildDir(buildId: string): string {
    return path.join(this.layout.builds, buildId);
  }

  private live(uploadId: string): Upload {
    const up = this.uploads.get(uploadId);
    if (!up || up.expiresAt < Date.now()) {
      this.uploads.delete(uploadId);
      throw notFound(`upload ${uploadId} is unknown or expired; request a new upload location`);
    }
    return up;
  }
}
