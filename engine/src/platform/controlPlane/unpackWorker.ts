// The thread that unpacks a build artifact (see unpack.ts): decompressing and parsing a hostile archive (a gzip bomb
// takes seconds before tar refuses it) runs here, never on the platform's event loop. On a refusal the partly
// unpacked folder is removed here too, so that the platform only learns the outcome.
import fs from 'node:fs';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import * as tar from 'tar';
import { nameThisThread } from '../threads';
import type { UnpackRequest, UnpackResult } from './unpack';

nameThisThread('strato-unpack');

async function unpack({ archive, dest }: UnpackRequest): Promise<UnpackResult> {
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  try {
    // strict: every entry tar would only warn about (a path with '..', a link out of the folder, a bad header, a
    // decompression ratio over 1000, nesting over 1024 levels) refuses the archive; preservePaths off: absolute paths
    // are made relative and nothing is written outside `dest`.
    // The archive is the deployer's, not the machine's: its files belong to the platform's user (owners in it are not
    // kept, even for a platform run as root) and carry no setuid, setgid or sticky bit.
    await tar.x({
      file: archive,
      cwd: dest,
      strict: true,
      preservePaths: false,
      preserveOwner: false,
      noMtime: true, // artifacts carry no times (build/artifact.ts): files are as new as their unpacking
      onReadEntry: (entry) => {
        if (typeof entry.mode === 'number') entry.mode &= 0o777;
      },
    });
    return { ok: true };
  } catch (e) {
    fs.rmSync(dest, { recursive: true, force: true });
    return { ok: false, error: inArchiveTerms((e as Error).message, dest) };
  }
}

/**
 * The file system's reason in the archive's terms: entry names relative to the archive, not the platform's folders
 * (the deployer learns nothing of the server's layout), and a name too long to repeat shortened.
 */
function inArchiveTerms(message: string, dest: string): string {
  return message
    .split(dest + path.sep)
    .join('')
    .replace(/'([^']{120,})'/g, (_, name: string) => `'${name.slice(0, 60)}...${name.slice(-20)}' (a name of ${name.length} characters)`);
}

void unpack(workerData as UnpackRequest).then(
  (r) => parentPort!.postMessage(r),
  (e: Error) => parentPort!.postMessage({ ok: false, error: e.message } satisfies UnpackResult),
);
