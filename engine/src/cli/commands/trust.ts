// `strato trust URL`: the user confirms that a platform URL chosen by a project (.env, workspace settings) may
// receive the user's own STRATO_API_KEY; the rule itself is in api/trust.ts.
import type { Command } from 'commander';
import { green } from '../output';

export function register(program: Command): void {
  program
    .command('trust')
    .description("allow a project's STRATO_API_URL to receive your own STRATO_API_KEY")
    .argument('<URL>', 'the platform URL (its scheme, host and port are trusted)')
    .action(async (url: string) => {
      const { trustFile, trustUrl } = await import('../../api/trust');
      const origin = trustUrl(url);
      process.stdout.write(`${green('trusted')} ${origin}: your STRATO_API_KEY may be sent there (listed in ${trustFile()})\n`);
    });
}
