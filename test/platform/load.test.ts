// A bounded load test on loopback: 10,000 `/run` jobs against real Python workers; every job is accepted,
// ends COMPLETED with its own output, and ran exactly once (each execution appends its tag to a file).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, TEST_KEY, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';

const N = 10_000;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-load-'));
let tp: TestPlatform;
let pool: Pool;

before(async () => {
  tp = await startTestPlatform();
  pool = new Pool(tp.url, { connections: 32, pipelining: 1 });
});
after(async () => {
  await pool?.close();
  await tp?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test(`${N} /run jobs: none lost, none duplicated`, async () => {
  const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('rec', 'record', { workers: [3, 3], maxConcurrency: 8 })]);
  const eps = await deploy(tp.cp, art);
  const ep = eps.rec;
  const marker = path.join(tmp, 'runs.log');
  const headers = { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' };
  const ids = new Array<string>(N);
  let next = 0;
  const started = Date.now();
  const submitter = async () => {
    for (let i = next++; i < N; i = next++) {
      const r = await pool.request({ method: 'POST', path: `/v2/${ep.id}/run`, headers, body: JSON.stringify({ input: { marker, tag: `t${i}` } }) });
      const body = (await r.body.json()) as { id: string; status: string };
      assert.equal(r.statusCode, 200);
      assert.equal(body.status, 'IN_QUEUE');
      ids[i] = body.id;
    }
  };
  await Promise.all(Array.from({ length: 32 }, submitter));
  const accepted = Date.now() - started;
  await waitUntil(
    'every job to complete',
    async () => {
      const h = (await call('GET', `${ep.url}/health`)).json as { jobs: { completed: number; inQueue: number; inProgress: number; failed: number } };
      assert.equal(h.jobs.failed, 0);
      return h.jobs.completed === N && h.jobs.inQueue === 0 && h.jobs.inProgress === 0;
    },
    180_000,
    250,
  );
  const total = Date.now() - started;
  process.stdout.write(`# ${N} jobs accepted in ${accepted} ms, all completed in ${total} ms (${Math.round(N / (total / 1000))} jobs/s)\n`);
  assert.equal(new Set(ids).size, N, 'job ids are unique');
  const runs = fs.readFileSync(marker, 'utf8').trim().split('\n');
  assert.equal(runs.length, N, 'every job ran exactly once');
  assert.equal(new Set(runs).size, N);
  // Spot-check outputs through /status (every 50th job).
  for (let i = 0; i < N; i += 50) {
    const r = await pool.request({ method: 'GET', path: `/v2/${ep.id}/status/${ids[i]}`, headers });
    const j = (await r.body.json()) as { status: string; output: { tag: string } };
    assert.equal(j.status, 'COMPLETED');
    assert.equal(j.output.tag, `t${i}`);
  }
});
