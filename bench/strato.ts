// How a bench runs the `strato` command in a process of its own: the TypeScript sources through tsx (no build needed),
// or, with `--bundle`, the bundled dist/cli.js that users run (after `npm run build`; also what a machine without the
// dev dependencies has: scripts/device/).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

export const BUNDLE = process.argv.includes('--bundle');

/**
 * Node's own flags for those processes from STRATO_BENCH_NODE_FLAGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to
 * profile the platform under the bench's load (Node refuses --cpu-prof in NODE_OPTIONS).
 */
const NODE_FLAGS = (process.env.STRATO_BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);

/** Node's arguments for `strato <args>`, relative to the repository root (run it with cwd there). */
export function stratoArgs(...args: string[]): string[] {
  return [...NODE_FLAGS, ...(BUNDLE ? ['dist/cli.js'] : ['--import', 'tsx', 'engine/src/cli/main.ts']), ...args];
}

/**
 * Runs `cleanup` (synchronous: kill the bench's processes, stop its database) once, however the bench ends: a signal
 * (Ctrl+C, `timeout`; it then exits) or any exit, a crash included (an uncaught EPIPE when its output is piped to
 * `head`). The platform processes run in process groups of their own and would outlive it.
 */
export function cleanUpOnExit(cleanup: () => void): void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    cleanup();
  };
  process.once('exit', once);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      try {
        once();
      } finally {
        process.exit(signal === 'SIGINT' ? 130 : 143);
      }
    });
}

/** Signals the process group of a child started with `detached: true` (the platform and its workers); gone is fine. */
export function killGroup(c: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-c.pid!, signal);
  } catch {
    /* gone */
  }
}

/**
 * Runs the bundled `strato <args>` (dist/cli.js, as users run it) in `cwd` with `env` added to this environment;
 * resolves with its wall time in ms, rejects with its stderr when it fails. For benches that time whole commands.
 */
export function timeStrato(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<number> {
  const cli = path.resolve(__dirname, '..', 'dist', 'cli.js');
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - t) : reject(new Error(`strato ${args.join(' ')} failed: ${err}`))));
  });
}
