// Runs the bundled `strato` command (dist/cli.js, built on first use) as a user would, capturing its output.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export const REPO = path.resolve(__dirname, '../..');
export const CLI = path.join(REPO, 'dist', 'cli.js');

let built = false;
export function ensureBuilt(): void {
  if (built || (process.env.STRATO_SKIP_BUILD && existsSync(CLI))) return;
  const r = spawnSync(process.execPath, [path.join(REPO, 'esbuild.mjs')], { cwd: REPO, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}\n${r.stderr}`);
  built = true;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number }): Promise<CliResult> {
  ensureBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: '1', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`strato ${args.join(' ')} did not finish in ${opts.timeoutMs ?? 120000} ms\n${stdout}\n${stderr}`));
    }, opts.timeoutMs ?? 120000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}
