// A real Docker engine of the test's own (socket, data root, exec root, pidfile in a temp dir), started once per
// test file; stop() ends it by its PID and removes what it changed on the host (bridges, iptables chains and policy).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DockerEngine } from '../../engine/src/containers';
import { commandLine, processIds } from './procfs';

export interface TestDockerd {
  /** unix://... for DOCKER_HOST. */
  host: string;
  engine: DockerEngine;
  dir: string;
  stop(): Promise<void>;
}

/** Why the engine cannot run here (not installed, not root), or null. */
export function dockerdMissing(): string | null {
  if (spawnSync('dockerd', ['--version']).error) return 'dockerd is not installed (apt-get install docker.io iptables)';
  if (process.getuid?.() !== 0) return 'dockerd needs root';
  return null;
}

/** The filter and nat tables (dockerd adds chains, rules and a FORWARD DROP policy), to restore afterwards. */
function saveIptables(): string {
  return ['filter', 'nat'].map((t) => spawnSync('iptables-save', ['-t', t], { encoding: 'utf8' }).stdout ?? '').join('');
}

function links(): Set<string> {
  return new Set(fs.readdirSync('/sys/class/net'));
}

/** Processes whose command line names our directory (containerd and its shims, started by our dockerd). */
function ours(dir: string): number[] {
  return processIds().filter((pid) => commandLine(pid).includes(dir));
}

export async function startDockerd(): Promise<TestDockerd> {
  const iptablesBefore = saveIptables();
  // dockerd turns on IP forwarding for its bridges; put it back as it was.
  const forwarding = '/proc/sys/net/ipv4/ip_forward';
  const forwardingBefore = fs.readFileSync(forwarding, 'utf8');
  const linksBefore = links();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-dockerd-'));
  const sock = path.join(dir, 'docker.sock');
  const log = fs.openSync(path.join(dir, 'dockerd.log'), 'a');
  // No default bridge: the preview makes networks of its own, so docker0 is never needed.
  const child: ChildProcess = spawn(
    'dockerd',
    [
      '--data-root',
      path.join(dir, 'data'),
      '--exec-root',
      path.join(dir, 'exec'),
      '--pidfile',
      path.join(dir, 'docker.pid'),
      '-H',
      `unix://${sock}`,
      '--bridge',
      'none',
    ],
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
        throw new Error(`dockerd did not start: ${fs.readFileSync(path.join(dir, 'dockerd.log'), 'utf8').slice(-2000)}`, { cause: e });
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const stop = async () => {
    // Containers first (a test that failed half-way may leave a preview running), then the engine by its PID.
    try {
      const all = await engine.json<Array<{ Id: string }>>('GET', '/containers/json?all=1');
      for (const c of all) await engine.call('DELETE', `/containers/${c.Id}?force=1`, undefined, [404, 409]);
      const nets = await engine.json<Array<{ Id: string; Name: string }>>('GET', '/networks');
      for (const n of nets.filter((n) => !['bridge', 'host', 'none'].includes(n.Name))) await engine.call('DELETE', `/networks/${n.Id}`, undefined, [404, 409]);
    } catch {
      /* the engine is gone already */
    }
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    }
    for (const pid of ours(dir)) process.kill(pid, 'SIGKILL');
    for (const l of links()) if (!linksBefore.has(l) && /^(docker0|br-|veth)/.test(l)) spawnSync('ip', ['link', 'del', l]);
    spawnSync('iptables-restore', [], { input: iptablesBefore });
    try {
      fs.writeFileSync(forwarding, forwardingBefore);
    } catch {
      /* read-only /proc/sys (a container): nothing to put back */
    }
    // Container layers are mounts under the data root: unmount before removing.
    spawnSync('sh', ['-c', `grep -o " ${dir}[^ ]*" /proc/mounts | sort -r | xargs -r -n1 umount -l`]);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { host: `unix://${sock}`, engine, dir, stop };
}
