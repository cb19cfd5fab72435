// `strato keys create|list|revoke`: API keys per person with a scope (admin, deploy to named apps, invoke only). It
// needs an admin key; the rules are the platform's (docs/security.md).
import { Command, Option } from 'commander';
import { KEY_SCOPES, type ApiKeyInfo, type KeyScope } from '../../protocol/controlPlane';
import { bold, dim, formatTime, green, printTable, red } from '../output';
import { parseList } from './build';

/** The control plane of the platform this folder talks to (STRATO_API_URL, else the local one). */
export async function controlPlane() {
  const [{ resolveApiConfig }, { ControlPlaneClient }] = await Promise.all([import('../../api/config'), import('../../api/controlPlane')]);
  return new ControlPlaneClient(await resolveApiConfig({ projectDir: process.cwd() }));
}

const appsOf = (k: Pick<ApiKeyInfo, 'apps'>) => (k.apps.length ? k.apps.join(', ') : 'every app');
const when = (t: number | null, none = '-') => (t === null ? none : formatTime(t));

function status(k: ApiKeyInfo): string {
  if (k.builtin) return 'platform key (key file or --api-key)';
  return k.revokedAt === null ? green('active') : red(`revoked ${formatTime(k.revokedAt)} by ${k.revokedBy ?? '?'}`);
}

function printKeys(keys: ApiKeyInfo[]): void {
  const rows = keys.map((k) => [k.name, k.id, k.prefix ? `${k.prefix}…` : '-', k.scope, appsOf(k), when(k.createdAt), when(k.lastUsedAt, 'never'), status(k)]);
  printTable(['NAME', 'ID', 'PREFIX', 'SCOPE', 'APPS', 'CREATED', 'LAST USED', 'STATUS'], rows);
}

/** `--app a --app b,c` -> [a, b, c] */
const collect = (value: string, previous: string[] = []) => [...previous, ...parseList(value)];

export function register(program: Command): void {
  const keys = program.command('keys').description('API keys per person: admin, deploy to named apps, or invoke only (needs an admin key)');

  keys
    .command('create')
    .description('create a key; it is printed once (the platform keeps only its SHA-256 hash)')
    .requiredOption('--name <name>', 'who or what the key is for, e.g. alice or ci-shop')
    .addOption(
      new Option('--scope <scope>', 'admin: everything; deploy: change and call the --app apps; invoke: call endpoints only')
        .choices(KEY_SCOPES)
        .makeOptionMandatory(),
    )
    .option('--app <name>', 'an app the key reaches (repeat it, or separate names with commas); invoke keys without --app reach every app', collect)
    .option('--json', 'print JSON: {key: {...}, secret}')
    .action(async (o: { name: string; scope: KeyScope; app?: string[]; json?: boolean }) => {
      const created = await (await controlPlane()).createKey(o.name, o.scope, o.app ?? []);
      if (o.json) {
        process.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
        return;
      }
      const k = created.key;
      // The key alone on stdout (KEY=$(strato keys create ...)); what it is on stderr.
      process.stderr.write(`${green('created')} key ${bold(k.name)} (${k.id}, ${k.scope}: ${appsOf(k)})\n`);
      process.stdout.write(`${created.secret}\n`);
      process.stderr.write(dim(`This is the only time the key is shown: the platform keeps only its SHA-256 hash. Its holder sets it as STRATO_API_KEY.\n`));
    });

  keys
    .command('list')
    .description('list the keys: name, id, prefix, scope, apps, created, last used, revoked')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const list = await (await controlPlane()).listKeys();
      if (o.json) process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
      else printKeys(list);
    });

  keys
    .command('revoke')
    .description('revoke a key by id or name: it is refused (401) from now on')
    .argument('<key>', 'the id (key_...) or the name of an active key')
    .option('--json', 'print JSON')
    .action(async (idOrName: string, o: { json?: boolean }) => {
      const k = await (await controlPlane()).revokeKey(idOrName);
      if (o.json) process.stdout.write(`${JSON.stringify(k, null, 2)}\n`);
      else process.stdout.write(`${green('revoked')} key ${bold(k.name)} (${k.id}); requests with it are refused from now on\n`);
    });
}
