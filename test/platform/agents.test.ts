// Worker hosts (issue #11): two `strato platform agent` processes, each in a network namespace of its own, join a
// platform that listens on a veth address; real Python workers report where they run (the agent's name and their own
// address). Placement by datacenter, GPUs exclusive across hosts, an agent killed mid-job, and the refusals.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildTestArtifact } from '../helpers/artifact';
import { CLI, ensureBuilt } from '../helpers/cli';
import { makeNamespaces, netnsMissing, type TestNamespace } from '../helpers/netns';
import { call, deploy, PYTHON, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec } from '../helpers/testWorkers';

const WHERE_PY = `
import os
import socket
import time


def _me():
    # The address this worker reaches the platform from: its namespace's own.
    host, port = os.environ["STRATO_PLATFORM_URL"].split("//")[1].rsplit(":", 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((host, int(port)))
    address = s.getsockname()[0]
    s.close()
    return {"host": os.environ.get("STRATO_WORKER_HOST", "platform"), "address": address,
            "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"), "pid": os.getpid()}


def where():
    print("hello from", os.environ.get("STRATO_WORKER_HOST"))
    return _me()


def hold(seconds=1.0):
    start = time.time()
    time.sleep(seconds)
    return {**_me(), "start": start, "end": time.time()}


def slow(marker, seconds=2.0):
    me = _me()
    with open(marker, "a") as f:
        f.write("start %s\\n" % me["host"])
    time.sleep(seconds)
    with open(marker, "a") as f:
        f.write("done %s\\n" % me["host"])
    return me
`;

const skip = netnsMissing();
let ns: ReturnType<typeof makeNamespaces> | null = null;
let a: TestNamespace;
let b: TestNamespace;
let tp: TestPlatform;
let eps: Awaited<ReturnType<typeof deploy>>;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-agents-'));
const agents = new Map<string, { child: ChildProcess; out: string[] }>();

