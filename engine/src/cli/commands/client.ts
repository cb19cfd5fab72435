// `strato client --lang ts|openapi [--env NAME] [--out DIR|FILE]`: the typed client of a deployed environment, from the
// environment's endpoints (as `env get` lists them) and the code's type hints. Warnings are printed, never fatal.
import { Option, type Command } from 'commander';
import type { ClientLanguage } from '../../clientgen/write';

const LANGUAGES: readonly ClientLanguage[] = ['ts', 'openapi'];

export function register(program: Command): void {
  program
    .command('client')
    .description("write a typed client of a deployed environment: a TypeScript module, or the environment's OpenAPI document")
    .addOption(new Option('--lang <lang>', 'ts: a TypeScript module (<app>-<env>.ts); openapi: an OpenAPI 3 document').choices(LANGUAGES).default('ts'))
    .option('--env <name>', 'environment (default: the only one)')
    .option('--out <path>', 'folder to write to, or the file itself when it ends in .ts (openapi: .json)', '.')
    .action(async (opts: { lang: ClientLanguage; env?: string; out: string }) => {
      // ts-morph (the TypeScript compiler) loads here, and only for this command.
      const [{ commandContext }, { getEnvironment }, { loadProject }, { clientOut, writeClient }, { dim, green, yellow }] = await Promise.all([
        import('../../deploy/context'),
        import('../../deploy/environments'),
        import('../../project'),
        import('../../clientgen/write'),
        import('../output'),
      ]);
      const { root, app, target } = await commandContext(process.cwd());
      const environment = await getEnvironment(target, app, opts.env);
      const model = await loadProject(root);
      const r = await writeClient(model, environment, opts.lang, clientOut(opts.out, opts.lang));
      for (const w of r.warnings) process.stderr.write(`${yellow('warning')}: ${w}\n`);
      const what = `${r.functions} queue-based function${r.functions === 1 ? '' : 's'}, ${r.routes} route${r.routes === 1 ? '' : 's'}`;
      process.stdout.write(`${green('wrote')} ${r.file}  ${dim(`${app}/${environment.environment}: ${what}`)}\n`);
      if (opts.lang === 'ts') process.stdout.write(dim('import { createClient } from it; the key comes from createClient({ apiKey }) or STRATO_API_KEY.\n'));
    });
}
