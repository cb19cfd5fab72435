// Issue #16's hostile-input figures against a platform in its own process (`strato platform serve` from the sources):
// - the bounded fuzz, 10,000 requests across every route (the generator of test/hardening/fuzz.test.ts, shared in
//   test/helpers/fuzz.ts): how many got a 5xx, how many got no answer (target: 0 and 0);
// - 100 request bodies that never finish: how many the platform closed, and when (it gives up a body stalled 30 s);
// - the platform's resident memory before (the baseline), right after the fuzz, and once the unfinished requests are
//   gone (target: back within 50 MB of the baseline).
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ControlPlaneClient } from '../engine/src/api/controlPlane';
import { deployFuzzTargets, formatStatuses, runFuzz } from '../test/helpers/fuzz';
import { call, residentBytes as rss, spawnPlatformProcess, TEST_KEY, waitUntil } from '../test/helpers/platform';

const REQUESTS = 10_000;
const UNFINISHED = 100;
const MB = 1024 * 1024;

const mb = (b: number) => `${(b / MB).toFixed(0)} MB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens requests whose chunked body starts and never ends; resolves with when each was closed by the server. */
function unfinishedBodies(base: URL, p: string, n: number, giveUpMs: number): Promise<Array<number | null>> {
  const started = Date.now();
  return Promise.all(
    Array.from({ length: n }, () => {
      return new Promise<number | null>((resolve) => {
        const piece = '{"input":{"x":1';
        const s = net.connect(Number(base.port), base.hostname, () =>
          s.write(
            `POST ${p} HTTP/1.1\r\nHost: ${base.host}\r\nAuthorization: Bearer ${TEST_KEY}\r\nContent-Type: application/json\r\n` +
              `Transfer-Encoding: chunked\r\n\r\n${piece.length.toString(16)}\r\n${piece}\r\n`,
          ),
        );
        const t = setTimeout(() => {
          s.destroy();
          resolve(null);
        }, giveUpMs);
        s.on('close', () => {
          clearTimeout(t);
          resolve(Date.now() - started);
        });
        s.on('error', () => undefined);
        s.resume();
      });
    }),
  );
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-bench-fuzz-'));
  const platform = await spawnPlatformProcess(path.join(tmp, 'data'));
  try {
    const pid = platform.child.pid!;
    const cp = new ControlPlaneClient({ baseUrl: platform.url, apiKey: TEST_KEY });
    const targets = await deployFuzzTargets(cp, TEST_KEY);
    const health = async () => (await call('GET', `${platform.url}/v2/${targets.queueId}/health`)).json as { workers: { idle: number } };
    await waitUntil('the echo worker to be up', async () => (await health()).workers.idle === 1, 60_000);
    await sleep(2000);
    const before = rss(pid);
    console.log(`fuzz bench: Node ${process.version}, ${os.cpus().length} cores; platform process ${pid}, resident ${mb(before)} before (the baseline)`);

    const f = await runFuzz(platform.url, targets, { requests: REQUESTS, concurrency: 16, hangMs: 15_000 });
    const afterFuzz = rss(pid);
    console.log(
      `\n${REQUESTS.toLocaleString('en')} fuzzed requests in ${(f.ms / 1000).toFixed(1)} s (${Math.round(REQUESTS / (f.ms / 1000))}/s), 16 at a time:`,
    );
    console.log(`  statuses   ${formatStatuses(f.statuses)}`);
    console.log(`  5xx        ${f.fiveXX}   (target: 0)`);
    console.log(`  hangs      ${f.hangs}   (no answer within 15 s; target: 0)`);
    for (const b of f.bad.slice(0, 10)) console.log(`    ${b}`);
    console.log(`  closed before an answer (-1; a refused body still arriving is not read): ${JSON.stringify(Object.fromEntries(f.socketErrors))}`);
    console.log(`  resident   ${mb(before)} -> ${mb(afterFuzz)} right after`);

    const base = new URL(platform.url);
    const closed = await unfinishedBodies(base, `/v2/${targets.queueId}/run`, UNFINISHED, 60_000);
    const gone = closed.filter((c): c is number => c !== null).sort((a, b) => a - b);
    console.log(`\n${UNFINISHED} /run bodies that never finish (chunked, stalled after their first chunk):`);
    console.log(
      `  closed by the platform: ${gone.length} of ${UNFINISHED}` +
        (gone.length ? ` (first after ${(gone[0] / 1000).toFixed(1)} s, last after ${(gone[gone.length - 1] / 1000).toFixed(1)} s)` : '') +
        '   (target: all)',
    );

    await sleep(5000);
    const after = rss(pid);
    const grew = after - before;
    console.log(`\nplatform resident memory: ${mb(before)} before, ${mb(afterFuzz)} after the fuzz, ${mb(after)} at the end (5 s later)`);
    console.log(`  ${grew >= 0 ? '+' : ''}${mb(grew)} against the baseline   (target: within 50 MB)`);
    const r = await call('POST', `${platform.url}/v2/${targets.queueId}/runsync`, { body: { input: { after: 'fuzz' } } });
    console.log(`  a /runsync afterwards: ${r.status} ${r.text.slice(0, 120)}`);
  } finally {
    platform.killGroup();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
