// The local platform as a background process: `strato platform start|stop|status`, and on-demand start by
// clients when STRATO_API_URL is unset. Its state lives in the user's data dir (platform/ under
// STRATO_DATA_DIR, $XDG_DATA_HOME/strato or ~/.local/share/strato): platform.json (pid, URL), api-key (0600),
// platform.log.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../util/errors';
import { send } from './http';
import { defaultPlatformDir, lockHolder, pidAlive, platformLayout, readState, type PlatformState } from '../protocol/layout';

export interface DaemonStatus {
  running: boolean;
  dataDir: string;
  keyFile: string;
  logFile: string;
  state?: PlatformState;
}

export interface StartDaemonOptions {
  dataDir?: string;
  host?: string;
  port?: number;
  apiKey?: string;
  python?: string;
  /** How long to wait for it to answer (the first start initialises a database). */
  timeoutMs?: number;
}

/** The command that runs the CLI: the bundle beside this code (dist/cli.js), else the sources through tsx. */
export function cliCommand(): { exec: string; args: string[] } {
  if (process.env.STRATO_CLI) return { exec: process.execPath, args: [path.resolve(process.env.STRATO_CLI)] };
  const bundled = path.join(__dirname, 'cli.js');
  if (fs.existsSync(bundled)) return { exec: process.execPath, args: [bundled] };
  const source = path.resolve(__dirname, '..', 'cli', 'main.ts');
  return { exec: process.execPath, args: ['--import', require.resolve('tsx').replace(/loader\.cjs$/, 'loader.mjs'), source] };
}

async function healthy(url: string): Promise<boolean> {
  try {
    const r = await send({ baseUrl: url, apiKey: '' }, 'GET', '/healthz', { timeoutMs: 2000 });
    return r.status === 200;
  } catch {
    return false;
  }
}

export async function daemonStatus(dataDir = defaultPlatformDir()): Promise<DaemonStatus> {
  const l = platformLayout(dataDir);
  const state = readState(l.stateFile);
  const running = !!state && pidAlive(state.pid) && (await healthy(state.url));
  return { running, dataDir: l.root, keyFile: l.keyFile, logFile: l.daemonLog, state: running ? state : undefined };
}

/** Starts the platform in the background unless it already runs; resolves once it answers. */
export async function startDaemon(o: StartDaemonOptions = {}): Promise<DaemonStatus> {
  const dataDir = path.resolve(o.dataDir ?? defaultPlatformDir());
  const before = await daemonStatus(dataDir);
  if (before.running) return before;
  const l = platformLayout(dataDir);
  // A new data dir gets its database first: seconds on the first start of a machine, said so rather than silent.
  if (!fs.existsSync(l.db)) process.stderr.write('starting the local Strato platform for the first time: preparing its database (up to 10 s, once)...\n');
  fs.mkdirSync(l.root, { recursive: true, mode: 0o700 });
  const { exec, args } = cliCommand();
  const argv = [...args, 'platform', 'serve', '--data-dir', dataDir, '--daemon'];
  if (o.host) argv.push('--host', o.host);
  if (o.port !== undefined) argv.push('--port', String(o.port));
  if (o.python) argv.push('--python', o.python);
  const logFrom = fs.existsSync(l.daemonLog) ? fs.statSync(l.daemonLog).size : 0;
  const out = fs.openSync(l.daemonLog, 'a');
  const child = spawn(exec, argv, {
    detached: true,
    stdio: ['ignore', out, out],
    // --api-key travels in the environment, not argv, so it does not show in `ps`.
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', ...(o.apiKey ? { STRATO_PLATFORM_API_KEY: o.apiKey } : {}) },
  });
  fs.closeSync(out);
  let exited: number | null = null;
  child.on('exit', (code) => (exited = code ?? 1));
  child.unref();
  const deadline = Date.now() + (o.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    // Another command started it at the same moment (two deploys, the editor and a terminal): that one holds the
    // data dir, and ours stopped; both commands use it once it answers.
    const other = exited === null ? null : lockHolder(l.lockFile);
    if (exited !== null && other === null) {
      throw new UserError(`the Strato platform exited during start (code ${exited}): ${logTail(l.daemonLog, logFrom)}`);
    }
    const s = readState(l.stateFile);
    if (s && (s.pid === child.pid || s.pid === other) && (await healthy(s.url))) return daemonStatus(dataDir);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new UserError(`the Strato platform did not answer within ${Math.round((o.timeoutMs ?? 60_000) / 1000)} s; see ${l.daemonLog}`);
}

/** Stops the background platform: SIGTERM (workers stop, the last writes are committed), SIGKILL after 20 s. */
export async function stopDaemon(dataDir = defaultPlatformDir()): Promise<{ stopped: boolean; pid?: number }> {
  const l = platformLayout(dataDir);
  const state = readState(l.stateFile);
  if (!state || !pidAlive(state.pid)) {
    fs.rmSync(l.stateFile, { force: true });
    return { stopped: false };
  }
  process.kill(state.pid, 'SIGTERM');
  const deadline = Date.now() + 20_000;
  while (pidAlive(state.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (pidAlive(state.pid)) process.kill(state.pid, 'SIGKILL');
  fs.rmSync(l.stateFile, { force: true });
  return { stopped: true, pid: state.pid };
}

/** The local platform's URL, starting it when it is not running (clients without STRATO_API_URL). */
export async function ensureLocalPlatform(dataDir = defaultPlatformDir()): Promise<{ url: string; keyFile: string }> {
  const s = await startDaemon({ dataDir });
  if (!s.state) throw new UserError(`the local Strato platform is not answering; see ${s.logFile}`);
  return { url: s.state.url, keyFile: s.keyFile };
}

/** The last lines this start wrote to the log (from byte `from`): earlier runs' lines would mislead. */
function logTail(file: string, from: number): string {
  try {
    const lines = fs.readFileSync(file).subarray(from).toString('utf8').trim().split('\n');
    return lines.slice(-5).join(' | ');
  } catch {
    return `see ${file}`;
  }
}
