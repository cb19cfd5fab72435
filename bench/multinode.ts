// Platform nodes over one PostgreSQL server (issue #11), each figure beside its baseline from the same run:
// - `/run` throughput to completion, rounds of 30,000 no-op jobs: one node, and three nodes with the clients spread
//   over them, each right after the nodes started, then warm rounds of the two in turn, so that both see the machine
//   as it is that minute (target where the machine has the cores: three nodes at least 2.5x one node, the medians of
//   the warm rounds; the cores are printed);
// - a node SIGKILLed while 10,000 accepted jobs are queued or running on three nodes: the time until every job ended,
//   how many ran again elsewhere, and that each has one row with one result.
// `--throughput-only` skips the fault run; STRATO_BENCH_WARM_ROUNDS sets the warm rounds (3). Diagnostics:
// STRATO_BENCH_PG_WAITS=1 samples what the nodes' database connections wait on; STRATO_BENCH_BUSY_LOOPS=N runs the
// lone node once more beside N spinning processes. STRATO_BENCH_CLIENT_CPUS=12-15 (a CPU list as taskset takes it)
// runs the client threads on those CPUs and the nodes, their workers and PostgreSQL on the others, so that the nodes
// have the same cores in both runs and the clients' share of the machine is set apart. Every node is a
// `strato platform serve` process; PostgreSQL is a cluster of the bench's own (test/helpers/postgres.ts).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import pg from 'pg';
import { Pool } from 'undici';
import { ControlPlaneClient } from '../engine/src/api/controlPlane';
import { buildTestArtifact } from '../test/helpers/artifact';
import { deploy } from '../test/helpers/platform';
import { startPostgres } from '../test/helpers/postgres';
import { queueSpec, WORKER_PY } from '../test/helpers/testWorkers';
import { median } from './report';
import { BUNDLE, killGroup, cleanUpOnExit, stratoArgs } from './strato';
import { BENCH_APP, cpuLines, cpuSnapshot, sampleWaits, threadCpuMs } from './clusterGauges';

const REPO = path.resolve(__dirname, '..');
const KEY = 'bench-key';
const PYTHON = process.env.STRATO_PYTHON || 'python3';
/** Jobs of a throughput run (long enough that start and end are a small part of it at 20,000 jobs/s) and of the fault run. */
const N_THROUGHPUT = 30_000;
const N = 10_000;
// Concurrent clients per node: the load grows with the service, as its users would, and is enough that each node's
// capacity, not the wait of each client for its answer, bounds the throughput (with 32 clients in all, one node's
// /run answered in about 6 ms and three nodes shared the same 32: the figure was latency, not capacity). Every node
// then has as many requests in flight in both runs, so its group commits are as large.
const CLIENTS_PER_NODE = Number(process.env.STRATO_BENCH_CLIENTS_PER_NODE ?? 128);
const children: ChildProcess[] = [];

interface Node {
  url: string;
  child: ChildProcess;
}

/** The CPUs of `list` ("0-3,8"), or why it is not a list of this machine's CPUs. */
function cpuList(list: string, cores: number): number[] | string {
  const cpus = new Set<number>();
  for (const part of list.split(',')) {
    const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part);
    if (!m) return `"${part}" is not a CPU number or range`;
    const [from, to] = [Number(m[1]), Number(m[2] ?? m[1])];
    if (to < from || to >= cores) return `${part} is not within this machine's CPUs 0-${cores - 1}`;
    for (let c = from; c <= to; c++) cpus.add(c);
  }
  return cpus.size < cores ? [...cpus].sort((a, b) => a - b) : `it leaves no CPU to the nodes (this machine has ${cores})`;
}

