// A real Docker engine of the test's own (socket, data root, exec root, pidfile in a temp dir), started once per
// test file; stop() ends it by its PID and removes what it changed on the host (docker0, DOCKER iptables chains).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DockerEngine } from '../../engine/src/containers';

export interface TestDockerd {
  /** unix://... for DOCKER_HOST. */
  host: string;
  engine: DockerEngine;
  dir: string;
  stop(): Promise<void>;
}

const CHAINS = ['DOCKER', 'DOCKER-USER', 'DOCKER-ISOLATION-STAGE-1', 'DOCKER-ISOLATION-STAGE-2'];

/** Why the engine cannot run here (not installed, not root), or null. */
export function dockerdMissing(): string | null {
  if (spawnSync('dockerd', ['--version']).error) return 'dockerd is not installed (apt-get install docker.io iptables)';
  if (process.getuid?.() !== 0) return 'dockerd needs root';
  return null;
}

function hostState(): { bridge: boolean; chains: Set<string> } {
  const bridge = fs.existsSync('/sys/class/net/docker0');
  const chains = new Set<string>();
  for (const table of ['filter', 'nat']) {
    const r = spawnSync('iptables', ['-t', table, '-S'], { encoding: 'utf8' });
    for (const m of (r.stdout ?? '').matchAll(/^-N (\S+)/gm)) if (CHAINS.includes(m[1])) chains.add(`${table}/${m[1]}`);
  }
  return { bridge, chains };
}

export async function startDockerd(): Promise<TestDockerd> {
  const before = hostState();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-dockerd-'));
  const sock = path.join(dir, 'docker.sock');
  const log = fs.openSync(path.join(dir, 'dockerd.log'), 'a');
  // No default bridge: the preview makes networks of its own, so docker0 is never needed.
  const child: ChildProcess = spawn(
    'dockerd',
    ['--data-root', path.join(dir, 'data'), '--exec-root', path.join(dir, 'exec'), '--pidfile', path.join(dir, 'docker.pid'), '-H', `unix://${sock}`, '--bridge', 'none'],
    { stdio: ['ignore', log, log] },
  );
  fs.closeSync(log);
  const engine = new DockerEngine(`unix://${sock}`);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await engine.connect();
      break;
    } catch (e) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`dockerd did not start: ${fs.readFileSync(path.join(dir, 'dockerd.log'), 'utf8').slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    }
    const now = hostState();
    if (now.bridge && !before.bridge) spawnSync('ip', ['link', 'del', 'docker0']);
    // Flush every new chain first (they jump to each other), then unhook and delete them.
    const added = [...now.chains].filter((c) => !before.chains.has(c));
    for (const c of added) {
      const [table, chain] = c.split('/');
      spawnSync('iptables', ['-t', table, '-F', chain]);
    }
    for (const c of added) {
      const [table, chain] = c.split('/');
      const rules = spawnSync('iptables', ['-t', table, '-S'], { encoding: 'utf8' }).stdout ?? '';
      for (const rule of rules.split('\n').filter((l) => l.startsWith('-A ') && l.includes(`-j ${chain}`)))
        spawnSync('iptables', ['-t', table, ...rule.replace(/^-A /, '-D ').split(' ')]);
      spawnSync('iptables', ['-t', table, '-X', chain]);
    }
    // Container layers are mounts under the data root: unmount before removing.
    spawnSync('sh', ['-c', `grep -o " ${dir}[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l`]);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { host: `unix://${sock}`, engine, dir, stop };
}
