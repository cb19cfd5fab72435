// code-server, the real VS Code the extension's tests open in chromium: installed from npm by
// scripts/install-code-server.sh, started on a free port of 127.0.0.1 in its own process group, with a user-data dir
// of the test's own, no telemetry, update checks, tips or AI features, and an extensions gallery that points nowhere.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO } from '../helpers/cli';
import { freePort } from '../helpers/ports';

/** Installs code-server (once per machine) and gives the path of its command. */
export function installCodeServer(): string {
  const install = spawnSync('bash', [path.join(REPO, 'scripts', 'install-code-server.sh')], { encoding: 'utf8', timeout: 600_000 });
  assert.equal(install.status, 0, `install-code-server.sh failed:\n${install.stdout}\n${install.stderr}`);
  return install.stdout.trim().split('\n').pop()!;
}

/** Writes the user settings of a user-data dir made in `tmp`: the quiet ones every test wants, then `extra`. */
export function userDataDir(tmp: string, extra: Record<string, unknown>): string {
  const userData = path.join(tmp, 'user-data');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      'telemetry.telemetryLevel': 'off',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'chat.disableAIFeatures': true,
      'workbench.tips.enabled': false,
      ...extra,
    }),
  );
  return userData;
}

/** The arguments that give code-server its user data, extensions and config, for every command of one test. */
export function dirArgs(tmp: string, userData: string, extensions: string): string[] {
  return ['--user-data-dir', userData, '--extensions-dir', extensions, '--config', path.join(tmp, 'config.yaml')];
}

export interface CodeServer {
  port: number;
  /** What it printed so far (for failure messages). */
  log: string[];
  /** SIGTERM to its process group, SIGKILL after 5 s. */
  stop(): Promise<void>;
}

/**
 * Starts code-server with `dirArgs` and `flags` and the environment `env` (the gallery added), and waits until it
 * answers `/healthz` (30 s at most; its output is in the error).
 */
export async function startCodeServer(bin: string, dirs: string[], flags: string[], env: NodeJS.ProcessEnv): Promise<CodeServer> {
  const port = await freePort();
  const log: string[] = [];
  const child: ChildProcess = spawn(
    bin,
    ['--auth', 'none', '--disable-telemetry', '--disable-update-check', ...flags, ...dirs, '--bind-addr', `127.0.0.1:${port}`],
    {
      detached: true, // its own process group, stopped as a whole
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...env,
        EXTENSIONS_GALLERY: JSON.stringify({
          serviceUrl: 'http://127.0.0.1:9/gallery',
          itemUrl: 'http://127.0.0.1:9/item',
          resourceUrlTemplate: 'http://127.0.0.1:9/res/{publisher}/{name}/{version}/{path}',
        }),
      },
    },
  );
  child.stdout!.on('data', (d) => log.push(String(d)));
  child.stderr!.on('data', (d) => log.push(String(d)));
  const server: CodeServer = {
    port,
    log,
    async stop() {
      if (!child.pid || child.exitCode !== null) return;
      const kill = (signal: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          // already gone
        }
      };
      kill('SIGTERM');
      const exited = await new Promise<boolean>((r) => {
        const timer = setTimeout(() => r(false), 5000);
        child.once('exit', () => (clearTimeout(timer), r(true)));
      });
      if (!exited) kill('SIGKILL');
    },
  };
  const url = `http://127.0.0.1:${port}/healthz`;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    if (child.exitCode !== null) throw new Error(`code-server exited with ${child.exitCode}:\n${log.join('')}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return server;
    await new Promise((r) => setTimeout(r, 200));
  }
  await server.stop();
  throw new Error(`code-server did not answer ${url} within 30 s:\n${log.join('')}`);
}
