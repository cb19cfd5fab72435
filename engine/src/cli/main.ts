// The `strato` command: parses arguments with commander and hands each command to its module in commands/.
// Errors that users can act on are printed as one message (no stack trace) with a non-zero exit status.
import { Command } from 'commander';
import { registerCommands } from './commands';
import { UserError } from '../util/errors';
import { preferBaselineWasm } from '../util/wasmTier';

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

function reportError(err: unknown): number {
  const e = err as { code?: string; exitCode?: number; message?: string };
  if (typeof e.code === 'string' && e.code.startsWith('commander.')) {
    // commander already printed help, version or the usage error.
    return e.exitCode ?? 1;
  }
  if (err instanceof UserError) {
    process.stderr.write(err.preformatted ? `${err.message}\n` : `error: ${err.message}\n`);
    return err.exitCode;
  }
  process.stderr.write(`error: ${e.message ?? String(err)}\n`);
  if (process.env.STRATO_DEBUG) process.stderr.write(`${(err as Error).stack ?? ''}\n`);
  else process.stderr.write('(set STRATO_DEBUG=1 to see the stack trace, and please report this as a bug)\n');
  return 1;
}

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.exitCode = reportError(err);
  },
);
