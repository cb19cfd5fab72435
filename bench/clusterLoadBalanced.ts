// Load-balanced requests on three nodes (issue 11), each figure beside its baseline from the same run: the round trip
// of a small GET through a node without a worker (forwarded to the node holding the endpoint's one worker), against
// the same request sent to that node itself, and against one node on the embedded database. Requests alternate
// between the ways so that the machine's drift touches each alike. Three nodes over a PostgreSQL cluster of the
// bench's own, in this process (test/helpers), real Python workers.
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { buildTestArtifact } from '../test/helpers/artifact';
import { deploy, TEST_KEY } from '../test/helpers/platform';
import { LB_PY } from '../test/helpers/testWorkers';
import { withCluster } from './clusterBed';
import { report } from './report';

const ROUNDS = 1000;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (x: number) => `${x.toFixed(2)} ms`;

/** One kept-alive connection per way, as a client of the service would hold. */
function way(base: string, route: string): () => Promise<number> {
  const u = new URL(`${base}${route}`);
  const pool = new Pool(u.origin, { connections: 1 });
  return async () => {
    const t0 = performance.now();
    const r = await pool.request({ method: 'GET', path: u.pathname, headers: { authorization: `Bearer ${TEST_KEY}` } });
    const text = await r.body.text();
    if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${text}`);
    return performance.now() - t0;
  };
}

async function main(): Promise<void> {
  await withCluster(async ({ nodes, single }) => {
    const art = await buildTestArtifact({ 'lb_worker.py': LB_PY }, [{ name: 'api', file: 'lb_worker.py', fn: 'process', routes: { 'GET /health': 'health' } }]);
    const path = (url: string) => new URL(url).pathname;
    const id = path((await deploy(nodes[0].cp, art, { app: 'bench' })).api.url);
    const one = path((await deploy(single.cp, art, { app: 'bench' })).api.url);
    const holder = way(nodes[0].url, `${id}/health`);
    const other = way(nodes[1].url, `${id}/health`);
    const alone = way(single.url, `${one}/health`);
    await holder(); // the worker starts on A, which holds the slot from then on
    for (let i = 0; i < 50; i++) for (const f of [holder, other, alone]) await f();
    const t = { holder: [] as number[], other: [] as number[], alone: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      t.holder.push(await holder());
      t.other.push(await other());
      t.alone.push(await alone());
    }
    const line = (xs: number[]) => `${ms(pct(xs, 50))} / ${ms(pct(xs, 90))}`;
    console.log(`  GET round trip p50/p90 (${ROUNDS} each, alternating; nodes, workers and client share this process and the machine's cores):`);
    console.log(`    through a node without the worker (forwarded): ${line(t.other)}`);
    console.log(`    to the node holding the worker:               ${line(t.holder)}`);
    console.log(`    one node, embedded database:                  ${line(t.alone)}`);
    const [o50, h50, a50] = [pct(t.other, 50), pct(t.holder, 50), pct(t.alone, 50)];
    report('clusterLoadBalanced', [
      { what: 'lb GET p50, forwarded to another node', value: ms(o50), baseline: `to the holder: ${ms(h50)}`, ratio: `${(o50 / h50).toFixed(2)}x` },
      { what: 'lb GET p50, holder of three nodes', value: ms(h50), baseline: `one node: ${ms(a50)}`, ratio: `${(h50 / a50).toFixed(2)}x` },
    ]);
  });
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
