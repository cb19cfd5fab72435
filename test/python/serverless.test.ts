// strato.serverless.start({"handler": fn}) for hand-written handlers: the function gets the whole job
// {"id", "input"} as in the reference SDK, locally (--test_input, --rp_serve_api) and as a platform worker.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { FakePlatform, killAll, removeTempDirs, runPython, startPython, tempDir, waitFor, writeFiles } from './helpers';

const HANDLER = `
import asyncio, sys
from strato import serverless

def handler(job):
    kind = job["input"].get("kind")
    if kind == "gen":
        return (x for x in job["input"]["items"])
    if kind == "error":
        return {"error": "refused", "detail": "the reference SDK fails any dict holding error"}
    if kind == "async":
        async def later():
            await asyncio.sleep(0.01)
            return {"async": True}
        return later()
    return {"id": job["id"], "input": job["input"]}

if __name__ == "__main__":
    serverless.start({"handler": handler})
`;

// An async handler, as the reference SDK's users write for I/O-bound work: its jobs run as tasks on the event loop.
// Written with \`import strato\` and strato.serverless.start, as runpod.serverless.start is.
const ASYNC_HANDLER = `
import asyncio
import strato

async def handler(job):
    await asyncio.sleep(0.01)
    if job["input"].get("kind") == "error":
        return {"error": "refused", "detail": "any dict holding error fails the job"}
    if job["input"].get("kind") == "raise":
        raise KeyError("missing")
    return {"id": job["id"], "async": True}

if __name__ == "__main__":
    strato.serverless.start({"handler": handler})
`;

const dir = tempDir();
writeFiles(dir, { 'handler.py': HANDLER, 'async_handler.py': ASYNC_HANDLER });
const handler = path.join(dir, 'handler.py');

after(() => {
  killAll();
  removeTempDirs();
});

describe('serverless.start', () => {
  test('the handler receives the job {"id", "input"}', async () => {
    const r = await runPython([handler, '--test_input', '{"input": {"a": 1}}']);
    assert.equal(r.code, 0, r.stderr);
    const job = JSON.parse(r.stdout);
    assert.equal(job.status, 'COMPLETED');
    assert.deepEqual(job.output.input, { a: 1 });
    assert.equal(job.output.id, job.id);
  });

  test('returned generators and coroutines are drained and awaited', async () => {
    const gen = JSON.parse((await runPython([handler, '--test_input', '{"input": {"kind": "gen", "items": [1, 2]}}'])).stdout);
    assert.deepEqual(gen.output, [1, 2]);
    const coro = JSON.parse((await runPython([handler, '--test_input', '{"input": {"kind": "async"}}'])).stdout);
    assert.deepEqual(coro.output, { async: true });
  });

  test('a dict holding "error" fails the job, as in the reference SDK', async () => {
    const r = await runPython([handler, '--test_input', '{"input": {"kind": "error"}}']);
    assert.equal(r.code, 1);
    assert.deepEqual([JSON.parse(r.stdout).status, JSON.parse(r.stdout).error], ['FAILED', 'refused']);
  });

  test('start() without a handler function is a ValueError saying what to pass', async () => {
    const r = await runPython(['-c', 'from strato import serverless\nserverless.start({"handler": None})']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /ValueError: start\(\) needs \{"handler": function\}/);
  });

  test('with STRATO_WORKER_TOKEN it is a platform worker', async () => {
    const platform = new FakePlatform();
    await platform.start();
    try {
      const proc = startPython([handler], { env: platform.workerEnv() });
      platform.enqueue({ id: 'h1', input: { x: 1 } }, { id: 'h2', input: { kind: 'error' } });
      await waitFor(() => platform.doneOf('h2'), `done of h2\n${proc.stderr()}`);
      assert.deepEqual(platform.doneOf('h1')!.output, { id: 'h1', input: { x: 1 } });
      assert.equal(platform.doneOf('h2')!.error, 'refused');
      proc.child.kill('SIGTERM');
      assert.equal(await proc.exited, 0);
    } finally {
      await platform.stop();
    }
  });

  test("an async handler as a platform worker: outputs, the reference SDK's error rule, exceptions", async () => {
    const platform = new FakePlatform({ channel: true, slots: 4 });
    await platform.start();
    try {
      const proc = startPython([path.join(dir, 'async_handler.py')], { env: platform.workerEnv({ STRATO_MAX_CONCURRENCY: '4' }) });
      platform.enqueue({ id: 'a1', input: {} }, { id: 'a2', input: { kind: 'error' } }, { id: 'a3', input: { kind: 'raise' } });
      await waitFor(() => platform.doneOf('a1') && platform.doneOf('a2') && platform.doneOf('a3'), `done of a1-a3\n${proc.stderr()}`);
      assert.deepEqual(platform.doneOf('a1')!.output, { id: 'a1', async: true });
      assert.equal(platform.doneOf('a2')!.error, 'refused');
      assert.equal(platform.doneOf('a3')!.error, "KeyError: 'missing'");
      proc.child.kill('SIGTERM');
      assert.equal(await proc.exited, 0);
    } finally {
      await platform.stop();
    }
  });
});
