// Starts `strato dev` (the bundled CLI) as a user would, waits for its route table, and stops it with Ctrl+C.
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, ensureBuilt } from './cli';

export interface DevProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  port: number;
  /** Sends SIGINT (Ctrl+C) and waits for the exit; returns the exit code. */
  stop(): Promise<number | null>;
  waitFor(re: RegExp, timeoutMs?: number, stream?: 'stdout' | 'stderr'): Promise<string>;
}

export async function startDev(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; command?: 'dev' | 'run' }): Promise<DevProcess> {
  ensureBuilt();
  const child = spawn(process.execPath, [CLI, opts.command ?? 'dev', ...args], {
    cwd: opts.cwd,
    env: { ...process.env, NO_COLOR: '1', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = (re: RegExp, timeoutMs = 30000, stream: 'stdout' | 'stderr' = 'stdout') =>
    new Promise<string>((resolve, reject) => {
      const started = Date.now();
      const tick = () => {
        const text = stream === 'stdout' ? out : err;
        const m = re.exec(text);
        if (m) return resolve(m[0]);
        if (child.exitCode !== null) return reject(new Error(`strato dev exited (${child.exitCode}) before ${re}:\n${out}\n${err}`));
        if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${re}:\n${out}\n${err}`));
        setTimeout(tick, 25);
      };
      tick();
    });
  const dev: DevProcess = {
    child,
    stdout: () => out,
    stderr: () => err,
    port: 0,
    waitFor,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  return dev;
}

/** Starts dev and waits until it serves; the port comes from the "API explorer" line. */
export async function startServing(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; command?: 'dev' | 'run' }): Promise<DevProcess> {
  const dev = await startDev(args, opts);
  const line = await dev.waitFor(/API explorer: http:\/\/[^:]+:(\d+)\/docs/, 60000);
  dev.port = Number(/:(\d+)\/docs/.exec(line)![1]);
  return dev;
}
