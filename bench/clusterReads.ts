// Worker logs read through one node of three (issue #11: every node's workers' lines, merged), each figure beside its
// baseline from the same run:
// - a tail of 100 lines (p50/p90 over 200 reads) through a node that ran no worker, against the same read of a
//   platform of one node (the embedded database: its own file, no call between nodes);
// - follow (`wait`): from a line's arrival on the node whose worker printed it to the answer of a follow read through
//   another node, against a follow read through that node itself.
// Three nodes over a PostgreSQL cluster of the bench's own, in this process (test/helpers), real Python workers.
import { performance } from 'node:perf_hooks';
import type { WorkerLogPage } from '../engine/src/protocol/logs';
import { buildTestArtifact } from '../test/helpers/artifact';
import { call, deploy, type TestPlatform } from '../test/helpers/platform';
import { withCluster } from './clusterBed';
import { report } from './report';

const TALK_PY = `
def say(text="hi", n=1):
    for i in range(n):
        print("said", text, i)
    return {"n": n}
`;
const READS = 200;
const FOLLOWS = 20;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function logs(node: TestPlatform, id: string, q: string): Promise<WorkerLogPage> {
  const r = await call('GET', `${node.url}/v2/${id}/logs${q}`);
  if (r.status !== 200) throw new Error(r.text);
  return r.json as WorkerLogPage;
}

async function say(node: TestPlatform, id: string, text: string, n: number): Promise<void> {
  const r = await call('POST', `${node.url}/v2/${id}/runsync`, { body: { input: { text, n } } });
  if (!/"COMPLETED"/.test(r.text)) throw new Error(r.text);
}

/** p50 and p90 of `READS` tail reads. */
async function tails(node: TestPlatform, id: string): Promise<[number, number]> {
  const t: number[] = [];
  for (let i = 0; i < READS; i++) {
    const t0 = performance.now();
    const p = await logs(node, id, '?tail=100');
    t.push(performance.now() - t0);
    if (p.lines.length !== 100) throw new Error(`a tail of ${p.lines.length} lines`);
  }
  return [pct(t, 50), pct(t, 90)];
}

/** Line arrival (its time, on the printing node) to the follow answer through `reader`: p50 and p90. */
async function follows(reader: TestPlatform, printer: TestPlatform, id: string): Promise<[number, number]> {
  const t: number[] = [];
  for (let i = 0; i < FOLLOWS; i++) {
    const { cursor } = await logs(reader, id, '?tail=0');
    const waiting = logs(reader, id, `?since=${encodeURIComponent(cursor)}&wait=10000`).then((p) => ({ p, at: Date.now() }));
    await new Promise((r) => setTimeout(r, 50));
    await say(printer, id, `f${i}`, 1);
    const { p, at } = await waiting;
    const line = p.lines.find((l) => l.text === `said f${i} 0`) ?? p.lines[0];
    if (!line) throw new Error('the follow read answered no line');
    t.push(at - Date.parse(line.time));
  }
  return [pct(t, 50), pct(t, 90)];
}

async function main(): Promise<void> {
  await withCluster(async ({ nodes, single }) => {
    const [a, b, c] = nodes;
    const art = await buildTestArtifact({ 'talk.py': TALK_PY }, [{ name: 'talk', file: 'talk.py', fn: 'say', workers: [0, 1] }]);
    const id = (await deploy(a.cp, art, { app: 'bench' })).talk.id;
    const one = (await deploy(single.cp, art, { app: 'bench' })).talk.id;
    // 2,000 lines: half from A's worker, half from B's; C runs none. The single node's worker prints as many.
    await say(a, id, 'a', 1000);
    await say(b, id, 'b', 1000);
    await say(single, one, 's', 2000);

    const [c50, c90] = await tails(c, id);
    const [s50, s90] = await tails(single, one);
    console.log(`  tail of 100 lines, p50/p90: through C of three nodes ${ms(c50)} / ${ms(c90)}; one node ${ms(s50)} / ${ms(s90)}`);
    const [o50, o90] = await follows(c, a, id);
    const [h50, h90] = await follows(a, a, id);
    console.log(`  follow, line to answer, p50/p90: through another node ${ms(o50)} / ${ms(o90)}; through the printing node ${ms(h50)} / ${ms(h90)}`);
    console.log(`  (${READS} tail reads and ${FOLLOWS} follows each; nodes, workers and client share this process and the machine's cores)`);
    report('clusterReads', [
      { what: 'logs tail=100 p50, via 1 of 3 nodes', value: ms(c50), baseline: `one node: ${ms(s50)}`, ratio: `${(c50 / s50).toFixed(2)}x` },
      { what: 'logs tail=100 p90, via 1 of 3 nodes', value: ms(c90), baseline: `one node: ${ms(s90)}`, ratio: `${(c90 / s90).toFixed(2)}x` },
      { what: 'follow wake p50, line on another node', value: ms(o50), baseline: `same node: ${ms(h50)}`, ratio: `${(o50 / Math.max(h50, 0.1)).toFixed(2)}x` },
    ]);
  });
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
