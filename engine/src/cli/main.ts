// The `strato` command: parses arguments with commander and hands each command to its module in commands/.
// Errors that users can act on are printed as one message (no stack trace) with a non-zero exit status.
import { Command } from 'commander';
import { registerCommands } from './commands';
import { UserError } from '../util/errors';
import { preferBaselineWasm } from '../util/wasmTier';
import { plainUnlessColor } from './output';

/**
 * A reader that stops early (`strato platform status | head -1`) closes the pipe: the rest of the output goes nowhere
 * and the command still finishes what it does (a deploy under way is not cut short), with no stack trace.
 */
function quietWhenReaderLeaves(stream: NodeJS.WriteStream): void {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    stream.write = (() => true) as typeof stream.write;
  });
}

async function main(argv: string[]): Promise<number> {
  quietWhenReaderLeaves(process.stdout);
  quietWhenReaderLeaves(process.stderr);
  plainUnlessColor(process.stdout);
  plainUnlessColor(process.stderr);
  // A command parses a handful of files: the parser's WebAssembly is not worth optimising (see util/wasmTier.ts).
  preferBaselineWasm();
  const program = new Command('strato')
    .description('Strato: serverless GPU/CPU endpoints from decorated Python functions')
    .version(require('../../../package.json').version, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerCommands(program);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    return reportError(err);
  }
}

/** Whether the command was asked for JSON (`--json` among its options, not after `--`). */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * Says an error: a sentence on stderr and, for a command asked for `--json`, `{"error": sentence}` on stdout too, so
 * that a script reading stdout reads JSON whatever happened (the exit status says it failed).
 */
function reportError(err: unknown): number {
  const { code, message } = describeError(err);
  if (message !== null && wantsJson(process.argv)) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  return code;
}

/**
 * A file system refusal on a path of the user's (a file where a folder is needed, no permission, a full disk): a
 * problem of that path, said with it, not a bug of Strato's.
 */
function fileSystemProblem(e: NodeJS.ErrnoException): string | null {
  if (typeof e?.path !== 'string' || typeof e.code !== 'string') return null;
  const why: Record<string, string> = {
    ENOTDIR: 'a part of it is a file where a folder is needed; move or remove that file',
    EISDIR: 'it is a folder where a file is needed; move or remove it',
    EEXIST: 'something is already there where a folder or file is to be made; move or remove it',
    EACCES: 'permission denied; check the owner and mode of the path (ls -ld)',
    EPERM: 'the operation is not permitted on it; check the owner and mode of the path (ls -ld)',
    ENOSPC: 'no space is left on its device',
    EROFS: 'it is on a read-only file system',
  };
  // A rename refused for its destination (a folder where the file goes) names the destination, not the file renamed.
  const dest = (e as { dest?: unknown }).dest;
  const toDest = e.syscall === 'rename' && typeof dest === 'string' && ['EISDIR', 'ENOTDIR', 'EEXIST', 'ENOTEMPTY'].includes(e.code);
  return why[e.code] ? `cannot ${toDest ? `write ${dest}` : `${e.syscall ?? 'use'} ${e.path}`}: ${why[e.code]} (${e.code})` : null;
}

/** Writes the error's sentence to stderr; its exit status, and the sentence (null: help or version, not an error). */
function describeError(err: unknown): { code: number; message: string | null } {
  const e = err as { code?: string; exitCode?: number; message?: string };
  if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
    // commander already printed help, version or the usage error.
    const usage = (e.exitCode ?? 1) !== 0 && typeof e.message === 'string';
    return { code: e.exitCode ?? 1, message: usage ? e.message!.replace(/^error: /, '') : null };
  }
  if (err instanceof UserError) {
    process.stderr.write(err.preformatted ? `${err.message}\n` : `error: ${err.message}\n`);
    return { code: err.exitCode, message: err.message };
  }
  const fsProblem = fileSystemProblem(err as NodeJS.ErrnoException);
  if (fsProblem) {
    process.stderr.write(`error: ${fsProblem}\n`);
    return { code: 1, message: fsProblem };
  }
  process.stderr.write(`error: ${e.message ?? String(err)}\n`);
  if (process.env.STRATO_DEBUG) process.stderr.write(`${(err as Error).stack ?? ''}\n`);
  else process.stderr.write('(set STRATO_DEBUG=1 to see the stack trace, and please report this as a bug)\n');
  return { code: 1, message: e.message ?? String(err) };
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.exitCode = reportError(err);
  },
);
