// How a bench runs the `strato` command in a process of its own: the TypeScript sources through tsx (no build needed),
// or, with `--bundle`, the bundled dist/cli.js that users run (after `npm run build`; also what a machine without the
// dev dependencies has: scripts/device/).
export const BUNDLE = process.argv.includes('--bundle');

/** Node's arguments for `strato <args>`, relative to the repository root (run it with cwd there). */
export function stratoArgs(...args: string[]): string[] {
  return BUNDLE ? ['dist/cli.js', ...args] : ['--import', 'tsx', 'engine/src/cli/main.ts', ...args];
}