/** Runs `strato platform agent` inside a namespace; resolves with its exit code and output once it ends. */
function agentIn(space: TestNamespace, args: string[]): { child: ChildProcess; out: string[]; ended: Promise<number | null> } {
  const env: NodeJS.ProcessEnv = { ...process.env, STRATO_PYTHON: PYTHON, NO_COLOR: '1' };
  delete env.STRATO_GPUS;
  const child = spawn('ip', ['netns', 'exec', space.name, process.execPath, CLI, 'platform', 'agent', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  child.stdout!.on('data', (d: Buffer) => out.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => out.push(d.toString()));
  const ended = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, out, ended };
}

function startAgent(name: string, space: TestNamespace, dc: string, gpus: string): void {
  const r = agentIn(space, ['--join', tp.url, '--key', tp.key, '--name', name, '--datacenter', dc, '--gpus', gpus, '--data-dir', path.join(tmp, name)]);
  agents.set(name, r);
}

/** A port nothing listens on (it was free a moment ago). */
async function closedPort(host: string): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

type HostRow = { name: string; workers: number; gpus: { total: number; free: number } };
const hosts = async () => ((await call('GET', `${tp.url}/_agent/hosts`)).json as { hosts: HostRow[] }).hosts;

before(async () => {
  if (skip) return;
  ensureBuilt();
  ns = makeNamespaces(2);
  [a, b] = ns.spaces;
  process.env.STRATO_GPUS = ''; // the platform's own machine has no GPU here, even on a GPU machine
  tp = await startTestPlatform({ host: a.hostAddr, datacenters: ['EU-RO-1'], hostLostMs: 2000 });
  startAgent('host-a', a, 'US-KS-2', 'fake-a0,fake-a1');
  startAgent('host-b', b, 'US-IL-1', 'fake-b0');
  await waitUntil('both hosts to join', async () => (await hosts()).length === 3, 20_000, 100);
  const scaler = { scaler_type: 'REQUEST_COUNT', scaler_value: 1 }; // one worker per job: more are wanted than GPUs exist
  const art = await buildTestArtifact({ 'where.py': WHERE_PY }, [
    queueSpec('pinned', 'where', { file: 'where.py', resource: { datacenters: ['US-KS-2'] } }),
    queueSpec('gpu', 'hold', { file: 'where.py', gpu: 'any', workers: [0, 4], idleTimeout: 1, resource: scaler }),
    queueSpec('slow', 'slow', { file: 'where.py', workers: [0, 1], resource: { datacenters: ['US-KS-2', 'US-IL-1'] } }),
    // No host of its datacenter has a GPU at first: it runs on the platform's CPU until one joins.
    queueSpec('late', 'where', { file: 'where.py', gpu: 'any', workers: [0, 1], resource: { datacenters: ['EU-RO-1'] } }),
  ]);
  eps = await deploy(tp.cp, art);
});

after(async () => {
  for (const { child } of agents.values()) child.kill('SIGTERM');
  await Promise.all(
    [...agents.values()].map(({ child }) => new Promise((r) => (child.exitCode !== null || child.signalCode ? r(null) : child.once('close', r)))),
  );
  await tp?.close();
  ns?.remove();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test(
  'bad input is refused with a sentence: a wrong key, a key that is not an admin key, an unreachable platform, an unknown datacenter',
  { skip: skip ?? false },
  async () => {
    const wrongKey = agentIn(b, ['--join', tp.url, '--key', 'not-the-key', '--name', 'x', '--data-dir', path.join(tmp, 'x')]);
    const unreachable = agentIn(b, ['--join', `http://${a.hostAddr}:${await closedPort(a.hostAddr)}`, '--key', tp.key, '--data-dir', path.join(tmp, 'x')]);
    const badDc = agentIn(b, ['--join', tp.url, '--key', tp.key, '--datacenter', 'MARS-1', '--data-dir', path.join(tmp, 'x')]);
    const deployKey = (await tp.cp.createKey('ci', 'deploy', ['shop'])).secret;
    const notAdmin = agentIn(b, ['--join', tp.url, '--key', deployKey, '--name', 'y', '--data-dir', path.join(tmp, 'x')]);
    // Another machine with a joined host's name (cloned, one hostname): refused, the joined host left as it is. Each
    // replaced the other before, over and over, killing the other's workers each time.
    const twin = agentIn(b, ['--join', tp.url, '--key', tp.key, '--name', 'host-a', '--data-dir', path.join(tmp, 'twin')]);
    assert.equal(await wrongKey.ended, 1);
    assert.match(
      wrongKey.out.join(''),
      /the platform at http:\/\/\S+ refused the key \(missing or invalid API key.*\); pass an admin key of that platform with --key or STRATO_API_KEY/,
    );
    assert.equal(await unreachable.ended, 1);
    assert.match(unreachable.out.join(''), /cannot reach the platform at http:\/\/\S+ \(ECONNREFUSED\): .*strato platform serve --host 0\.0\.0\.0/);
    assert.equal(await notAdmin.ended, 1);
    assert.match(
      notAdmin.out.join(''),
      /refused this host: joining as a worker host \(strato platform agent\) needs an admin key; the key "ci" \(deploy: shop\) is not one/,
    );
    assert.equal(await badDc.ended, 1);
    assert.match(badDc.out.join(''), /--datacenter "MARS-1" is not a datacenter: use one of [A-Z0-9, -]*EU-RO-1/);
    assert.doesNotMatch(badDc.out.join(''), /DataCenter\./, "the flag's words, not the Python package's");
    assert.equal(await twin.ended, 1, twin.out.join(''));
    assert.match(
      twin.out.join(''),
      new RegExp(
        `refused this host: a worker host named "host-a" is already joined, from ${a.nsAddr.replace(/\./g, '\\.')} \\(another agent, heard from \\d+ s ago\\); give this machine a name of its own with --name`,
      ),
    );
    assert.ok(!tp.logs.some((l) => l.includes('worker host host-a registered again')), 'the joined host was not replaced');
    assert.deepEqual((await hosts()).filter((h) => h.name === 'host-a').length, 1);
  },
);

test("an endpoint pinned to a host's datacenter runs there, from a build fetched once, its output in the platform's log", { skip: skip ?? false }, async () => {
  const r = await call('POST', `${eps.pinned.url}/runsync`, { body: { input: {} } });
  assert.equal(r.status, 200, r.text);
  const out = (r.json as { output: { host: string; address: string } }).output;
  assert.deepEqual({ host: out.host, address: out.address }, { host: 'host-a', address: a.nsAddr });
  const log = path.join(tp.dataDir, 'logs', `${eps.pinned.id}.log`);
  await waitUntil('the log lines', () => fs.existsSync(log) && /hello from host-a/.test(fs.readFileSync(log, 'utf8')));
  assert.match(fs.readFileSync(log, 'utf8'), / P started on worker host host-a/);
});

test('three workers of a one-GPU endpoint never share a GPU across hosts; a fourth job waits for one', { skip: skip ?? false }, async () => {
  const ids = await Promise.all(
    [0, 1, 2, 3].map(async () => ((await call('POST', `${eps.gpu.url}/run`, { body: { input: { seconds: 2 } } })).json as { id: string }).id),
  );
  let peak = 0;
  await waitUntil(
    'the GPU jobs',
    async () => {
      peak = Math.max(
        peak,
        (await hosts()).reduce((n, h) => n + (h.gpus.total - h.gpus.free), 0),
      );
      const h = (await call('GET', `${eps.gpu.url}/health`)).json as { jobs: { completed: number } };
      return h.jobs.completed === 4;
    },
    30_000,
    100,
  );
  assert.ok(peak <= 3, `three GPUs in all, at most three held (saw ${peak})`);
  type Out = { host: string; cuda: string; pid: number; start: number; end: number };
  const outs = await Promise.all(ids.map(async (id) => ((await call('GET', `${eps.gpu.url}/status/${id}`)).json as { output: Out }).output));
  for (const o of outs) assert.ok(['host-a:0', 'host-a:1', 'host-b:0'].includes(`${o.host}:${o.cuda}`), `a worker on ${o.host} saw GPU ${o.cuda}`);
  for (const x of outs)
    for (const y of outs)
      if (x !== y && x.pid !== y.pid && x.start < y.end && y.start < x.end)
        assert.notEqual(`${x.host}:${x.cuda}`, `${y.host}:${y.cuda}`, 'two workers running at once hold different GPUs');
  assert.ok(new Set(outs.map((o) => o.host)).size === 2, 'both hosts ran GPU workers');
  // host-a ran workers of two endpoints of one build: it downloaded the build once.
  assert.equal(
    agents
      .get('host-a')!
      .out.join('')
      .match(/fetched build /g)?.length,
    1,
  );
});

test('an agent killed mid-job: the job runs again on the other host and completes once; the host comes back', { skip: skip ?? false }, async () => {
  const marker = path.join(tmp, 'slow.txt');
  const id = ((await call('POST', `${eps.slow.url}/run`, { body: { input: { marker, seconds: 2 } } })).json as { id: string }).id;
  const first = await waitUntil(
    'the job to start',
    () => (fs.existsSync(marker) ? /^start (\S+)/.exec(fs.readFileSync(marker, 'utf8'))?.[1] : undefined),
    20_000,
  );
  agents.get(first)!.child.kill('SIGKILL');
  const done = await waitUntil(
    'the job to complete elsewhere',
    async () => {
      const s = (await call('GET', `${eps.slow.url}/status/${id}`)).json as { status: string; output?: { host: string } };
      assert.notEqual(s.status, 'FAILED', JSON.stringify(s));
      return s.status === 'COMPLETED' ? s : null;
    },
    30_000,
    100,
  );
  const other = first === 'host-a' ? 'host-b' : 'host-a';
  assert.equal(done.output!.host, other);
  await new Promise((r) => setTimeout(r, 500)); // an orphan that kept running would write its line by now
  const lines = fs.readFileSync(marker, 'utf8').trim().split('\n');
  assert.deepEqual(lines, [`start ${first}`, `start ${other}`, `done ${other}`]);
  assert.ok(tp.logs.some((l) => l.includes(`worker host ${first} was lost`)));
  assert.deepEqual((await hosts()).map((h) => h.name).sort(), [os.hostname(), other].sort(), 'the lost host left the pool');
  // It comes back: it registers again, and `strato platform status` (STRATO_API_URL) lists it.
  startAgent(first, first === 'host-a' ? a : b, first === 'host-a' ? 'US-KS-2' : 'US-IL-1', 'fake-x0');
  await waitUntil('the host to come back', async () => (await hosts()).length === 3, 20_000, 100);
  const status = await new Promise<string>((resolve) => {
    const env = { ...process.env, STRATO_API_URL: tp.url, STRATO_API_KEY: tp.key, NO_COLOR: '1' };
    const c = spawn(process.execPath, [CLI, 'platform', 'status'], { env, cwd: tmp });
    let text = '';
    c.stdout.on('data', (d: Buffer) => (text += d.toString()));
    c.on('close', () => resolve(text));
  });
  assert.match(status, new RegExp(`${first}\\s+\\S+\\s+1/1 free\\s+0\\s+\\d+ s ago`));
  assert.match(status, /\(this machine\)\s+EU-RO-1\s+-\s+0\s+-/);
  const gql = await call('POST', `${tp.url}/graphql`, { body: { query: '{ platform { hosts { name local datacenters gpus { total free } } } }' } });
  const listed = (gql.json as { data: { platform: { hosts: Array<{ name: string; local: boolean; datacenters: string[]; gpus: { total: number } }> } } }).data
    .platform.hosts;
  assert.deepEqual(
    listed.find((h) => h.name === first),
    { name: first, local: false, datacenters: [first === 'host-a' ? 'US-KS-2' : 'US-IL-1'], gpus: { total: 1, free: 1 } },
  );
});

test('a GPU endpoint that started on the CPU (no host had a GPU for it) moves to a GPU once a host with one joins', { skip: skip ?? false }, async () => {
  type Out = { host: string; cuda: string };
  const where = async () => ((await call('POST', `${eps.late.url}/runsync`, { body: { input: {} } })).json as { output: Out }).output;
  const first = await where();
  assert.deepEqual([first.host, first.cuda], ['platform', ''], 'on the platform machine, no GPU');
  startAgent('host-c', a, 'EU-RO-1', 'fake-c0');
  try {
    const onGpu = await waitUntil(
      'a worker on the new GPU',
      async () => {
        const o = await where();
        return o.host === 'host-c' ? o : null;
      },
      30_000,
      200,
    );
    assert.equal(onGpu.cuda, '0');
  } finally {
    agents.get('host-c')!.child.kill('SIGTERM');
    await waitUntil('host-c to leave', async () => !(await hosts()).some((h) => h.name === 'host-c'), 20_000, 100);
  }
});
