// Faults: a worker killed mid-job fails that job with a clear error and is replaced; a hung worker (no
// heartbeat) is replaced and its job runs again; a platform killed with SIGKILL while jobs are queued and
// running restarts and every accepted job ends, its output recorded once.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, spawnPlatformProcess, startTestPlatform, TEST_KEY, waitUntil, type PlatformProcess, type TestPlatform } from '../helpers/platform';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';
import { commandLine, descendants, processStat } from '../helpers/procfs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-faults-'));
const platforms: TestPlatform[] = [];
const processes: PlatformProcess[] = [];

after(async () => {
  for (const p of platforms) await p.close();
  for (const p of processes) p.killGroup();
  fs.rmSync(tmp, { recursive: true, force: true });
});

type JobView = { status: string; error?: string; output?: Record<string, unknown> };
const status = async (u: string, id: string) => (await call('GET', `${u}/status/${id}`)).json as JobView;
const ended = (u: string, id: string, ms = 30_000) =>
  waitUntil(
    `job ${id} to end`,
    async () => {
      const j = await status(u, id);
      return ['IN_QUEUE', 'IN_PROGRESS'].includes(j.status) ? null : j;
    },
    ms,
  );

describe('worker faults', () => {
  test('a worker killed mid-job fails the job with a clear error and is replaced', async () => {
    const tp = await startTestPlatform();
    platforms.push(tp);
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
      queueSpec('holder', 'hold', { workers: [1, 1] }),
      queueSpec('hangs', 'hold', { workers: [0, 1] }),
    ]);
    const eps = await deploy(tp.cp, art);
    const u = eps.holder.url;
    const marker = path.join(tmp, 'killed.pid');
    const { id } = (await call('POST', `${u}/run`, { body: { input: { marker, seconds: 30 } } })).json as { id: string };
    const pid = Number(await waitUntil('the worker pid', () => fs.existsSync(marker) && fs.readFileSync(marker, 'utf8')));
    process.kill(pid, 'SIGKILL');
    const job = await ended(u, id);
    assert.equal(job.status, 'FAILED');
    assert.match(job.error ?? '', /killed by SIGKILL while running this job/);
    // workers.min = 1: a new worker takes over and runs the next job.
    fs.rmSync(marker);
    const next = (await call('POST', `${u}/run`, { body: { input: { marker, seconds: 0 } } })).json as { id: string };
    const done = await ended(u, next.id);
    assert.equal(done.status, 'COMPLETED');
    assert.notEqual(done.output?.pid, pid);

    // A hung worker (stopped: no heartbeat) is killed and its job runs again on a new worker.
    const h = eps.hangs.url;
    const hm = path.join(tmp, 'hung.pid');
    const hung = (await call('POST', `${h}/run`, { body: { input: { marker: hm, seconds: 1 } } })).json as { id: string };
    const hpid = Number(await waitUntil('the hung worker pid', () => fs.existsSync(hm) && fs.readFileSync(hm, 'utf8')));
    process.kill(hpid, 'SIGSTOP');
    const rerun = await ended(h, hung.id, 30_000);
    assert.equal(rerun.status, 'COMPLETED');
    assert.notEqual(rerun.output?.pid, hpid);
    const replaced = tp.logs.map((l) => /worker (\S+) sent no heartbeat for \d+ ms; replacing it/.exec(l)?.[1]).find(Boolean);
    assert.ok(replaced, `the platform says why it replaced the worker\n${tp.logs.join('\n')}`);
    // (On a loaded machine another worker may be late while it computes: only the stopped one is judged here.)
    assert.ok(!tp.logs.some((l) => l.includes(`worker ${replaced} `) && /but is computing/.test(l)), 'a stopped process uses no CPU: not taken for busy');
  });

  test("a handler in one long call of C code holding Python's GIL (no heartbeat, CPU used) runs to its end on its worker, once", async () => {
    const tp = await startTestPlatform();
    platforms.push(tp);
    const worker =
      'import collections, itertools, os, time\n\n\ndef busy(seconds=8.0):\n' +
      '    # Measured in CPU time: on a loaded machine the call then lasts longer, never shorter, than `seconds`.\n' +
      '    t = time.process_time()\n    collections.deque(itertools.repeat(None, 10_000_000), maxlen=0)\n' +
      '    per = (time.process_time() - t) / 10_000_000\n' +
      '    # One C call: the heartbeat thread gets the GIL only when it returns.\n' +
      '    collections.deque(itertools.repeat(None, int(seconds / per)), maxlen=0)\n    return {"pid": os.getpid()}\n';
    const art = await buildTestArtifact({ 'worker.py': worker }, [queueSpec('busy', 'busy', { workers: [1, 1] })]);
    const u = (await deploy(tp.cp, art)).busy.url;
    const r = (await call('POST', `${u}/runsync?wait=60000`, { body: { input: { seconds: 8 } }, timeoutMs: 70_000 })).json as JobView & { id: string };
    assert.equal(r.status, 'COMPLETED', JSON.stringify(r));
    assert.ok(
      tp.logs.some((l) => /sent no heartbeat for \d+ ms but is computing/.test(l)),
      tp.logs.join('\n'),
    );
    assert.ok(!tp.logs.some((l) => /replacing it/.test(l)), tp.logs.join('\n'));
    const again = (await call('POST', `${u}/runsync`, { body: { input: { seconds: 0 } } })).json as JobView;
    assert.equal(again.output?.pid, r.output?.pid, 'the same worker: it was not replaced');
  });

  test("a worker that dies: its job's error says where its output is (its last line logged without a newline too), never quoting an earlier caller's traceback", async () => {
    const tp = await startTestPlatform();
    platforms.push(tp);
    const worker =
      'import os, sys\n\n\ndef flaky(mode="fail", secret=""):\n    if mode == "fail":\n        raise ValueError(f"bad input {secret}")\n' +
      '    sys.stderr.write("CUDA error: out of memory")  # no newline: the last thing it wrote\n    sys.stderr.flush()\n    os._exit(3)\n';
    const art = await buildTestArtifact({ 'worker.py': worker }, [queueSpec('flaky', 'flaky', { workers: [1, 1] })]);
    const u = (await deploy(tp.cp, art)).flaky.url;
    const first = (await call('POST', `${u}/runsync`, { body: { input: { mode: 'fail', secret: 'alice-private' } } })).json as JobView;
    assert.match(first.error ?? '', /ValueError: bad input alice-private/);
    const crashed = (await call('POST', `${u}/runsync`, { body: { input: { mode: 'crash' } } })).json as { id: string };
    const job = await ended(u, crashed.id);
    assert.match(job.error ?? '', /exited with code 3 while running this job; its error output is in the endpoint's logs \(strato logs flaky\)$/);
    assert.doesNotMatch(job.error ?? '', /alice-private/);
    // Its last line had no newline: logged all the same, where the job's error says it is.
    const logs = await call('GET', `${u}/logs`);
    assert.match(logs.text, /CUDA error: out of memory/);
  });
});

