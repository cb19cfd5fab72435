// `strato dev --debug` without VS Code: a worker of a live- endpoint announces its debugpy port in .strato/debug, waits
// for a debugger, and the attach request the extension builds (client/src/debugConfig.ts workerAttach) maps the
// project's files onto the worker's build: a breakpoint in the handler stops a call made through the dev server,
// the worker survives a pause longer than the platform's heartbeat limit, and the call returns once continued.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEBUG_ANNOUNCE_DIR, isDebugAnnouncement, type DebugAnnouncement } from '../../engine/src/protocol';
import { workerAttach } from '../../client/src/debugConfig';
import { DapClient, debugpyPython } from '../helpers/dap';
import { startDev, startServing, type DevProcess } from '../helpers/devServer';
import { startTestPlatform, type TestPlatform } from '../helpers/platform';

const WORKER = `import os

from strato import Endpoint


@Endpoint(name="calc", cpu="cpu3c-1-2")
def calc(numbers: list) -> dict:
    from pkg.util import total

    doubled = [n * 2 for n in numbers]
    return {"total": total(doubled), "pid": os.getpid()}
`;
const LINE = 11; // return {"total": ...}

let root: string;
let p: TestPlatform;
let dev: DevProcess | undefined;

before(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'strato-devdebug-'));
  mkdirSync(path.join(root, 'pkg'));
  writeFileSync(path.join(root, 'calc_worker.py'), WORKER);
  writeFileSync(path.join(root, 'pkg', '__init__.py'), '');
  writeFileSync(path.join(root, 'pkg', 'util.py'), 'def total(values):\n    return sum(values)\n');
  writeFileSync(path.join(root, 'requirements.txt'), '');
  // The workers import debugpy: the platform runs them with an interpreter that has it.
  p = await startTestPlatform({ python: debugpyPython() });
});
after(async () => {
  await dev?.stop();
  await p?.close();
  rmSync(root, { recursive: true, force: true });
});

async function announcement(timeoutMs: number): Promise<DebugAnnouncement> {
  const dir = path.join(root, DEBUG_ANNOUNCE_DIR);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const f of existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.json')) : []) {
      const a: unknown = JSON.parse(readFileSync(path.join(dir, f), 'utf8'));
      if (isDebugAnnouncement(a)) return a;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no worker announced itself in ${dir} within ${timeoutMs} ms; platform log:\n${p.logs.slice(-20).join('\n')}`);
}

test(
  'a worker of strato dev --debug is attached by its announcement; a breakpoint stops a dev call, which returns once continued',
  { timeout: 120_000 },
  async () => {
    dev = await startServing(['--debug', '--host', '127.0.0.1', '--port', '0', '--no-reload'], {
      cwd: root,
      env: { STRATO_API_URL: p.url, STRATO_API_KEY: p.key },
    });
    // Written just after the banner that startServing waits for: it may arrive a moment later.
    await dev.waitFor(/Debugging: each new worker listens for a debugger/, 10_000, 'stdout');
    const call = fetch(`http://127.0.0.1:${dev.port}/calc_worker/runsync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { numbers: [1, 2, 3] } }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { status?: string; output?: unknown } }));

    const a = await announcement(60_000);
    assert.equal(a.endpoint, 'live-calc');
    assert.notEqual(a.root, root, 'the worker runs the unpacked build, not the project folder');
    const client = await DapClient.connect(a.host, a.port);
    try {
      await client.request('initialize', { clientID: 'strato-test', adapterID: 'strato', pathFormat: 'path', linesStartAt1: true, columnsStartAt1: true });
      const attached = client.send('attach', workerAttach(a, root));
      await client.waitEvent('initialized', 20_000, undefined, true);
      const file = path.join(root, 'calc_worker.py');
      const bp = await client.request('setBreakpoints', { source: { path: file }, breakpoints: [{ line: LINE }] });
      assert.equal((bp.breakpoints as Array<{ verified: boolean }>)[0].verified, true);
      await client.request('configurationDone');
      await attached;

      const stopped = await client.waitEvent('stopped', 30_000, undefined, true);
      const threadId = stopped.body!.threadId as number;
      const top = await client.topFrameVariables(threadId);
      assert.equal(top.frame.source?.path, file, 'the build is mapped back onto the project file');
      assert.equal(top.vars.doubled, '[2, 4, 6]');
      // The platform replaces a worker whose heartbeat stops for 3 periods (at least 5 s): paused user code must not stop it.
      await new Promise((r) => setTimeout(r, 6000));
      await client.request('continue', { threadId });
      const r = await call;
      assert.equal(r.status, 200, JSON.stringify(r.body));
      // The paused worker itself finished the job: it was not replaced (and the job re-run elsewhere) meanwhile.
      assert.deepEqual(r.body.output, { total: 12, pid: a.pid });
    } finally {
      client.dispose();
    }
    await dev.stop();
    assert.ok(!existsSync(path.join(root, DEBUG_ANNOUNCE_DIR)), 'Ctrl+C removes the announcements');
  },
);

test('strato dev --debug refuses a platform that is not on this machine, before it builds anything', async () => {
  const d = await startDev(['--debug', '--port', '0'], { cwd: root, env: { STRATO_API_URL: 'https://platform.example.com', STRATO_API_KEY: 'k' } });
  const code = await new Promise<number | null>((resolve) => d.child.on('exit', resolve));
  assert.equal(code, 1);
  assert.match(d.stderr(), /--debug attaches a debugger to the workers, which must run on this machine: the platform is at https:\/\/platform\.example\.com/);
});
