// Registers every `strato` subcommand, in the order `strato --help` lists them. Each command lives in its own
// module that exports `register(program)` and keeps argument parsing and terminal output only.
import type { Command } from 'commander';
import { register as init } from './init';
import { register as build } from './build';
import { register as dev } from './dev';
import { register as deploy } from './deploy';
import { register as platform } from './platform';
import { register as preview } from './preview';
import { register as check } from './check';
import { register as trust } from './trust';
import { register as volume } from './volume';
import { register as keys } from './keys';
import { register as audit } from './audit';
import { register as client } from './client';
import { register as logs } from './logs';

const commands: Array<(program: Command) => void> = [init, dev, build, check, deploy, logs, client, preview, volume, platform, keys, audit, trust];

export function registerCommands(program: Command): void {
  for (const register of commands) register(program);
}
