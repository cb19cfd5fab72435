// How a bench runs the `strato` command in a process of its own: the TypeScript sources through tsx (no build needed),
// or, with `--bundle`, the bundled dist/cli.js that users run (after `npm run build`; also what a machine without the
// dev dependencies has: scripts/device/).
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
 * Runs `cleanup` (synchronous: kill the bench's processes, stop its database) when the bench is interrupted (Ctrl+C,
 * `timeout`), then exits: the platform processes run in process groups of their own and would outlive it.
 */
export function onInterrupt(cleanup: () => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      try {
        cleanup();
      } finally {
        process.exit(signal === 'SIGINT' ? 130 : 143);
      }
    });
}
