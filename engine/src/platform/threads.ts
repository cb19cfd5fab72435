// Starts one of the platform's worker threads from its script: dist/<name>.js beside the bundle, or the TypeScript
// source through tsx when the platform runs from the sources (tests, the bench). The bundles are listed in esbuild.mjs.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/** `bundle`: the script's name in dist/ (`unpack-worker`); `source`: its TypeScript file, relative to this folder. */
export function startThread(bundle: string, source: string, workerData: unknown): Worker {
  const bundled = path.join(__dirname, `${bundle}.js`);
  if (fs.existsSync(bundled)) return new Worker(bundled, { workerData });
  const file = path.join(__dirname, source);
  if (!fs.existsSync(file)) throw new Error(`the platform's thread script ${bundled} is missing; rebuild Strato with npm run build`);
  const tsx = require.resolve('tsx/cjs/api');
  return new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(file)});`, { eval: true, workerData });
}

/** The name the embedded database's thread gives itself (nameThisThread). */
export const DATABASE_THREAD_NAME = 'strato-database';

/**
 * Names the calling thread where `top -H`, `ps -L` and `perf` show it (Linux; 15 characters at most): Node leaves every
 * thread with the process's name. Elsewhere it does nothing.
 */
export function nameThisThread(name: string): void {
  try {
    fs.writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // not Linux, or no /proc: the thread keeps its name
  }
}
