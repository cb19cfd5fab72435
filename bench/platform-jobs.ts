// The embedded platform's figures, each beside a floor measured in the same run:
// - warm `/runsync` round trip of a no-op handler (p50, p90, p99) vs a bare Node HTTP echo server called by the same
//   client (targets, issue 11: p50 within 2x, p90 within 2.5x), and vs the least any platform with a Python worker
//   process can do: a Node HTTP server that relays each body in one frame to a bare Python loop and answers its reply;
// - `/run` throughput in jobs per second to completion: the first 5,000 jobs after start (V8 still compiling), then
//   10,000 more (target: 2,000 jobs/s), beside what the relay answers under the same load (the machine's speed that
//   day), each with the CPU every process and the platform's threads (main, database, V8's helpers) spend per job: on
//   2 cores their sum bounds the rate;
// - cold start: a request to an endpoint with no worker, spawn to first job done (target: under 150 ms).
// The platform and the echo server run in their own processes; this process is the client.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { ControlPlaneClient, type Endpoint } from '../engine/src/api/controlPlane';
import { buildProject } from '../engine/src/build';
import { residentBytes } from '../test/helpers/platform';
import { commandLine, descendants, processStat } from '../test/helpers/procfs';
import { DATABASE_THREAD_NAME } from '../engine/src/platform/threads';
import { BUNDLE, killGroup, cleanUpOnExit, stratoArgs } from './strato';
import { ECHO, RELAY, RELAY_PY } from './floors';

const REPO = path.resolve(__dirname, '..');
const KEY = 'bench-key';
const PYTHON = process.env.STRATO_PYTHON || 'python3';
const children: ChildProcess[] = [];
/** Calls to each server before the round-trip rounds are measured. */
const WARM_CALLS = 5_000;
/** Shared with the tests: the database template is initialised once per machine. */
const TEMPLATE_DIR = path.join(os.tmpdir(), 'strato-test-pglite-template');

const WORKER = `from strato import CpuInstanceType, Endpoint


@Endpoint(name="warm", cpu=CpuInstanceType.CPU3C_1_2, workers=(1, 1))
def warm(x: int = 0) -> dict:
    return {"ok": True}


@Endpoint(name="bulk", cpu=CpuInstanceType.CPU3C_1_2, workers=(3, 3), max_concurrency=8)
def bulk(i: int = 0) -> dict:
    return {"ok": True}


@Endpoint(name="abulk", cpu=CpuInstanceType.CPU3C_1_2, workers=(0, 3), max_concurrency=8)
async def abulk(i: int = 0) -> dict:
    return {"ok": True}


@Endpoint(name="cold", cpu=CpuInstanceType.CPU3C_1_2, workers=(0, 1), idle_timeout=1)
def cold(x: int = 0) -> dict:
    return {"ok": True}
`;

/** Builds the bench project with the real \`strato build\` and deploys its endpoints. */
async function deployBench(cp: ControlPlaneClient, dir: string): Promise<Record<string, Endpoint>> {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'worker.py'), WORKER);
  fs.writeFileSync(path.join(dir, 'pyproject.toml'), '[project]\nname = "bench"\n');
  const built = await buildProject(dir);
  const app = await cp.createApp('bench');
  const env = await cp.createEnvironment(app.id, 'production');
  const build = await cp.uploadBuild(app.id, built.artifactPath, built.manifest);
  await cp.deployBuild(env.id, build.id);
  const out: Record<string, Endpoint> = {};
  for (const name of Object.keys(built.manifest.resources)) out[name] = await cp.saveEndpoint({ environmentId: env.id, name });
  return out;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const ms = (x: number) => `${x.toFixed(3)} ms`;