/** STRATO_BENCH_CLIENT_CPUS: the clients' CPUs and the rest (the nodes', their workers' and PostgreSQL's), or none. */
const PINNED = ((): { clients: string; nodes: string; count: number } | undefined => {
  const list = process.env.STRATO_BENCH_CLIENT_CPUS;
  if (!list) return undefined;
  const cores = os.cpus().length;
  const cpus = cpuList(list, cores);
  if (typeof cpus === 'string') {
    console.error(`STRATO_BENCH_CLIENT_CPUS=${list}: ${cpus}; give CPUs as taskset takes them, e.g. ${cores >= 8 ? `${cores - 4}-${cores - 1}` : cores - 1}`);
    process.exit(2);
  }
  const rest = Array.from({ length: cores }, (_, c) => c).filter((c) => !cpus.includes(c));
  return { clients: cpus.join(','), nodes: rest.join(','), count: cpus.length };
})();

/** Sets the CPUs every thread of this process may run on (threads made later inherit the making thread's). */
function pinSelf(cpus: string): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`taskset failed (${r.error?.message ?? r.stderr}); it is in util-linux`);
}

function startNode(dataDir: string, database: string): Promise<Node> {
  const args = stratoArgs('platform', 'serve', '--data-dir', dataDir, '--port', '0', '--api-key', KEY, '--python', PYTHON);
  const command = [process.execPath, ...args, '--database', database, '--node-lost-ms', '3000'];
  // taskset execs the node in its place: the child's pid is the node's.
  const [file, ...argv] = PINNED ? ['taskset', '-c', PINNED.nodes, ...command] : command;
  const child = spawn(file, argv, {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, STRATO_DATA_DIR: path.join(dataDir, 'user') },
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`not ready: ${out}`)), 60_000);
    const on = (d: Buffer) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1], child });
      }
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

/**
 * The clients run on threads of their own: at 15,000 jobs/s one thread of HTTP clients is the bound (seen on 16 cores:
 * the client thread at 100% while three nodes had room). One thread per 4 cores, at most 4, or STRATO_BENCH_CLIENT_THREADS.
 */
const CLIENT_THREADS = Number(process.env.STRATO_BENCH_CLIENT_THREADS) || Math.max(1, Math.min(4, PINNED ? PINNED.count : Math.floor(os.cpus().length / 4)));

interface ClientWork {
  urls: string[];
  endpointId: string;
  /** The job's input, with `$i` standing for the job's number. */
  input: string;
  /** Jobs in all. */
  n: number;
  /** This thread sends jobs thread, thread + threads, ... below n. */
  thread: number;
  threads: number;
  clients: number;
}

/**
 * One `/run` through undici's `dispatch` with a handler of its own: the response's body is never made a stream, and
 * the headers go as a flat array, so the client spends about a quarter less CPU a request than with `request()`
 * (alternating rounds against one echo server, 2 cores: 65-75 against 80-110 µs). The bench's clients share the
 * machine with the nodes, and what they spend is taken from the nodes.
 */
function postRun(pool: Pool, runPath: string, headers: string[], body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let status = 0;
    const chunks: Buffer[] = [];
    pool.dispatch(
      { method: 'POST', path: runPath, headers, body },
      {
        onConnect() {},
        onHeaders(code: number) {
          status = code;
          return true;
        },
        onData(chunk: Buffer) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          if (status === 200) resolve();
          else reject(new Error(`run: ${status} ${Buffer.concat(chunks).toString()}`));
        },
        onError: reject,
      },
    );
  });
}

