// Other machines for worker-host tests: Linux network namespaces made by the test (needs root and iproute2), each
// joined to this one by its own veth pair on a private /24 (10.231.x.0/24). Nothing is routed off the machine:
// the addresses exist only on those links, and the namespaces route to this side's end alone.
import { spawnSync } from 'node:child_process';

export interface TestNamespace {
  name: string;
  /** This side's end of the pair (the platform listens here). */
  hostAddr: string;
  /** The namespace's own address (what its workers see as theirs). */
  nsAddr: string;
}

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')} failed: ${r.error?.message ?? r.stderr.trim()}`);
}

/** Why namespaces cannot be made here (not root, no iproute2), or null. */
export function netnsMissing(): string | null {
  if (process.getuid?.() !== 0) return 'network namespaces need root';
  const r = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  return r.status === 0 ? null : `iproute2's ip is missing or refuses (${r.error?.message ?? r.stderr.trim()}); apt-get install iproute2`;
}

/** Namespaces a killed test run left behind (its pid is gone): deleting one deletes its veth pair too. */
function removeStale(): void {
  const r = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  for (const m of (r.stdout ?? '').matchAll(/^strato-t(\d+)-\d+/gm)) {
    try {
      process.kill(Number(m[1]), 0);
    } catch {
      spawnSync('ip', ['netns', 'del', m[0]]);
    }
  }
}

/** `count` namespaces; remove() deletes them (and their veth pairs) and is safe to call after a partial setup. */
export function makeNamespaces(count: number): { spaces: TestNamespace[]; remove(): void } {
  removeStale();
  const tag = process.pid;
  const spaces: TestNamespace[] = [];
  const remove = () => {
    for (let i = 1; i <= count; i++) {
      spawnSync('ip', ['netns', 'del', `strato-t${tag}-${i}`]);
      spawnSync('ip', ['link', 'del', `stv${tag}h${i}`]); // gone with the namespace, unless the move failed
    }
  };
  try {
    for (let i = 1; i <= count; i++) {
      const name = `strato-t${tag}-${i}`;
      const subnet = `10.231.${10 + (((tag % 100) * 2 + i) % 240)}`;
      const [outer, inner] = [`stv${tag}h${i}`, `stv${tag}n${i}`];
      const sp = { name, hostAddr: `${subnet}.1`, nsAddr: `${subnet}.2` };
      ip('netns', 'add', name);
      spaces.push(sp);
      ip('link', 'add', outer, 'type', 'veth', 'peer', 'name', inner);
      ip('link', 'set', inner, 'netns', name);
      ip('addr', 'add', `${sp.hostAddr}/24`, 'dev', outer);
      ip('link', 'set', outer, 'up');
      ip('netns', 'exec', name, 'ip', 'addr', 'add', `${sp.nsAddr}/24`, 'dev', inner);
      ip('netns', 'exec', name, 'ip', 'link', 'set', inner, 'up');
      ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
      // The platform listens on the first namespace's pair; the others reach it through their own pair's far end.
      ip('netns', 'exec', name, 'ip', 'route', 'add', 'default', 'via', sp.hostAddr);
    }
  } catch (e) {
    remove();
    throw e;
  }
  return { spaces, remove };
}
