// What bench/multinode.ts reads off the machine while a round runs: the CPU each kind of process spent and how busy
// the threads that may bound the run were (Linux /proc), and what the nodes' PostgreSQL connections waited on.
import fs from 'node:fs';
import pg from 'pg';
import { processIds, processStat } from '../test/helpers/procfs';

type Kind = 'nodes' | 'PostgreSQL' | 'workers' | 'clients';
const KINDS: Kind[] = ['nodes', 'PostgreSQL', 'workers', 'clients'];

/** CPU used so far by the processes of this machine, by kind, and by the threads that may bound the run (Linux /proc; empty elsewhere). */
export interface CpuSnapshot {
  /** CPU seconds by kind. */
  kinds: Partial<Record<Kind, number>>;
  /** CPU ms of each node's main thread and each PostgreSQL process. */
  threads: Map<string, { kind: Kind; ms: number }>;
}

export function cpuSnapshot(nodePids: number[]): CpuSnapshot {
  const out: CpuSnapshot = { kinds: {}, threads: new Map() };
  for (const pid of processIds()) {
    const stat = processStat(pid);
    if (!stat) continue;
    const { comm, pgid } = stat;
    const kind: Kind | null =
      pid === process.pid
        ? 'clients'
        : comm.startsWith('postgres')
          ? 'PostgreSQL'
          : comm.startsWith('python')
            ? 'workers'
            : nodePids.includes(pid) || (nodePids.includes(pgid) && comm.startsWith('node'))
              ? 'nodes'
              : null;
    if (!kind) continue;
    out.kinds[kind] = (out.kinds[kind] ?? 0) + stat.cpuMs / 1000;
    if (kind === 'PostgreSQL') out.threads.set(`${pid}`, { kind, ms: stat.cpuMs });
    if (kind === 'nodes' && nodePids.includes(pid)) out.threads.set(`${pid}`, { kind, ms: processStat(pid, pid)?.cpuMs ?? 0 });
  }
  return out;
}

/** What each kind of process spent between two snapshots, and how busy the busiest threads of each kind were. */
export function cpuLines(before: CpuSnapshot, after: CpuSnapshot, seconds: number, clientThreads: number[]): string[] {
  const used = KINDS.map((k) => [k, (after.kinds[k] ?? 0) - (before.kinds[k] ?? 0)] as const);
  const total = used.reduce((s, [, v]) => s + v, 0);
  const busy = new Map<Kind, number[]>([['clients', clientThreads]]);
  for (const [key, t] of after.threads) {
    const share = (t.ms - (before.threads.get(key)?.ms ?? 0)) / 1000 / seconds;
    if (share >= 0.05) busy.set(t.kind, [...(busy.get(t.kind) ?? []), share]);
  }
  const names: Partial<Record<Kind, string>> = {
    nodes: "nodes' main threads",
    clients: 'client threads (while sending)',
    PostgreSQL: 'busiest PostgreSQL processes',
  };
  return [
    `CPU ${total.toFixed(1)} s in ${seconds.toFixed(1)} s (${(total / seconds).toFixed(2)} cores busy): ${used.map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ')}`,
    `share of the time busy: ${[...busy]
      .map(
        ([k, v]) =>
          `${names[k]} ${v
            .sort((x, y) => y - x)
            .slice(0, 4)
            .map((x) => x.toFixed(2))
            .join(' ')}`,
      )
      .join('; ')}`,
  ];
}

/** CPU ms used so far by the calling thread (Linux, where /proc/thread-self names it; 0 elsewhere). */
export function threadCpuMs(): number {
  let tid: number;
  try {
    tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return 0;
  }
  return processStat(process.pid, tid)?.cpuMs ?? 0;
}

/** The bench's own database connections, left out of the samples. */
export const BENCH_APP = 'strato-bench';

/** Samples pg_stat_activity of the nodes' connections until the function it resolves with is called; that prints. */
export async function sampleWaits(database: string): Promise<() => Promise<string>> {
  const db = new pg.Client({ connectionString: database, application_name: BENCH_APP });
  await db.connect();
  const seen = new Map<string, number>();
  let samples = 0;
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      const { rows } = await db.query<{ w: string; n: number }>(
        `select case when state = 'active' then coalesce(wait_event_type || ':' || wait_event, 'on CPU') else state end as w, count(*)::int as n ` +
          `from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid() ` +
          `and application_name <> '${BENCH_APP}' and query not like 'listen %' group by 1`,
      );
      samples++;
      for (const r of rows) seen.set(r.w, (seen.get(r.w) ?? 0) + r.n);
      await new Promise((r) => setTimeout(r, 2));
    }
  })();
  return async () => {
    stop = true;
    await loop;
    await db.end();
    const top = [...seen].sort((a, b) => b[1] - a[1]).slice(0, 8);
    return `PostgreSQL connections, mean per sample of ${samples}: ${top.map(([w, n]) => `${w} ${(n / samples).toFixed(2)}`).join(', ')}`;
  };
}
