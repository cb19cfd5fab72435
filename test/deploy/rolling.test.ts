// A rolling release through `strato deploy`: a source-only change moves the workers to the new build without
// losing a queued job, and the job already running finishes on the old build.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';
import { startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';

let tmp: string;
let p: TestPlatform;
before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-rolling-'));
  p = await startTestPlatform();
});
after(async () => {
  await p?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const worker = (version: number) => `from strato import Endpoint


@Endpoint(name="slow", cpu="cpu3c-1-2", workers=(0, 1))
def slow(seconds: float = 0, gate: str = "") -> dict:
    """Sleeps (or waits until the file \`gate\` exists, at most 60 s), then says which build ran it."""
    import os
    import time

    deadline = time.time() + 60
    while gate and not os.path.exists(gate) and time.time() < deadline:
        time.sleep(0.02)
    time.sleep(seconds)
    return {"version": ${version}}
`;

test('redeploying a source change: the running job finishes on the old build, queued jobs run on the new one', async () => {
  const dir = path.join(tmp, 'rolling');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'pyproject.toml'), '[project]\nname = "rolling"\n'); // the marker strato build asks for
  writeFileSync(path.join(dir, 'slow_worker.py'), worker(1));
  const env = { STRATO_API_URL: p.url, STRATO_API_KEY: p.key };
  assert.equal((await runCli(['deploy'], { cwd: dir, env })).code, 0);
  const ep = (await p.cp.findEndpoint('rolling', 'production', 'slow'))!;

  // The running job ends when the test says so (after the deploy), not after a time that load can outlast:
  // before, a slow deploy let the old worker finish it and take the queued jobs on the old build.
  const gate = path.join(dir, 'gate');
  const running = await p.jobs.run(ep.id, { gate });
  await waitUntil('the first job to start', async () => (await p.jobs.status(ep.id, running.id)).status === 'IN_PROGRESS', 20000);
  const queued = [await p.jobs.run(ep.id, { seconds: 0 }), await p.jobs.run(ep.id, { seconds: 0 })];

  writeFileSync(path.join(dir, 'slow_worker.py'), worker(2));
  const r = await runCli(['deploy'], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /0 created, 1 updated, 0 deleted/);
  writeFileSync(gate, '');

  const first = await p.jobs.waitFor(ep.id, running.id, 30000);
  assert.equal(first.status, 'COMPLETED');
  assert.deepEqual(first.output, { version: 1 });
  for (const q of queued) {
    const j = await p.jobs.waitFor(ep.id, q.id, 30000);
    assert.equal(j.status, 'COMPLETED', JSON.stringify(j));
    assert.deepEqual(j.output, { version: 2 });
  }
  assert.equal((await p.cp.findEndpoint('rolling', 'production', 'slow'))!.id, ep.id, 'the endpoint is updated in place');
});
