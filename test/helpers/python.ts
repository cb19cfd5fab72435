// Runs Python asynchronously with the repository's `strato` package importable: tests whose platform runs in their own
// process must keep its event loop free while a script calls it (spawnSync would block it).
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PYTHON, REPO } from './platform';

export interface PythonResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `python <args>` in `cwd`, killed after `timeoutMs`; STRATO_LOCAL is cleared so that calls go to the platform. */
export function runPython(args: string[], o: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<PythonResult> {
  return new Promise((resolve) => {
    const child = spawn(PYTHON, args, { cwd: o.cwd, env: { ...process.env, PYTHONPATH: path.join(REPO, 'engine', 'python'), STRATO_LOCAL: '', ...o.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Writes `code` to a script in `cwd`, runs it as runPython does, and removes it. */
export async function runPythonScript(code: string, o: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<PythonResult> {
  const script = path.join(o.cwd, `script_${Math.random().toString(36).slice(2)}.py`);
  writeFileSync(script, code);
  try {
    return await runPython([script], o);
  } finally {
    rmSync(script, { force: true });
  }
}