function start(cmd: string, args: string[], ready: RegExp, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.push(child);
    let out = '';
    const timer = setTimeout(() => reject(new Error(`not ready: ${out}`)), 60_000);
    const on = (d: Buffer) => {
      out += d;
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

/**
 * CPU spent per request by each process on a round trip's path, summed over the rounds measured: on a machine whose
 * cores are fewer than the processes a round trip wakes, these run one after another and their sum is the latency.
 */
class CpuPerRequest {
  private readonly spent = new Map<string, number>();
  private requests = 0;
  constructor(private readonly parts: Record<string, () => number>) {}
  /** Runs `run`, which makes `calls` requests, and adds what each process spent meanwhile. */
  async measure<T>(calls: number, run: () => Promise<T>): Promise<T> {
    const before = Object.entries(this.parts).map(([k, f]) => [k, f()] as const);
    const client0 = process.cpuUsage();
    const out = await run();
    const client = process.cpuUsage(client0);
    for (const [k, v] of before) this.spent.set(k, (this.spent.get(k) ?? 0) + this.parts[k]() - v);
    this.spent.set('client (this bench, undici)', (this.spent.get('client (this bench, undici)') ?? 0) + (client.user + client.system) / 1000);
    this.requests += calls;
    return out;
  }
  line(): string {
    return [...this.spent].map(([k, v]) => `${k} ${((v / this.requests) * 1000).toFixed(0)} µs`).join(', ');
  }
}

async function roundTrips(pool: Pool, p: string, n: number, warm: number): Promise<number[]> {
  const body = JSON.stringify({ input: { x: 1 } });
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  const times: number[] = [];
  for (let i = 0; i < warm + n; i++) {
    const t = performance.now();
    const r = await pool.request({ method: 'POST', path: p, headers, body });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`${p}: ${r.statusCode} ${text}`);
    if (i >= warm) times.push(performance.now() - t);
  }
  return times;
}

async function health(pool: Pool, id: string): Promise<{ jobs: Record<string, number>; workers: Record<string, number> }> {
  const r = await pool.request({ method: 'GET', path: `/v2/${id}/health`, headers: { authorization: KEY } });
  return (await r.body.json()) as { jobs: Record<string, number>; workers: Record<string, number> };
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-bench-platform-'));
  cleanUpOnExit(() => {
    for (const c of children) killGroup(c, 'SIGKILL');
    fs.rmSync(tmp, { recursive: true, force: true });
  });
  try {
    console.log(
      `platform bench: Node ${process.version}, ${os.cpus().length} cores, workers run ${PYTHON}, the platform runs ${BUNDLE ? 'dist/cli.js' : 'the sources (tsx)'}`,
    );
    const echoUrl = await start(process.execPath, ['-e', ECHO], /listening on (\S+)/);
    const relayUrl = await start(process.execPath, ['-e', RELAY], /listening on (\S+)/, { ...process.env, RELAY_PYTHON: PYTHON, RELAY_PY });
    const url = await start(
      process.execPath,
      stratoArgs('platform', 'serve', '--data-dir', path.join(tmp, 'data'), '--port', '0', '--api-key', KEY, '--python', PYTHON),
      /listening on (\S+)/,
      { ...process.env, STRATO_PGLITE_TEMPLATE: TEMPLATE_DIR, STRATO_DATA_DIR: path.join(tmp, 'user') },
    );
    const platformPid = children[children.length - 1].pid!;
    const cp = new ControlPlaneClient({ baseUrl: url, apiKey: KEY });
    const eps = await deployBench(cp, path.join(tmp, 'project'));

    // 1. Warm round trip vs the echo floor (one keep-alive connection, sequential calls).
    const echoPool = new Pool(echoUrl, { connections: 1 });
    const relayPool = new Pool(relayUrl, { connections: 1 });
    const pPool = new Pool(url, { connections: 1 });
    await roundTrips(pPool, `/v2/${eps.warm.id}/runsync`, 1, 0); // starts nothing: min=1 is up; wait for it
    // Interleaved rounds, so that both see the same machine (other processes, CPU frequency).
    const floor: number[] = [];
    const relay: number[] = [];
    const rt: number[] = [];
    // Warm means the JIT too: after 1,000 calls V8 was still optimizing the platform's request path (its other threads
    // spent 87-98 µs a call in the rounds below, mostly compiling; 24-38 µs after 8,000 calls). The echo server is warm
    // sooner, so every server gets the same calls first.
    for (const [pool, p] of [
      [echoPool, '/'],
      [relayPool, '/'],
      [pPool, `/v2/${eps.warm.id}/runsync`],
    ] as const)
      await roundTrips(pool, p, 0, WARM_CALLS);
    const [echoPid, relayPid] = [children[0].pid!, children[1].pid!];
    const [relayPython] = descendants(relayPid);
    const warmWorker = descendants(platformPid).filter((p) => /handler_warm/.test(commandLine(p)));
    const cpuMs = (pid: number, tid?: number) => processStat(pid, tid)?.cpuMs ?? 0;
    // The embedded database's thread names itself (threads.ts); the platform's other threads are V8's helpers (the
    // garbage collector, the optimizing compiler) and libuv's pool.
    const threads = fs.existsSync(`/proc/${platformPid}/task`) ? fs.readdirSync(`/proc/${platformPid}/task`).map(Number) : [];
    const dbThread = threads.find((t) => processStat(platformPid, t)?.comm === DATABASE_THREAD_NAME) ?? 0;
    const platformParts = {
      'platform main thread': () => cpuMs(platformPid, platformPid),
      'its database thread': () => cpuMs(platformPid, dbThread),
      'its other threads (V8: GC, compiler)': () => cpuMs(platformPid) - cpuMs(platformPid, platformPid) - cpuMs(platformPid, dbThread),
    };
    const echoCpu = new CpuPerRequest({ 'echo server': () => cpuMs(echoPid) });
    const relayCpu = new CpuPerRequest({ relay: () => cpuMs(relayPid), 'its Python': () => cpuMs(relayPython) });
    const platformCpu = new CpuPerRequest({
      ...platformParts,
      'Python worker': () => warmWorker.reduce((sum, p) => sum + cpuMs(p), 0),
    });
    for (let round = 0; round < 10; round++) {
      floor.push(...(await echoCpu.measure(550, () => roundTrips(echoPool, '/', 500, 50))));
      relay.push(...(await relayCpu.measure(550, () => roundTrips(relayPool, '/', 500, 50))));
      rt.push(...(await platformCpu.measure(550, () => roundTrips(pPool, `/v2/${eps.warm.id}/runsync`, 500, 50))));
    }
    const [f50, f90, f99] = [50, 90, 99].map((p) => pct(floor, p));
    const [r50, r90, r99] = [50, 90, 99].map((p) => pct(rt, p));
    const [l50, l90, l99] = [50, 90, 99].map((p) => pct(relay, p));
    console.log(`\nwarm /runsync round trip (no-op handler, over the worker's job channel), 5,000 calls:`);
    console.log(`  floor (Node echo server)  p50 ${ms(f50)}  p90 ${ms(f90)}  p99 ${ms(f99)}`);
    console.log(`  relay to a bare Python    p50 ${ms(l50)}  p90 ${ms(l90)}  p99 ${ms(l99)}`);
    console.log(`  /runsync                  p50 ${ms(r50)}  p90 ${ms(r90)}  p99 ${ms(r99)}`);
    const x = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
    console.log(`  /runsync / echo           p50 ${x(r50, f50)}  p90 ${x(r90, f90)}  p99 ${x(r99, f99)}   (targets: p50 within 2x, p90 within 2.5x)`);
    console.log(`  relay / echo              p50 ${x(l50, f50)}  p90 ${x(l90, f90)}  p99 ${x(l99, f99)}   (the design's floor)`);
    console.log(`  /runsync / relay          p50 ${x(r50, l50)}  p90 ${x(r90, l90)}  p99 ${x(r99, l99)}   (what the platform adds)`);
    if (fs.existsSync('/proc')) {
      // What bounds the ratio where cores are few: a round trip's processes mostly run one after another.
      console.log(`  CPU per request (user + system, over the 5,500 calls of those rounds):`);
      console.log(`    echo:     ${echoCpu.line()}`);
      console.log(`    relay:    ${relayCpu.line()}`);
      console.log(`    /runsync: ${platformCpu.line()}`);
    }

    // 2. /run throughput to completion.
    const N = 10_000;
    const WARM_JOBS = 5_000;
    const pool = new Pool(url, { connections: 32 });
    await health(pool, eps.bulk.id);
    while ((await health(pool, eps.bulk.id)).workers.idle < 3) await new Promise((r) => setTimeout(r, 100));
    const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
    const workersOf = (name: string) => descendants(platformPid).filter((p) => new RegExp(`handler_${name}\\b`).test(commandLine(p)));
    const bulkWorkers = workersOf('bulk');
    const completed = new Map<string, number>();
    /** `n` jobs through `/run` from 32 clients, then until all completed: ms to accept them all, ms to completion. */
    const runJobs = async (n: number, cpu: CpuPerRequest, endpoint = eps.bulk) => {
      let next = 0;
      const t0 = performance.now();
      let accepted = 0;
      const done = completed.get(endpoint.id) ?? 0;
      await cpu.measure(n, async () => {
        await Promise.all(
          Array.from({ length: 32 }, async () => {
            for (let i = next++; i < n; i = next++) {
              const r = await pool.request({ method: 'POST', path: `/v2/${endpoint.id}/run`, headers, body: `{"input":{"i":${i}}}` });
              await r.body.text();
              if (r.statusCode !== 200) throw new Error(`run: ${r.statusCode}`);
            }
          }),
        );
        accepted = performance.now() - t0;
        while ((await health(pool, endpoint.id)).jobs.completed < done + n) await new Promise((r) => setTimeout(r, 20));
      });
      completed.set(endpoint.id, done + n);
      return { accepted, total: performance.now() - t0 };
    };
    const bulkCpu = (workers = bulkWorkers) =>
      new CpuPerRequest({
        ...platformParts,
        [`its ${workers.length} Python processes (workers, template)`]: () => workers.reduce((sum, p) => sum + cpuMs(p), 0),
      });
    // The first jobs after start also pay for compiling: V8 optimises the /run path, and tiers up the embedded
    // database's WebAssembly on its helper threads. Measured apart, then the platform as it runs for hours.
    const firstCpu = bulkCpu();
    const first = await runJobs(WARM_JOBS, firstCpu);
    const rss0 = residentBytes(platformPid);
    const steadyCpu = bulkCpu();
    const { accepted, total } = await runJobs(N, steadyCpu);
    const perSecond = (n: number, ms: number) => Math.round(n / (ms / 1000));
    console.log(`\n/run throughput, 32 concurrent clients, 3 workers x max_concurrency 8, no-op jobs:`);
    console.log(`  the first ${WARM_JOBS.toLocaleString('en')} after start: ${perSecond(WARM_JOBS, first.total)} jobs/s to completion`);
    if (fs.existsSync('/proc')) console.log(`    CPU per job (user + system): ${firstCpu.line()}`);
    console.log(
      `  the next ${N.toLocaleString('en')}: accepted (durable) in ${accepted.toFixed(0)} ms, ${perSecond(N, accepted)} jobs/s; ` +
        `completed in ${total.toFixed(0)} ms: ${perSecond(N, total)} jobs/s to completion   (target: 2,000 jobs/s)`,
    );
    // On 2 cores the sum bounds the rate: 2 cores' worth of time over this sum is the most jobs a second can reach.
    if (fs.existsSync('/proc')) console.log(`    CPU per job (user + system): ${steadyCpu.line()}`);
    // The same load on an `async def` handler: its jobs run as tasks on the worker's event loop, which answers them.
    const asyncWarm = await runJobs(WARM_JOBS, bulkCpu([]), eps.abulk); // starts its 3 workers
    const asyncCpu = bulkCpu(workersOf('abulk'));
    const asyncRun = await runJobs(N, asyncCpu, eps.abulk);
    console.log(
      `  the same with an async def handler: ${perSecond(N, asyncRun.total)} jobs/s to completion (${(N / asyncRun.total / (N / total)).toFixed(2)}x the sync one; ` +
        `the first ${WARM_JOBS.toLocaleString('en')}, its workers starting: ${perSecond(WARM_JOBS, asyncWarm.total)} jobs/s)`,
    );
    if (fs.existsSync('/proc')) console.log(`    CPU per job (user + system): ${asyncCpu.line()}`);
    // The same load on the design's floor (the relay to one bare Python loop), for the machine's speed today: jobs/s
    // figures of different days compare through this ratio, not by themselves. It is warmed up the same way.
    const relayLoad = new Pool(relayUrl, { connections: 32 });
    const relayJobs = (n: number) => {
      let next = 0;
      return Promise.all(
        Array.from({ length: 32 }, async () => {
          for (let i = next++; i < n; i = next++) await (await relayLoad.request({ method: 'POST', path: '/', body: `{"input":{"i":${i}}}` })).body.text();
        }),
      );
    };
    await relayJobs(WARM_JOBS);
    const r0 = performance.now();
    const relayLoadCpu = new CpuPerRequest({ relay: () => cpuMs(relayPid), 'its Python': () => cpuMs(relayPython) });
    await relayLoadCpu.measure(N, () => relayJobs(N));
    const relayRate = N / ((performance.now() - r0) / 1000);
    await relayLoad.close();
    console.log(
      `  the same ${N.toLocaleString('en')} requests answered by the relay to a bare Python loop: ${Math.round(relayRate)} jobs/s (/run: ${(N / (total / 1000) / relayRate).toFixed(2)}x that)`,
    );
    if (fs.existsSync('/proc')) console.log(`    CPU per request: ${relayLoadCpu.line()}`);
    // Ended jobs leave memory once durable (a bounded cache of them stays): what the platform process holds after them.
    const rss1 = residentBytes(platformPid);
    const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MB`;
    console.log(`  platform resident memory: ${mb(rss0)} -> ${mb(rss1)} with ${N.toLocaleString('en')} more ended jobs retained (in the store)`);

    // 3. Cold start: no worker up; one request; spawn -> first job done, as the client sees it.
    const cold: number[] = [];
    for (let i = 0; i < 5; i++) {
      while ((await health(pool, eps.cold.id)).workers.idle + (await health(pool, eps.cold.id)).workers.running > 0)
        await new Promise((r) => setTimeout(r, 100));
      const t = performance.now();
      await roundTrips(pPool, `/v2/${eps.cold.id}/runsync`, 1, 0);
      cold.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 1200));
    }
    console.log(`\ncold start (request with no worker up -> output), 5 runs, ${PYTHON}:`);
    console.log(`  p50 ${ms(pct(cold, 50))}  max ${ms(Math.max(...cold))}   (target: under 150 ms; bare '${PYTHON} -c pass' below)`);
    const py: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await new Promise((r) => spawn(PYTHON, ['-c', 'pass']).on('exit', r));
      py.push(performance.now() - t);
    }
    console.log(`  interpreter start alone p50 ${ms(pct(py, 50))}`);
    await Promise.all([echoPool.close(), relayPool.close(), pPool.close(), pool.close()]);
  } finally {
    for (const c of children) killGroup(c, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    for (const c of children) killGroup(c, 'SIGKILL');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