describe('platform crash', () => {
  test('after SIGKILL and a restart, every accepted job ends once with its output', async () => {
    const dataDir = path.join(tmp, 'crash-data');
    const first = await spawnPlatformProcess(dataDir);
    processes.push(first);
    const cp = new ControlPlaneClient({ baseUrl: first.url, apiKey: TEST_KEY });
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('rec', 'record', { workers: [0, 2], maxConcurrency: 2 })]);
    const eps = await deploy(cp, art);
    const u = eps.rec.url;
    const marker = path.join(tmp, 'crash.log');
    const N = 30;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const r = await call('POST', `${u}/run`, { body: { input: { marker, tag: `t${i}`, seconds: 0.3 } } });
      assert.equal(r.status, 200);
      ids.push((r.json as { id: string }).id);
    }
    await waitUntil('jobs running while others wait', async () => {
      const h = (await call('GET', `${u}/health`)).json as { jobs: { inProgress: number; inQueue: number } };
      return h.jobs.inProgress > 0 && h.jobs.inQueue > 0;
    });
    await first.crash();
    const port = new URL(first.url).port;
    const second = await spawnPlatformProcess(dataDir, [], Number(port));
    processes.push(second);
    await waitUntil(
      'every job to end',
      async () => {
        const h = (await call('GET', `${u}/health`)).json as { jobs: { completed: number; inQueue: number; inProgress: number } };
        return h.jobs.completed === N && h.jobs.inQueue === 0 && h.jobs.inProgress === 0;
      },
      60_000,
    );
    for (const [i, id] of ids.entries()) {
      const j = await status(u, id);
      assert.equal(j.status, 'COMPLETED', `${id}: ${JSON.stringify(j)}`);
      assert.deepEqual(j.output, { tag: `t${i}` });
    }
    const runs = fs.readFileSync(marker, 'utf8').trim().split('\n');
    assert.deepEqual([...new Set(runs)].sort(), ids.map((_, i) => `t${i}`).sort(), 'every job ran');
    // A graceful stop keeps queued jobs too.
    await second.stop();
    assert.match(second.output(), /stopped/);
  });
});