/** One client thread: `clients` concurrent requests, job i to node i mod nodes. */
async function clientThread(w: ClientWork): Promise<number> {
  const cpu0 = threadCpuMs();
  const t0 = performance.now();
  const pools = w.urls.map((u) => new Pool(u, { connections: w.clients }));
  const headers = ['authorization', `Bearer ${KEY}`, 'content-type', 'application/json'];
  const runPath = `/v2/${w.endpointId}/run`;
  let next = w.thread;
  try {
    await Promise.all(
      Array.from({ length: w.clients }, async () => {
        for (let i = next; i < w.n; i = next) {
          next += w.threads;
          await postRun(pools[i % pools.length], runPath, headers, `{"input":${w.input.replaceAll('$i', String(i))}}`);
        }
      }),
    );
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
  return (threadCpuMs() - cpu0) / (performance.now() - t0);
}

/** Runs one client thread; resolves with the share of its time it was busy. */
function startClientThread(work: ClientWork): Promise<number> {
  // From the sources (tsx), the thread registers tsx first, as the engine's own threads do (threads.ts).
  const worker = __filename.endsWith('.ts')
    ? new Worker(`require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register(); require(${JSON.stringify(__filename)});`, {
        eval: true,
        workerData: work,
      })
    : new Worker(__filename, { workerData: work });
  return new Promise((resolve, reject) => {
    worker.once('message', (busy: number) => resolve(busy));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`a client thread exited (${code}) before it was done`)));
  });
}

/**
 * Sends n `/run` jobs from CLIENTS_PER_NODE concurrent clients per node on CLIENT_THREADS threads; ms to accept them
 * all, and the share of that time each client thread was busy.
 */
async function submit(nodes: Node[], endpointId: string, input: string, n: number): Promise<{ ms: number; busy: number[] }> {
  const t0 = performance.now();
  const urls = nodes.map((n) => n.url);
  const clients = Math.ceil((CLIENTS_PER_NODE * nodes.length) / CLIENT_THREADS);
  const busy = await Promise.all(
    Array.from({ length: CLIENT_THREADS }, (_, thread) => startClientThread({ urls, endpointId, input, n, thread, threads: CLIENT_THREADS, clients })),
  );
  return { ms: performance.now() - t0, busy };
}

