// `strato volume list|delete`: the app's network volumes, which deploys create and keep and only this removes.
import type { Command } from 'commander';
import { UserError } from '../../util/errors';
import { bold, confirm, dim, green } from '../output';
import { formatBytes } from './deploy';

async function volumeContext() {
  const [{ commandContext }, environments] = await Promise.all([import('../../deploy/context'), import('../../deploy/environments')]);
  return { ...(await commandContext(process.cwd())), environments };
}

export function register(program: Command): void {
  const volume = program.command('volume').description("this app's network volumes (kept across deploys; removed only here)");
  volume
    .command('list')
    .description("list the app's volumes with their datacenter, size and the endpoints that mount them")
    .option('--json', 'print JSON: [{name, datacenter, sizeGb, usedBytes, endpoints}]')
    .action(async (opts: { json?: boolean }) => {
      const { app, target, environments } = await volumeContext();
      const list = await environments.listVolumes(target, app);
      if (opts.json) return void process.stdout.write(JSON.stringify(list, null, 2) + '\n');
      if (list.length === 0) return void process.stdout.write(`app ${app} has no volumes: declare one with volume=NetworkVolume(name="...") and deploy.\n`);
      for (const v of list)
        process.stdout.write(
          `${bold(v.name.padEnd(20))} ${v.datacenter.padEnd(10)} ${formatBytes(v.usedBytes).padStart(8)} of ${String(v.sizeGb).padStart(4)} GB  ` +
            `${dim(v.endpoints.length ? `mounted by ${v.endpoints.join(', ')}` : 'not mounted')}\n`,
        );
    });
  volume
    .command('delete')
    .description('delete a volume and every file on it (refused while an endpoint mounts it)')
    .argument('<NAME>', 'volume name')
    .option('--datacenter <id>', 'its datacenter, when the app has volumes of this name in several')
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (name: string, opts: { datacenter?: string; yes?: boolean }) => {
      if (opts.datacenter !== undefined) {
        // The forms Endpoint(datacenter=...) takes: any case, '_' for '-'.
        const dc = (await import('../../catalog')).datacenterFlag(opts.datacenter);
        if ('error' in dc) throw new UserError(dc.error);
        opts.datacenter = dc.id;
      }
      const { app, target, environments } = await volumeContext();
      // Asked only about a volume that is there: a name that is not gets the platform's answer at once.
      const found = opts.yes
        ? []
        : (await environments.listVolumes(target, app)).filter((v) => v.name === name && (!opts.datacenter || v.datacenter === opts.datacenter));
      if (found.length > 0) {
        if (!process.stdin.isTTY) throw new UserError(`deleting volume ${name} removes every file on it: pass --yes to confirm without a terminal.`);
        const what = found.length === 1 ? ` (${found[0].datacenter}, ${formatBytes(found[0].usedBytes)} used)` : '';
        if (!(await confirm(`Delete volume ${name}${what} of ${app} and every file on it?`, false))) throw new UserError('nothing deleted.');
      }
      await environments.deleteVolume(target, app, name, opts.datacenter);
      process.stdout.write(`${green('deleted')} volume ${name} of ${app}\n`);
    });
}
