// Issue #16, defect 1: text the database refuses (a NUL byte, a lone surrogate) in what a handler produces never
// stops the job writer. Before the fix one such job made every /run answer 500 until it expired, restarts included.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Job } from '../../engine/src/platform/jobs/job';
import { JobWriter } from '../../engine/src/platform/store/jobWriter';
import { openPglite } from '../../engine/src/platform/store/pglite';
import { SqlStore } from '../../engine/src/platform/store/sqlStore';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, TEMPLATE_DIR, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec } from '../helpers/testWorkers';

const BAD_PY = `
def nul(**_):
    raise ValueError("bad\\x00byte")

def surrogate(**_):
    raise ValueError("lone \\udc80 surrogate")

def nul_output(**_):
    return {"text": "a\\x00b"}

def ok(**kw):
    return {"ok": True, **kw}
`;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-badtext-'));
let tp: TestPlatform;
let url: Record<string, string>;
const dataDir = path.join(tmp, 'data');

before(async () => {
  tp = await startTestPlatform({ dataDir });
  const art = await buildTestArtifact({ 'worker.py': BAD_PY }, [
    queueSpec('nul', 'nul'),
    queueSpec('surrogate', 'surrogate'),
    queueSpec('nuloutput', 'nul_output'),
    queueSpec('ok', 'ok'),
  ]);
  url = Object.fromEntries(Object.entries(await deploy(tp.cp, art)).map(([k, v]) => [k, v.url]));
});
after(async () => {
  await tp?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function ended(u: string, id: string): Promise<Record<string, unknown>> {
  return waitUntil(
    `job ${id} to end`,
    async () => {
      const j = (await call('GET', `${u}/status/${id}`)).json as Record<string, unknown>;
      return j && !['IN_QUEUE', 'IN_PROGRESS'].includes(String(j.status)) ? j : null;
    },
    20_000,
  );
}

test('a job whose error holds a NUL byte or a lone surrogate is stored, and /run keeps working, across a restart', async () => {
  const ids: Record<string, string> = {};
  for (const name of ['nul', 'surrogate', 'nuloutput']) {
    const r = await call('POST', `${url[name]}/run`, { body: { input: {} } });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    ids[name] = (r.json as { id: string }).id;
  }
  const nul = await ended(url.nul, ids.nul);
  assert.equal(nul.status, 'FAILED');
  assert.match(String(nul.error), /bad\ufffdbyte/);
  assert.match(String((await ended(url.surrogate, ids.surrogate)).error), /lone \ufffd surrogate/);
  assert.equal((await ended(url.nuloutput, ids.nuloutput)).status, 'COMPLETED');
  // Every later /run is accepted (each answers only once its row is committed).
  const okIds: string[] = [];
  for (let i = 0; i < 20; i++) {
    const r = await call('POST', `${url.ok}/run`, { body: { input: { i } } });
    assert.equal(r.status, 200, `run ${i}: ${JSON.stringify(r.json)}`);
    okIds.push((r.json as { id: string }).id);
  }
  for (const id of okIds) assert.equal((await ended(url.ok, id)).status, 'COMPLETED');
  // A graceful restart keeps every result.
  const oldBase = tp.url;
  await tp.platform.close();
  tp = await startTestPlatform({ dataDir });
  for (const k of Object.keys(url)) url[k] = url[k].replace(oldBase, tp.url);
  for (const id of okIds) assert.equal((await call('GET', `${url.ok}/status/${id}`)).status, 200, `result ${id} survived`);
  const again = (await call('GET', `${url.nul}/status/${ids.nul}`)).json as Record<string, unknown>;
  assert.match(String(again.error), /bad\ufffdbyte/);
});

test('a row the database refuses is left out alone: the rest of its group commit is written', async () => {
  const store = await SqlStore.open(await openPglite(path.join(tmp, 'db'), { templateDir: TEMPLATE_DIR }));
  const errors: string[] = [];
  const writer = new JobWriter(store, { eagerMs: 2, lazyMs: 20 }, (e) => errors.push(e.message));
  const good = Array.from({ length: 5 }, (_, i) => new Job(`good-${i}`, 'ep', 'run', '{}', 1000, 60_000));
  const bad = new Job('bad', 'ep', 'run', '{}', 1000, 60_000);
  bad.error = 'raw \u0000 byte that skipped sanitising';
  for (const j of [...good, bad]) writer.changed(j);
  await writer.durable();
  await writer.close();
  const ids = (await store.loadLiveJobs()).map((r) => r.id).sort();
  assert.deepEqual(ids, good.map((j) => j.id).sort());
  assert.equal(writer.stats.refused, 1);
  assert.match(errors.join('\n'), /job bad could not be stored/);
  await store.close();
});
