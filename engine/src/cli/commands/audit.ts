// `strato audit`: who changed what on the control plane (apps, environments, builds, endpoints, keys), newest
// first, and the changes a key asked for outside its scope. It needs an admin key.
import type { Command } from 'commander';
import type { AuditEntry } from '../../protocol/controlPlane';
import { wholeNumberFlag } from '../flags';
import { formatTime, printTable, red } from '../output';
import { controlPlane } from './keys';

function target(e: AuditEntry): string {
  return `${e.targetType} ${e.targetName ?? e.targetId ?? '?'}${e.app && e.targetType !== 'app' ? ` (app ${e.app})` : ''}`;
}

/** What changed, as JSON; for a refused change, why (the sentence the key got). */
function detail(e: AuditEntry): string {
  if (!e.detail) return '';
  const reason = e.outcome === 'denied' ? (JSON.parse(e.detail) as { reason?: unknown }).reason : undefined;
  return typeof reason === 'string' ? reason : e.detail;
}

function printAudit(entries: AuditEntry[]): void {
  const rows = entries.map((e) => [formatTime(e.at), e.keyName, e.operation, e.outcome === 'ok' ? 'ok' : red(e.outcome), target(e), detail(e)]);
  printTable(['TIME', 'KEY', 'OPERATION', 'OUTCOME', 'TARGET', 'DETAIL'], rows);
}

export function register(program: Command): void {
  program
    .command('audit')
    .description('who changed what on the control plane, newest first (needs an admin key)')
    .option('--app <name>', 'only changes of this app')
    .option('--key <name>', 'only changes made with keys of this name')
    .option('--limit <n>', 'how many entries (default 50, at most 10000)')
    .option('--json', 'print JSON')
    .action(async (o: { app?: string; key?: string; limit?: string; json?: boolean }) => {
      const limit = wholeNumberFlag('--limit', o.limit, 1);
      const entries = await (await controlPlane()).audit({ app: o.app, key: o.key, limit });
      if (o.json) process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
      else if (entries.length === 0) process.stdout.write(o.app || o.key ? 'no entries match\n' : 'no control-plane changes recorded yet\n');
      else printAudit(entries);
    });
}
