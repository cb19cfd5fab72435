// Unpacks a build artifact on a worker thread (unpackWorker.ts), so that a hostile archive cannot stall the event
// loop that serves jobs and heartbeats. The thread's script is dist/unpack-worker.js beside the bundle, or the
// TypeScript source through tsx when the platform runs from the sources (tests).
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

export interface UnpackRequest {
  archive: string;
  /** Folder the archive is unpacked into: made empty first, removed when the archive is refused. */
  dest: string;
}

export type UnpackResult = { ok: true } | { ok: false; error: string };

/** The archive could not be unpacked; the message is tar's (or the file system's) reason. */
export class ArchiveRefused extends Error {}

function startThread(request: UnpackRequest): Worker {
  const bundled = path.join(__dirname, 'unpack-worker.js');
  if (fs.existsSync(bundled)) return new Worker(bundled, { workerData: request });
  const source = path.join(__dirname, 'unpackWorker.ts');
  if (!fs.existsSync(source)) throw new Error(`the platform's unpacking thread (${bundled}) is missing; rebuild Strato with npm run build`);
  const tsx = require.resolve('tsx/cjs/api');
  return new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(source)});`, { eval: true, workerData: request });
}

/**
 * Resolves when the archive is unpacked into `dest`; rejects with ArchiveRefused when it is not, and with a plain
 * error when the thread itself failed.
 */
export function unpackArchive(archive: string, dest: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const thread = startThread({ archive, dest });
    let settled = false;
    const settle = (error: Error | null) => {
      if (settled) return;
      settled = true;
      if (error === null) resolve();
      else reject(error);
    };
    thread.once('message', (r: UnpackResult) => settle(r.ok ? null : new ArchiveRefused(r.error)));
    thread.once('error', (e) => settle(e));
    thread.once('exit', (code) => settle(new Error(`the platform's unpacking thread stopped (exit code ${code}) before it answered`)));
  });
}
