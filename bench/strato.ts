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
