// `strato logs <endpoint> [--env NAME] [--tail N] [--follow] [--json]`: the worker log of a deployed endpoint from
// the platform's logs API, so it reads a remote platform as well as the local one; --follow prints lines as they come.
import type { Command } from 'commander';
import type { WorkerLogLine, WorkerLogPage } from '../../protocol/logs';
import { wholeNumberFlag } from '../flags';

interface LogsOptions {
  env?: string;
  tail?: string;
  follow?: boolean;
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command('logs')
    .description("an endpoint's worker logs (stdout, stderr and the platform's notes), from the platform")
    .argument('<endpoint>', "endpoint name (a dev server's: live-NAME, or NAME with --env live)")
    .option('--env <name>', 'environment (default: the only one)')
    .option('--tail <n>', 'how many of the last lines to print first (default 100, at most 10000)')
    .option('-f, --follow', 'keep printing new lines until Ctrl+C')
    .option('--json', 'one JSON object a line: time, worker, stream, level, text')
    .action(async (name: string, o: LogsOptions) => {
      const [{ LOG_LIMITS }, { commandContext, DEV_ENVIRONMENT, LIVE_PREFIX }, { findDeployedEndpoint }, { LogsClient, missingNodesNote }, out] =
        await Promise.all([
          import('../../protocol/logs'),
          import('../../deploy/context'),
          import('../../deploy/environments'),
          import('../../api/logs'),
          import('../output'),
        ]);
      const tail = wholeNumberFlag('--tail', o.tail, 0, LOG_LIMITS.maxTail);
      const { app, target } = await commandContext(process.cwd());
      // A live- name is a dev server's endpoint: its environment goes without saying.
      const ep = await findDeployedEndpoint(target, app, o.env ?? (name.startsWith(LIVE_PREFIX) ? DEV_ENVIRONMENT : undefined), name);
      const paint: Record<WorkerLogLine['level'], (s: string) => string> = { debug: out.dim, info: (s) => s, warn: out.yellow, error: out.red };
      const print = (l: WorkerLogLine) =>
        process.stdout.write(o.json ? `${JSON.stringify(l)}\n` : `${out.dim(`${l.time.slice(11, 23)} ${l.worker}`)} ${paint[l.level](l.text)}\n`);
      const client = new LogsClient(target);
      // A cluster node that did not answer: said once, and again only when that changes (follow reads every few seconds).
      let missing: string | null = null;
      const warn = (page: WorkerLogPage) => {
        const note = missingNodesNote(page);
        if (note && note !== missing) process.stderr.write(`${out.yellow(`warning: ${note}`)}\n`);
        missing = note;
      };
      if (!o.follow) {
        const page = await client.read(ep.id, { tail });
        warn(page);
        if (!page.lines.length && !o.json && tail !== 0) process.stderr.write(`${ep.name} has no log lines yet: its workers write them when they start.\n`);
        page.lines.forEach(print);
        // Fewer lines than asked and older ones left out: the answer's byte bound, said rather than passed off as the whole tail.
        if (page.truncated && !o.json && tail !== undefined && page.lines.length < tail)
          process.stderr.write(
            `${out.dim(`(${page.lines.length} lines: one answer holds at most ${LOG_LIMITS.pageBytes / 1048576} MB of log; older lines left out)`)}\n`,
          );
        return;
      }
      process.stderr.write(out.dim(`following ${ep.name} (${ep.id}); Ctrl+C stops\n`));
      for await (const page of client.follow(ep.id, { tail, onPage: warn })) page.lines.forEach(print);
    });
}
