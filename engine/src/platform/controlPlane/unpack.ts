// Unpacks a build artifact on a worker thread (unpackWorker.ts), so that a hostile archive cannot stall the event
// loop that serves jobs and heartbeats (its script: threads.ts).
import { startThread } from '../threads';

export interface UnpackRequest {
  archive: string;
  /** Folder the archive is unpacked into: made empty first, removed when the archive is refused. */
  dest: string;
}

export type UnpackResult = { ok: true } | { ok: false; error: string };

/** The archive could not be unpacked; the message is tar's (or the file system's) reason. */
export class ArchiveRefused extends Error {}

/**
 * Resolves when the archive is unpacked into `dest`; rejects with ArchiveRefused when it is not, and with a plain
 * error when the thread itself failed.
 */
export function unpackArchive(archive: string, dest: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const thread = startThread('unpack-worker', 'controlPlane/unpackWorker.ts', { archive, dest } satisfies UnpackRequest);
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
