// Workers forked from a warm template process (issue 17): a dependency that imports slowly is imported once, in the
// template; a dependency that starts a thread at import makes the endpoint fall back to plain starts, saying why;
// a GPU endpoint's forked workers get their own CUDA_VISIBLE_DEVICES; a SIGKILLed template takes its workers along
// and comes back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Endpoint } from '../../engine/src/api/controlPlane';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';

const SLOWDEP_PY = `
import os
import time

time.sleep(1.0)  # a heavy import (torch, a model library): what the template pays once
IMPORTED_IN = os.getpid()
`;

const TPL_PY = `
import os
import time

import slowdep


def who(seconds=0, **kw):
    time.sleep(seconds)
    return {"pid": os.getpid(), "ppid": os.getppid(), "imported_in": slowdep.IMPORTED_IN,
            "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"), "worker": os.environ.get("STRATO_WORKER_ID"),
            "rev": os.environ.get("REV")}


def who_lb():
    return who()
`;

const THREADED_PY = `
import os
import threading
import time

threading.Thread(target=time.sleep, args=(3600,), name="busy-at-import", daemon=True).start()


def who(**kw):
    return {"pid": os.getpid(), "ppid": os.getppid()}
`;

type Who = { pid: number; ppid: number; imported_in: number; cuda: string | null; worker: string; rev: string | null };
type Health = { workers: { idle: number; running: number; initializing: number } };

let tp: TestPlatform;
let eps: Record<string, Endpoint>;

before(async () => {
  process.env.STRATO_GPUS = 'fake-a,fake-b'; // two GPUs as far as the allocator knows: CUDA_VISIBLE_DEVICES 0 and 1
  tp = await startTestPlatform();
  const art = await buildTestArtifact({ 'slowdep.py': SLOWDEP_PY, 'tpl.py': TPL_PY, 'threaded.py': THREADED_PY }, [
    { name: 'slow', file: 'tpl.py', fn: 'who', workers: [0, 1], idleTimeout: 1 },
    { name: 'threaded', file: 'threaded.py', fn: 'who', workers: [0, 1], idleTimeout: 1 },
    { name: 'gpu', file: 'tpl.py', fn: 'who', workers: [0, 2], idleTimeout: 1, gpu: 'ADA_24' },
    { name: 'lb', file: 'tpl.py', fn: 'who_lb', routes: { 'GET /who': 'who_lb' }, workers: [0, 1], idleTimeout: 1 },
    { name: 'roll', file: 'tpl.py', fn: 'who', workers: [0, 1], idleTimeout: 1 },
    { name: 'timeout', file: 'tpl.py', fn: 'who', workers: [0, 1], idleTimeout: 1, executionTimeoutMs: 1500 },
  ]);
  eps = await deploy(tp.cp, art);
});
after(() => tp?.close());

async function runsync(url: string, input: Record<string, unknown> = {}): Promise<Who> {
  const r = (await call('POST', `${url}/runsync`, { body: { input } })).json as { status: string; output: Who; error?: string };
  assert.equal(r.status, 'COMPLETED', JSON.stringify(r));
  return r.output;
}
const idle = async (url: string) => {
  const h = (await call('GET', `${url}/health`)).json as Health;
  return h.workers.idle + h.workers.running + h.workers.initializing === 0;
};
/** Runs jobs (waiting for the workers to stop in between) until one ran in a forked worker. */
async function forkedRun(url: string, stopped = () => idle(url), run = () => runsync(url)): Promise<Who> {
  return waitUntil(
    'a job in a worker forked from the template',
    async () => {
      await waitUntil('the workers to stop', stopped, 15_000);
      const out = await run();
      return out.ppid !== process.pid ? out : null;
    },
    40_000,
    10,
  );
}

test('a slow import is paid once in the template: forked workers start with it imported', async () => {
  const plain = await runsync(eps.slow.url);
  assert.equal(plain.ppid, process.pid, 'the first worker is a plain start, a child of the platform');
  assert.equal(plain.imported_in, plain.pid, 'a plain start imports the slow dependency itself');
  const forked = await forkedRun(eps.slow.url);
  assert.equal(forked.imported_in, forked.ppid, "the dependency was imported in the template, the forked worker's parent");
  assert.notEqual(forked.pid, forked.imported_in);
  assert.match(forked.worker, /^w-/, 'the forked worker took its own identity');
  // The platform sees it as a worker of its own: its output reaches the endpoint log with its id.
  const log = await import('node:fs').then((fs) => fs.readFileSync(`${tp.dataDir}/logs/${eps.slow.id}.log`, 'utf8'));
  assert.match(log, new RegExp(`${forked.worker} P forked from the endpoint's template`));
  assert.match(log, new RegExp(`${forked.worker} E strato INFO +worker ${forked.worker} ready`));
});