describe('what a worker started', () => {
  test('goes with the worker (its process group): a subprocess left by a crashed worker would keep the GPUs handed on', async () => {
    const tp = await startTestPlatform();
    platforms.push(tp);
    const marker = path.join(tmp, 'orphan.pid');
    const worker =
      'import os, subprocess\n\n\ndef spawns(marker):\n    child = subprocess.Popen(["sleep", "60"])\n' +
      '    open(marker, "w").write(str(child.pid))\n    os._exit(3)\n';
    const art = await buildTestArtifact({ 'worker.py': worker }, [queueSpec('spawns', 'spawns', { workers: [0, 1] })]);
    const u = (await deploy(tp.cp, art)).spawns.url;
    const { id } = (await call('POST', `${u}/run`, { body: { input: { marker } } })).json as { id: string };
    assert.match((await ended(u, id)).error ?? '', /exited with code 3 while running this job/);
    const orphan = Number(fs.readFileSync(marker, 'utf8'));
    await waitUntil(`its subprocess ${orphan} gone`, () => [undefined, 'Z'].includes(processStat(orphan)?.state), 10_000);
  });
});

describe('platform killed while a template imports', () => {
  test("a worker template stuck importing the endpoint's code (a download that hangs) goes with a platform SIGKILLed meanwhile", async () => {
    const node = await spawnPlatformProcess(path.join(tmp, 'template-data'));
    processes.push(node);
    const cp = new ControlPlaneClient({ baseUrl: node.url, apiKey: TEST_KEY });
    const stuck = 'import time\ntime.sleep(600)  # at import, as a model download that hangs\n\n\ndef handler(**kw):\n    return 1\n';
    const art = await buildTestArtifact({ 'worker.py': stuck }, [queueSpec('stuck', 'handler', { workers: [0, 1] })]);
    const u = (await deploy(cp, art)).stuck.url;
    await call('POST', `${u}/run`, { body: { input: {} } });
    const importing = () => descendants(node.child.pid!).filter((p) => /handler_stuck/.test(commandLine(p)));
    const pids = await waitUntil('the template (and worker) importing', () => (importing().length ? importing() : null));
    await node.crash();
    const gone = (pid: number) => [undefined, 'Z'].includes(processStat(pid)?.state);
    await waitUntil(`${pids.join(', ')} gone with the platform`, () => pids.every(gone), 10_000);
  });
});

describe('platform stop', () => {
  test('a /runsync still waiting is answered with its job as it stands when the platform stops, which does not wait out the wait', async () => {
    const tp = await startTestPlatform();
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('sleep', 'sleep', { workers: [1, 1] })]);
    const u = (await deploy(tp.cp, art)).sleep.url;
    const waiting = call('POST', `${u}/runsync?wait=60000`, { body: { input: { seconds: 30 } } });
    await waitUntil('the job running', async () => ((await tp.cp.endpointHealth((await tp.cp.listEndpoints())[0].id))?.inProgress ?? 0) > 0);
    const t = Date.now();
    await tp.close();
    const answer = await waiting;
    assert.ok(Date.now() - t < 20_000, `the stop took ${Date.now() - t} ms`);
    assert.equal(answer.status, 200, answer.text);
    const job = answer.json as { id: string; status: string };
    assert.match(job.id, /\S/);
    assert.ok(['IN_QUEUE', 'IN_PROGRESS'].includes(job.status), answer.text);
  });
});

describe('no interpreter', () => {
  test('a missing Python interpreter fails jobs with an error that says how to set it', async () => {
    const tp = await startTestPlatform({ python: 'no-such-python-strato' });
    platforms.push(tp);
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('echo', 'echo')]);
    const eps = await deploy(tp.cp, art);
    const { id } = (await call('POST', `${eps.echo.url}/run`, { body: { input: {} } })).json as { id: string };
    const job = await ended(eps.echo.url, id);
    assert.equal(job.status, 'FAILED');
    assert.match(job.error ?? '', /could not start no-such-python-strato: .*ENOENT.*set STRATO_PYTHON or --python/);
  });
});
