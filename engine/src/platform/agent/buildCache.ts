// A worker host's builds: each is downloaded from the platform once, checked against its content id (the archive's
// SHA-256), unpacked under <data dir>/builds/<sha256>/ and kept there for every later worker of that build; beyond the
// KEPT_BUILDS used last, those no worker here runs from are deleted when another arrives.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { unpackArchive } from '../controlPlane/unpack';
import { KEPT_BUILDS } from '../options';

/** A build's content id (its archive's SHA-256): the name of its folder here. */
const CONTENT_ID = /^[0-9a-f]{64}$/;

export class BuildCache {
  private pending = new Map<string, Promise<string>>();

  constructor(
    private readonly dir: string,
    private readonly download: (buildId: string) => Promise<IncomingMessage>,
    private readonly fetched: (buildId: string, dir: string) => void,
    /** The folders running workers use (never deleted). */
    private readonly inUse: () => ReadonlySet<string>,
  ) {
    fs.mkdirSync(path.join(dir, 'builds'), { recursive: true });
  }

  /** The unpacked build's folder, fetched first when this host does not have it. */
  get(buildId: string, sha256: string): Promise<string> {
    if (!CONTENT_ID.test(sha256)) sha256 = createHash('sha256').update(buildId).digest('hex'); // a build without a recorded digest
    const root = path.join(this.dir, 'builds', sha256);
    if (fs.existsSync(root)) {
      const now = new Date();
      fs.utimesSync(root, now, now); // used last now: kept before the builds used longer ago
      return Promise.resolve(root);
    }
    let p = this.pending.get(sha256);
    if (!p) {
      p = this.fetch(buildId, sha256, root).finally(() => this.pending.delete(sha256));
      this.pending.set(sha256, p);
    }
    return p;
  }

  private async fetch(buildId: string, sha256: string, root: string): Promise<string> {
    const res = await this.download(buildId);
    if (res.statusCode !== 200) {
      let text = '';
      for await (const c of res) text += (c as Buffer).toString('utf8');
      throw new Error(`the platform did not send build ${buildId} (HTTP ${res.statusCode}${text ? `: ${text.slice(0, 300)}` : ''})`);
    }
    res.setTimeout(60_000, () => res.destroy(new Error('the download stalled for 60 s')));
    const archive = path.join(this.dir, 'builds', `${sha256}.tar.gz.part`);
    const hash = createHash('sha256');
    const meter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        hash.update(chunk);
        cb(null, chunk);
      },
    });
    try {
      await pipeline(res, meter, fs.createWriteStream(archive));
      const got = hash.digest('hex');
      if (res.headers['x-strato-sha256'] === sha256 && got !== sha256)
        throw new Error(`build ${buildId} arrived damaged (SHA-256 ${got}, expected ${sha256}); it is fetched again for the next worker`);
      const tmp = `${root}.tmp-${process.pid}`;
      await unpackArchive(archive, tmp);
      fs.rmSync(root, { recursive: true, force: true });
      fs.renameSync(tmp, root);
      this.fetched(buildId, root);
      this.prune();
      return root;
    } finally {
      fs.rmSync(archive, { force: true });
    }
  }

  /** Deletes the cached builds beyond the KEPT_BUILDS used last that no running worker uses (a failure: the next fetch tries again). */
  private prune(): void {
    const builds = path.join(this.dir, 'builds');
    const inUse = this.inUse();
    try {
      const cached = fs
        .readdirSync(builds)
        .filter((name) => CONTENT_ID.test(name))
        .map((name) => ({ root: path.join(builds, name), at: fs.statSync(path.join(builds, name)).mtimeMs }))
        .sort((a, b) => b.at - a.at);
      for (const { root } of cached.slice(KEPT_BUILDS)) if (!inUse.has(root)) fs.rmSync(root, { recursive: true, force: true });
    } catch {
      // a folder removed meanwhile (another agent on this data dir): the next fetch looks again
    }
  }
}