test('a dependency that starts a thread at import: plain starts, with the reason in the health', async () => {
  const first = await runsync(eps.threaded.url);
  assert.equal(first.ppid, process.pid);
  const h = await waitUntil('the fallback reason', async () => {
    const v = await tp.cp.endpointHealth(eps.threaded.id);
    return /busy-at-import/.test(v?.hardwareNote ?? '') ? v : null;
  });
  assert.match(h.hardwareNote ?? '', /without a template.*thread/);
  await waitUntil('the workers to stop', () => idle(eps.threaded.url), 15_000);
  const again = await runsync(eps.threaded.url);
  assert.equal(again.ppid, process.pid, 'still a plain start');
});

test('two forked workers of a GPU endpoint get different CUDA_VISIBLE_DEVICES', async () => {
  await forkedRun(eps.gpu.url);
  await waitUntil('the workers to stop', () => idle(eps.gpu.url), 15_000);
  const [a, b] = await Promise.all([runsync(eps.gpu.url, { seconds: 1 }), runsync(eps.gpu.url, { seconds: 1 })]);
  assert.notEqual(a.pid, b.pid, 'two workers');
  assert.equal(a.ppid, b.ppid, 'both forked from the one template');
  assert.notEqual(a.ppid, process.pid);
  assert.deepEqual([a.cuda, b.cuda].sort(), ['0', '1']);
});

test('load-balanced endpoints fork their workers from a template too', async () => {
  const id = eps.lb.id;
  const get = async () => {
    const r = await call('GET', `${eps.lb.url}/who`);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    return r.json as Who;
  };
  const stopped = async () => {
    const h = await tp.cp.endpointHealth(id);
    return h !== null && h.idle + h.running + h.initializing === 0;
  };
  const forked = await forkedRun(eps.lb.url, stopped, get);
  assert.equal(forked.imported_in, forked.ppid);
});

test('a new revision gets a new template; the old one leaves with its last worker', async () => {
  const first = await forkedRun(eps.roll.url);
  assert.equal(first.rev, null);
  await tp.cp.saveEndpoint({ environmentId: eps.roll.environmentId, name: 'roll', env: { REV: '2' } });
  const next = await waitUntil(
    'a forked worker of the new revision',
    async () => {
      await waitUntil('the workers to stop', () => idle(eps.roll.url), 15_000);
      const out = await runsync(eps.roll.url);
      return out.rev === '2' && out.ppid !== process.pid ? out : null;
    },
    40_000,
    10,
  );
  assert.notEqual(next.ppid, first.ppid, 'a new template');
  await waitUntil('the old template to exit', () => !alive(first.ppid), 10_000);
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test('forked workers: a timed-out job fails, a cancelled one is cancelled, and stopped workers exit', async () => {
  const u = eps.timeout.url;
  const warm = await forkedRun(u);
  await waitUntil('the workers to stop', () => idle(u), 15_000);
  // The platform hears of the exit from the template, which then reaps the child: give the reaping a moment.
  await waitUntil('the stopped forked worker to have exited and been reaped', () => !alive(warm.pid), 10_000);
  const long = (await call('POST', `${u}/runsync`, { body: { input: { seconds: 20 } } })).json as { status: string; error?: string };
  assert.equal(long.status, 'TIMED_OUT');
  const { id } = (await call('POST', `${u}/run`, { body: { input: { seconds: 20 } } })).json as { id: string };
  await waitUntil('the job to run', async () => ((await call('GET', `${u}/status/${id}`)).json as { status: string }).status === 'IN_PROGRESS');
  await call('POST', `${u}/cancel/${id}`);
  await waitUntil('the job to be cancelled', async () => ((await call('GET', `${u}/status/${id}`)).json as { status: string }).status === 'CANCELLED');
  const after = await runsync(u);
  assert.notEqual(after.ppid, process.pid, 'still served by forked workers');
});

test('a SIGKILLed template takes its workers along, fails their jobs with why, and is started again', async () => {
  const first = await forkedRun(eps.slow.url);
  const template = first.ppid;
  const { id } = (await call('POST', `${eps.slow.url}/run`, { body: { input: { seconds: 30 } } })).json as { id: string };
  await waitUntil('the job to run', async () => ((await call('GET', `${eps.slow.url}/status/${id}`)).json as { status: string }).status === 'IN_PROGRESS');
  process.kill(template, 'SIGKILL');
  const failed = await waitUntil(
    'the job to end',
    async () => {
      const j = (await call('GET', `${eps.slow.url}/status/${id}`)).json as { status: string; error?: string };
      return j.status === 'FAILED' || j.status === 'COMPLETED' ? j : null;
    },
    30_000,
  );
  assert.equal(failed.status, 'FAILED');
  assert.match(failed.error ?? '', /SIGKILL/);
  const next = await forkedRun(eps.slow.url);
  assert.notEqual(next.ppid, template, 'a new template');
});