/** Waits until every job in the database has ended; returns when (performance.now()). */
async function allEnded(db: pg.Client, n: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query(`select count(*) filter (where status in ('IN_QUEUE', 'IN_PROGRESS'))::int as live, count(*)::int as n from jobs`);
    if (rows[0].live === 0 && rows[0].n >= n) return performance.now();
    if (Date.now() > deadline) throw new Error(`jobs still live after ${timeoutMs} ms: ${JSON.stringify(rows[0])}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Starts `count` nodes on a fresh database, deploys the no-op endpoint through the first with 3 workers per node (the
 * bound is the service's: workers (3 x count, 3 x count), which spread over the nodes), waits for them all.
 */
async function cluster(server: Awaited<ReturnType<typeof startPostgres>>, tmp: string, count: number, name: string, handler = 'noop') {
  const database = await server.createDatabase();
  const nodes: Node[] = [];
  for (let i = 0; i < count; i++) nodes.push(await startNode(path.join(tmp, `${name}-${i}`), database));
  const cp = new ControlPlaneClient({ baseUrl: nodes[0].url, apiKey: KEY });
  const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('bulk', handler, { workers: [3 * count, 3 * count], maxConcurrency: 8 })]);
  const eps = await deploy(cp, art, { app: 'bench' });
  const pools = nodes.map((n) => new Pool(n.url, { connections: 1 }));
  for (const pool of pools) {
    for (;;) {
      const r = await pool.request({ method: 'GET', path: `/v2/${eps.bulk.id}/health`, headers: { authorization: `Bearer ${KEY}` } });
      const h = (await r.body.json()) as { workers: { idle: number } };
      if (h.workers.idle >= 3 * count) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const db = new pg.Client({ connectionString: database, application_name: BENCH_APP });
  await db.connect();
  const { rows } = await db.query<{ n: number }>('select count(*)::int as n from worker_slots group by node_id order by n desc');
  if (count > 1) console.log(`           workers per node: ${rows.map((r) => r.n).join(', ')}`);
  const close = async () => {
    await db.end();
    await Promise.all(pools.map((p) => p.close()));
    for (const n of nodes) killGroup(n.child, 'SIGTERM');
  };
  /** Jobs ended so far (the rounds' jobs stay in the table for their retention). */
  return { nodes, pools, db, database, endpointId: eps.bulk.id, close, ended: 0 };
}

/** One round of N_THROUGHPUT jobs through the cluster: jobs/s to completion, printed with the CPU each kind spent. */
async function round(c: Awaited<ReturnType<typeof cluster>>, label: string): Promise<number> {
  const pids = c.nodes.map((n) => n.child.pid!);
  const waits = WAIT_SAMPLES ? await sampleWaits(c.database) : undefined;
  const cpu0 = cpuSnapshot(pids);
  const t0 = performance.now();
  const { ms: accept, busy } = await submit(c.nodes, c.endpointId, '{"i":$i}', N_THROUGHPUT);
  const done = (await allEnded(c.db, c.ended + N_THROUGHPUT, 300_000)) - t0;
  c.ended += N_THROUGHPUT;
  const cpu1 = cpuSnapshot(pids);
  const rate = N_THROUGHPUT / (done / 1000);
  const nodeUs = (((cpu1.kinds.nodes ?? 0) - (cpu0.kinds.nodes ?? 0)) * 1e6) / N_THROUGHPUT;
  console.log(
    `  ${label}: ${Math.round(N_THROUGHPUT / (accept / 1000))} jobs/s accepted, ${Math.round(rate)} jobs/s to completion (${done.toFixed(0)} ms), nodes ${nodeUs.toFixed(0)} CPU-µs per job`,
  );
  for (const line of cpuLines(cpu0, cpu1, done / 1000, busy)) console.log(`           ${line}`);
  if (waits) console.log(`           ${await waits()}`);
  return rate;
}

/** STRATO_BENCH_BUSY_LOOPS=N: one more round of the lone node beside N processes that spin (its neighbours' load, alone). */
const BUSY_LOOPS = Number(process.env.STRATO_BENCH_BUSY_LOOPS) || 0;

/** STRATO_BENCH_PG_WAITS=1: what the nodes' PostgreSQL connections were doing, sampled every few ms of each round. */
const WAIT_SAMPLES = process.env.STRATO_BENCH_PG_WAITS === '1';

/** Warm rounds of each cluster (STRATO_BENCH_WARM_ROUNDS): one round's figure moves with the machine that minute. */
const WARM_ROUNDS = Math.max(1, Number(process.env.STRATO_BENCH_WARM_ROUNDS) || 3);

/**
 * Throughput of one node and of three, each on a database of its own: a first round of each right after its nodes
 * started (every node's code still being compiled while it serves: a node of three meets that with a third of the
 * jobs), then warm rounds of the two in turn, as a service runs. The cluster that waits its turn is idle meanwhile.
 */
async function throughput(server: Awaited<ReturnType<typeof startPostgres>>, tmp: string): Promise<void> {
  const one = await cluster(server, tmp, 1, 'tp1');
  const three = await cluster(server, tmp, 3, 'tp3');
  try {
    const cold = [await round(one, '1 node , just started'), await round(three, '3 nodes, just started')];
    const warm: number[][] = [[], []];
    for (let i = 1; i <= WARM_ROUNDS; i++) {
      warm[0].push(await round(one, `1 node , warm ${i}     `));
      warm[1].push(await round(three, `3 nodes, warm ${i}     `));
    }
    if (BUSY_LOOPS > 0) {
      // A lone node on a machine as busy as three nodes keep it: what sharing the machine alone costs it per job.
      const loops = Array.from({ length: BUSY_LOOPS }, () => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }));
      try {
        await round(one, `1 node , warm, beside ${BUSY_LOOPS} busy loops`);
      } finally {
        for (const l of loops) l.kill('SIGKILL');
      }
    }
    const x = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
    console.log(`  ratio three/one, just started: ${x(cold[1], cold[0])}`);
    console.log(
      `  ratio three/one, warm: ${x(median(warm[1]), median(warm[0]))} (medians of ${WARM_ROUNDS} rounds: ${Math.round(median(warm[1]))} / ` +
        `${Math.round(median(warm[0]))} jobs/s; round by round ${warm[0].map((w, i) => x(warm[1][i], w)).join(', ')})   ` +
        `(target: at least 2.5x where the machine has the cores for it)`,
    );
  } finally {
    await one.close();
    await three.close();
  }
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-bench-multinode-'));
  // PostgreSQL's processes take the CPUs of the process that starts them; the nodes are started under taskset.
  if (PINNED) pinSelf(PINNED.nodes);
  const server = await startPostgres();
  if (PINNED) pinSelf(PINNED.clients);
  cleanUpOnExit(() => {
    for (const c of children) killGroup(c, 'SIGKILL');
    server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  try {
    console.log(
      `multinode bench: Node ${process.version}, ${os.cpus().length} cores, PostgreSQL on this machine, workers run ${PYTHON}, nodes run ${BUNDLE ? 'dist/cli.js' : 'the sources (tsx)'}`,
    );
    if (PINNED) console.log(`clients on CPUs ${PINNED.clients}; the nodes, their workers and PostgreSQL on CPUs ${PINNED.nodes}`);
    console.log(
      `\n/run throughput to completion, ${N_THROUGHPUT.toLocaleString('en')} no-op jobs, ${CLIENTS_PER_NODE} clients per node on ${CLIENT_THREADS} client thread${CLIENT_THREADS > 1 ? 's' : ''}, 3 workers x 8 per node:`,
    );
    await throughput(server, tmp);

    if (process.argv.includes('--throughput-only')) return;
    console.log(`\nSIGKILL one of three nodes while ${N.toLocaleString('en')} accepted jobs are queued or running:`);
    // Jobs that take 0.2 s (an async handler, 8 at a time per worker): the nodes hold a backlog when one dies.
    const c = await cluster(server, tmp, 3, 'fault', 'asleep');
    try {
      const t0 = performance.now();
      await submit(c.nodes, c.endpointId, '{"seconds":0.2}', N);
      const victim = c.nodes[1];
      killGroup(victim.child, 'SIGKILL'); // the node and its workers, as when its machine dies
      const killedAt = performance.now();
      const { rows: live } = await c.db.query(`select count(*)::int as n from jobs where status in ('IN_QUEUE', 'IN_PROGRESS')`);
      const end = await allEnded(c.db, N, 300_000);
      const { rows } = await c.db.query<{ status: string; n: number; again: number }>(
        `select status, count(*)::int as n, count(*) filter (where attempts > 1)::int as again from jobs group by status`,
      );
      const total = rows.reduce((s, r) => s + r.n, 0);
      const { rows: owners } = await c.db.query<{ n: number }>(`select count(distinct owner)::int as n from jobs`);
      const { rows: adopted } = await c.db.query<{ n: number }>(`select count(*)::int as n from jobs where owner <> right(id, 11)`);
      console.log(`  ${live[0].n} jobs not ended when the node died; every job ended ${((end - killedAt) / 1000).toFixed(1)} s later`);
      console.log(`  rows: ${total} for ${N} jobs (${rows.map((r) => `${r.status} ${r.n}`).join(', ')}), owners now: ${owners[0].n} nodes`);
      console.log(
        `  jobs adopted from the dead node: ${adopted[0].n}; started more than once (were running when it died): ${rows.reduce((s, r) => s + r.again, 0)}`,
      );
      console.log(`  total ${((end - t0) / 1000).toFixed(1)} s from the first /run (the lost bound is 3 s here; 10 s by default)`);
      if (total !== N || rows.some((r) => r.status !== 'COMPLETED')) throw new Error('a job was lost or did not complete');
    } finally {
      await c.close();
    }
  } finally {
    for (const c of children) killGroup(c, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    for (const c of children) killGroup(c, 'SIGKILL');
    server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (isMainThread) {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
} else {
  void clientThread(workerData as ClientWork).then((busy) => parentPort!.postMessage(busy));
}
