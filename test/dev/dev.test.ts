// `strato dev` end to end: the real dev server (bundled CLI), a real platform and real Python workers. Every
// route of the template, reload on save, a broken save and its fix, a taken port, --auto-provision (refusal
// without a terminal, the cache), Ctrl+C cleanup, the hidden `run` alias, and the startup errors. What saves of
// other kinds do (dependencies, data files, folders made and removed) is in reload.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { CLI, runCli } from '../helpers/cli';
import { spawn } from 'node:child_process';
import { startDev, startServing } from '../helpers/devServer';
import { devStateFile, readDevState } from '../../engine/src/dev/state';
import { callTimeoutMs } from '../../engine/src/dev/server';
import type { DevRoute } from '../../engine/src/dev/routes';
import { limits } from '../../engine/src/platform/options';
import { call, liveEndpoints as liveEndpointsOf, project as makeProject, serve as startDevOn, useDevBed } from './devBed';

const bed = useDevBed();
const project = (name: string) => makeProject(bed, name);
const serve = (dir: string, args: string[] = [], command: 'dev' | 'run' = 'dev') => startDevOn(bed, dir, args, command);
const liveEndpoints = (app: string) => liveEndpointsOf(bed, app);

test('the startup table, every route of the template, reload on save, a broken save and its fix, Ctrl+C cleanup', async () => {
  const dir = await project('devapp');
  const dev = await serve(dir);
  const out = dev.stdout();
  assert.match(out, /METHOD +PATH +FUNCTION +TYPE +Description/);
  assert.match(out, /POST +\/gpu_worker\/runsync +gpu_hello +QB +Echo a prompt back, as a stand-in for model inference on a GPU\./);
  assert.match(out, /POST +\/lb_worker\/process +process +LB +Process a piece of text/);
  assert.match(out, /GET +\/lb_worker\/health +health +LB/);
  assert.match(out, /Press Ctrl\+C to stop/);
  // .strato/dev.json says where the server runs (the extension's status bar) and, below, what it provisioned.
  const state = () => readDevState(dir);
  assert.deepEqual(
    { ...state(), startedAt: 0 },
    {
      pid: dev.child.pid,
      url: `http://127.0.0.1:${dev.port}`,
      port: dev.port,
      startedAt: 0,
      app: 'devapp',
      platformUrl: bed.platform.url,
      endpoints: [],
    },
  );

  assert.deepEqual((await call(dev.port, 'GET', '/')).body.status, 'ok');
  const gpu = await call(dev.port, 'POST', '/gpu_worker/runsync', { input: { prompt: 'hey', repeat: 2 } });
  assert.equal(gpu.status, 200);
  assert.equal(gpu.body.status, 'COMPLETED');
  assert.equal(gpu.body.output.text, 'hey hey');
  assert.match(gpu.body.id, /^sync-/);
  assert.deepEqual((await call(dev.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [2, 4] } })).body.output, { count: 2, mean: 3, min: 2, max: 4 });
  assert.deepEqual((await call(dev.port, 'POST', '/lb_worker/process', { text: 'ab', uppercase: true })).body, { text: 'AB', length: 2 });
  assert.deepEqual((await call(dev.port, 'GET', '/lb_worker/health')).body, { status: 'ok' });
  assert.equal((await call(dev.port, 'POST', '/gpu_worker/runsync', { prompt: 'no wrapper' })).status, 400);
  // A body over the platform's limit is answered as the platform answers it (the connection was reset before).
  const huge = await call(dev.port, 'POST', '/gpu_worker/runsync', { input: { prompt: 'x'.repeat(21 * 1024 * 1024) } });
  assert.equal(huge.status, 413);
  assert.match(huge.body.error, /the request body is larger than the 20 MB limit of a call to gpu-hello; send a smaller input/);
  assert.equal((await call(dev.port, 'GET', '/nowhere')).status, 404);
  assert.equal((await call(dev.port, 'GET', '/lb_worker/process')).status, 405);
  assert.deepEqual(await liveEndpoints('devapp'), ['live-cpu-stats', 'live-gpu-hello', 'live-lb-api'], 'provisioned lazily on the calls above');
  assert.deepEqual(
    state()?.endpoints.map((e) => e.liveName),
    ['live-cpu-stats', 'live-gpu-hello', 'live-lb-api'],
  );

  // A saved change is served on the very next call; only the endpoint whose file changed rolls to new workers.
  const cpuFile = path.join(dir, 'cpu_worker.py');
  const original = readFileSync(cpuFile, 'utf8');
  const provisioned = (name: string) =>
    dev
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith(`provisioned live-${name} `)).length;
  writeFileSync(cpuFile, original.replace('"count": len(numbers),', '"count": len(numbers),\n        "edited": True,'));
  assert.equal((await call(dev.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1] } })).body.output.edited, true);
  assert.equal(provisioned('cpu-stats'), 2);
  assert.equal((await call(dev.port, 'POST', '/gpu_worker/runsync', { input: { prompt: 'x' } })).status, 200);
  assert.deepEqual([provisioned('gpu-hello'), provisioned('lb-api')], [1, 1], 'endpoints of other files keep their workers');

  // A broken save keeps the server up; the affected routes answer with file:line until it is fixed.
  writeFileSync(cpuFile, original.replace('workers=(0, 2)', 'workers=(2, 0)'));
  const broken = await call(dev.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1] } });
  assert.equal(broken.status, 400);
  assert.match(broken.body.detail, /cpu_worker\.py:8:\d+: error: workers min \(2\) cannot exceed max \(0\)/);
  await dev.waitFor(/cpu_worker\.py:8:\d+: error: workers min/, 10000, 'stderr');
  assert.equal((await call(dev.port, 'POST', '/gpu_worker/runsync', { input: {} })).status, 200, 'other files keep working');
  // Another file saved meanwhile cannot be built until the error is fixed: its route says so, rather than answer 200
  // with the code from before its save. So does a new file's.
  const gpuFile = path.join(dir, 'gpu_worker.py');
  const gpuOriginal = readFileSync(gpuFile, 'utf8');
  writeFileSync(gpuFile, gpuOriginal.replace('"worker": platform.node()', '"worker": platform.node(), "version": "NEW"'));
  writeFileSync(
    path.join(dir, 'extra_worker.py'),
    'from strato import Endpoint\n\n\n@Endpoint(name="extra", cpu="cpu3c-1-2")\ndef extra() -> dict:\n    return {"extra": True}\n',
  );
  for (const route of ['/gpu_worker/runsync', '/extra_worker/runsync']) {
    const stale = await call(dev.port, 'POST', route, { input: {} });
    assert.equal(stale.status, 400, `${route}: ${JSON.stringify(stale.body)}`);
    assert.match(stale.body.detail, /cpu_worker\.py:8:\d+: error: workers min \(2\) cannot exceed max \(0\)/);
  }
  writeFileSync(cpuFile, original);
  const fixed = await call(dev.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1] } });
  assert.equal(fixed.status, 200);
  assert.equal(fixed.body.output.edited, undefined);
  assert.equal((await call(dev.port, 'POST', '/gpu_worker/runsync', { input: {} })).body.output.version, 'NEW');
  assert.deepEqual((await call(dev.port, 'POST', '/extra_worker/runsync', { input: {} })).body.output, { extra: true });
  rmSync(path.join(dir, 'extra_worker.py'));
  writeFileSync(gpuFile, gpuOriginal);
  assert.equal((await call(dev.port, 'POST', '/gpu_worker/runsync', { input: {} })).body.output.version, undefined);
  assert.equal((await call(dev.port, 'POST', '/extra_worker/runsync', { input: {} })).status, 404);
  // A syntax error that hides the file's endpoints from the analysis: the other files, unchanged, keep working.
  writeFileSync(cpuFile, original.replace('import statistics', 'import statistics('));
  assert.equal((await call(dev.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1] } })).status, 400);
  assert.equal((await call(dev.port, 'POST', '/gpu_worker/runsync', { input: {} })).status, 200);
  writeFileSync(cpuFile, original);
  assert.equal((await call(dev.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1] } })).status, 200);

  assert.equal(await dev.stop(), 0);
  assert.match(dev.stderr(), /removed live-cpu-stats, live-gpu-hello, live-lb-api/);
  assert.deepEqual(await liveEndpoints('devapp'), []);
  assert.equal(existsSync(devStateFile(dir)), false, 'the state file leaves with the server');
  assert.deepEqual(
    (await bed.platform.cp.findApp('devapp'))?.environments.map((e) => e.name),
    [],
    'Ctrl+C leaves no empty live environment',
  );
});

function rawPost(port: number, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: '/cpu_worker/runsync', headers: { 'content-type': 'text/plain', ...headers } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('cross-site calls and foreign Host names are refused before anything runs; same-origin and non-browser calls work', async () => {
  const dir = await project('devorigin');
  const dev = await serve(dir, ['--no-reload']);
  const body = '{"input":{"numbers":[1,2]}}';
  const here = `127.0.0.1:${dev.port}`;
  const evil = await rawPost(dev.port, { host: here, origin: 'http://evil.example' }, body);
  assert.equal(evil.status, 403);
  assert.match(JSON.parse(evil.text).error, /cross-site request from origin "http:\/\/evil\.example" refused/);
  assert.equal((await rawPost(dev.port, { host: here, origin: 'null' }, body)).status, 403);
  assert.equal((await rawPost(dev.port, { host: here, origin: `http://localhost:${dev.port}` }, body)).status, 403, 'another origin, even a local one');
  const rebound = await rawPost(dev.port, { host: `evil.example:${dev.port}` }, body);
  assert.equal(rebound.status, 403);
  assert.match(JSON.parse(rebound.text).error, /Host header "evil\.example:\d+" does not name this machine/);
  assert.equal((await rawPost(dev.port, { host: here, 'sec-fetch-site': 'cross-site' }, body)).status, 403);
  assert.deepEqual(await liveEndpoints('devorigin'), [], 'nothing was provisioned for the refused calls');
  const same = await rawPost(dev.port, { host: here, origin: `http://${here}` }, body);
  assert.equal(same.status, 200, same.text);
  assert.deepEqual(JSON.parse(same.text).output, { count: 2, mean: 1.5, min: 1, max: 2 });
  for (const host of [`localhost:${dev.port}`, `[::1]:${dev.port}`, `app.localhost:${dev.port}`])
    assert.equal((await rawPost(dev.port, { host }, body)).status, 200, host);
  assert.equal(await dev.stop(), 0);
});

test('a function that calls another endpoint runs through both live endpoints, the peer provisioned with it', async () => {
  const dir = await project('chained');
  writeFileSync(
    path.join(dir, 'chain_worker.py'),
    'from strato import Endpoint\n\n\n@Endpoint(name="summarize", cpu="cpu3c-1-2")\ndef summarize(numbers: list) -> dict:\n    """Labels the stats of ' +
      'cpu-stats."""\n    from cpu_worker import cpu_stats\n\n    return {"stats": cpu_stats(numbers)}\n',
  );
  const dev = await serve(dir, ['--no-reload']);
  const r = await call(dev.port, 'POST', '/chain_worker/runsync', { input: { numbers: [1, 3] } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.deepEqual(r.body.output, { stats: { count: 2, mean: 2, min: 1, max: 3 } });
  assert.deepEqual(await liveEndpoints('chained'), ['live-cpu-stats', 'live-summarize']);
  // Their logs by the names the dev server prints: a live- name needs no --env.
  const logs = await runCli(['logs', 'live-summarize', '--tail', '5'], { cwd: dir, env: bed.env });
  assert.equal(logs.code, 0, logs.stderr);
  // A second dev server of the project is refused: the two would share its live- endpoints.
  const second = await startDev(['--host', '127.0.0.1', '--port', '0', '--no-reload'], { cwd: dir, env: bed.env });
  assert.equal(await new Promise((r) => second.child.once('exit', r)), 1);
  assert.match(second.stderr(), new RegExp(`strato dev already serves this project at http://127\\.0\\.0\\.1:${dev.port} \\(pid ${dev.child.pid}\\)`));
  // Its live endpoints removed behind its back (strato undeploy --env live): the next call provisions them again.
  const live = (await bed.platform.cp.findApp('chained'))!.environments.find((e) => e.name === 'live')!;
  for (const e of await bed.platform.cp.listEndpoints(live.id)) await bed.platform.cp.deleteEndpoint(e.id);
  const again = await call(dev.port, 'POST', '/chain_worker/runsync', { input: { numbers: [5] } });
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.deepEqual(again.body.output, { stats: { count: 1, mean: 5, min: 5, max: 5 } });
  assert.match(dev.stderr(), /live-summarize was removed from the platform: provisioning it again/);
  assert.deepEqual(await liveEndpoints('chained'), ['live-cpu-stats', 'live-summarize']);
  // The terminal it runs in closes (an editor's terminal closed or its window reloaded): the hang-up cleans up as
  // Ctrl+C does. It used to end the process at once and leave both live endpoints deployed. The window's extension
  // hangs it up too (code-server keeps terminals past their window): a second hang-up does not cut the cleanup short.
  const exited = new Promise((resolve) => dev.child.once('exit', resolve));
  dev.child.kill('SIGHUP');
  await dev.waitFor(/stopping: removing live endpoints/, 10_000, 'stderr');
  dev.child.kill('SIGHUP');
  assert.equal(await exited, 0);
  assert.match(dev.stderr(), /removed live-cpu-stats, live-summarize/);
  assert.deepEqual(await liveEndpoints('chained'), []);
});

test("a queue call waits for the platform's own answer: TIMED_OUT at the endpoint's execution timeout, 600 s and a cold start when none is declared", async () => {
  const dir = await project('slowcall');
  writeFileSync(
    path.join(dir, 'slow_worker.py'),
    'from strato import Endpoint\n\n\n@Endpoint(name="slow", cpu="cpu3c-1-2", execution_timeout_ms=1500)\ndef slow(seconds: float = 30) -> dict:\n' +
      '    """Sleeps."""\n    import time\n\n    time.sleep(seconds)\n    return {"slept": seconds}\n',
  );
  const dev = await serve(dir, ['--no-reload']);
  const started = Date.now();
  const r = await call(dev.port, 'POST', '/slow_worker/runsync', { input: { seconds: 30 } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.status, 'TIMED_OUT');
  assert.ok(Date.now() - started < 25_000, 'ended by the execution timeout, not the sleep');
  await dev.stop();
  // Undeclared: the platform's default limit and a cold start (a 60 s wait answered a job id still IN_PROGRESS).
  const route = { endpoint: { config: {} } } as unknown as DevRoute;
  assert.equal(callTimeoutMs(route), limits.defaultExecutionLimitMs + 120_000);
});

test('a dev server that never builds (its project has errors from start to stop) still removes what a killed one left; one that builds later takes it over', async () => {
  const dir = await project('leftover');
  const cpuFile = path.join(dir, 'cpu_worker.py');
  const original = readFileSync(cpuFile, 'utf8');
  const crashWithAll = async () => {
    const d = await serve(dir, ['--auto-provision', '--no-reload']);
    assert.deepEqual(await liveEndpoints('leftover'), ['live-cpu-stats', 'live-gpu-hello', 'live-lb-api']);
    d.child.kill('SIGKILL');
    await new Promise((r) => d.child.once('exit', r));
  };
  await crashWithAll();
  writeFileSync(cpuFile, original.replace('workers=(0, 2)', 'workers=(2, 0)'));
  const broken = await serve(dir);
  assert.equal((await call(broken.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1] } })).status, 400);
  await broken.stop();
  assert.deepEqual(await liveEndpoints('leftover'), [], 'removed by the session that never built');
  writeFileSync(cpuFile, original);
  await crashWithAll();
  writeFileSync(cpuFile, original.replace('workers=(0, 2)', 'workers=(2, 0)'));
  const later = await serve(dir);
  writeFileSync(cpuFile, original);
  assert.equal((await call(later.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [1] } })).status, 200);
  await later.waitFor(/an earlier strato dev of this project left live endpoints behind: reused live-cpu-stats, live-gpu-hello, live-lb-api/, 10000, 'stderr');
  await later.stop();
  assert.deepEqual(await liveEndpoints('leftover'), []);
});

test('a taken port: the next free one is used and said', async () => {
  const dir = await project('porty');
  // A port the system hands out is free; a random one may already be another process's (EADDRINUSE, seen in CI).
  const blocker = http.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = (blocker.address() as { port: number }).port;
  try {
    const d = await startServing(['--host', '127.0.0.1', '--port', String(port), '--no-reload'], { cwd: dir, env: bed.env });
    bed.running.push(d);
    // The next free one: port + 1, unless another process on this machine holds that one too.
    assert.ok(d.port > port && d.port <= port + 10, `port ${d.port}`);
    assert.match(d.stderr(), new RegExp(`port ${port} is taken: using ${d.port}`));
    assert.equal((await call(d.port, 'GET', '/')).status, 200);
    await d.stop();
  } finally {
    blocker.close();
  }
});

test('--auto-provision: all at start; the next dev server takes over what a crashed one left and removes it when it stops; refused above 5 without a terminal', async () => {
  const dir = await project('auto');
  const d1 = await serve(dir, ['--auto-provision', '--no-reload']);
  assert.match(d1.stderr(), /provisioned 3 live endpoint\(s\)/);
  assert.deepEqual(await liveEndpoints('auto'), ['live-cpu-stats', 'live-gpu-hello', 'live-lb-api']);
  d1.child.kill('SIGKILL'); // a crash: nothing cleaned up, the cache still lists them
  await new Promise((r) => d1.child.once('exit', r));
  // One endpoint's configuration changes meanwhile: it is updated, the two others are reused as they are, by a dev
  // server that provisions nothing itself (no --auto-provision): what the crashed one left is still this project's.
  const cpuFile = path.join(dir, 'cpu_worker.py');
  writeFileSync(cpuFile, readFileSync(cpuFile, 'utf8').replace('workers=(0, 2)', 'workers=(0, 3)'));
  const d2 = await serve(dir, ['--no-reload']);
  assert.match(
    d2.stderr(),
    /an earlier strato dev of this project left live endpoints behind: reused live-gpu-hello, live-lb-api; updated live-cpu-stats; they go when this one stops/,
  );
  const live = await bed.platform.cp.findEndpoint('auto', 'live', 'live-cpu-stats');
  assert.equal(live?.workersMax, 3);
  assert.equal((await call(d2.port, 'POST', '/cpu_worker/runsync', { input: { numbers: [5] } })).body.output.count, 1);
  await d2.stop();
  assert.deepEqual(await liveEndpoints('auto'), []);
  // Ctrl+C while it provisions (the first endpoint made, the others on their way): what it made is removed.
  const early = await startDev(['--auto-provision', '--port', '0', '--no-reload'], { cwd: dir, env: bed.env });
  await early.waitFor(/provisioned live-/, 60000, 'stderr');
  // 130 when the signal came while it provisioned; 0 when the last one was made by then (a fast machine, or a build
  // the platform already had): either way, what it made is removed.
  assert.ok([0, 130].includes((await early.stop()) ?? -1));
  assert.match(early.stderr(), /stopping: removing live endpoints\.\.\.\n(.*\n)*removed live-cpu-stats, live-gpu-hello, live-lb-api\n/);
  assert.deepEqual(await liveEndpoints('auto'), []);

  for (let i = 0; i < 3; i++) {
    writeFileSync(
      path.join(dir, `extra_${i}.py`),
      `from strato import Endpoint\n\n\n@Endpoint(name="extra-${i}", cpu="cpu3c-1-2")\ndef extra_${i}(x: int = 0) -> dict:\n    """Extra ${i}."""\n   ` +
        ` return {"x": x}\n`,
    );
  }
  const refused = await startDev(['--auto-provision', '--port', '0'], { cwd: dir, env: bed.env });
  const code = await new Promise((r) => refused.child.once('exit', r));
  assert.equal(code, 1);
  assert.match(refused.stderr(), /--auto-provision would deploy 6 live endpoints \(more than 5\) and there is no terminal to confirm/);
  assert.deepEqual(await liveEndpoints('auto'), []);

  // On a terminal (a pseudo-terminal from script(1)) the question is asked; "n" provisions nothing, "y" all six.
  const onTerminal = (answer: string) =>
    new Promise<string>((resolve) => {
      const cmd = `${process.execPath} ${CLI} dev --auto-provision --host 127.0.0.1 --port 0 --no-reload`;
      const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: dir, env: { ...process.env, ...bed.env, NO_COLOR: '1' } });
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (/Continue\? \[y\/N\]/.test(out) && !out.includes('<answered>')) {
          out += '<answered>';
          child.stdin.write(`${answer}\n`);
        }
        if (/API explorer/.test(out)) child.kill('SIGINT');
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
      child.on('exit', () => {
        clearTimeout(timer);
        resolve(out);
      });
    });
  const no = await onTerminal('n');
  assert.match(no, /--auto-provision will deploy 6 live endpoints\. Continue\? \[y\/N\]/);
  assert.match(no, /nothing provisioned/);
  const yes = await onTerminal('y');
  assert.match(yes, /provisioned 6 live endpoint\(s\)/);
});

test('the hidden alias `run` behaves like dev and is not listed in --help', async () => {
  const dir = await project('alias');
  const d = await serve(dir, ['--no-reload'], 'run');
  assert.match(d.stdout(), /POST +\/gpu_worker\/runsync/);
  assert.equal((await call(d.port, 'POST', '/lb_worker/process', { text: 'x' })).body.length, 1);
  await d.stop();
  const help = await runCli(['--help'], { cwd: bed.tmp });
  assert.match(help.stdout, /dev \[options\]/);
  assert.doesNotMatch(help.stdout, /\brun \[options\]/);
  const devHelp = await runCli(['dev', '--help'], { cwd: bed.tmp });
  assert.match(devHelp.stdout, /--reload +reload on saved changes \(default: true\)\n/);
  assert.doesNotMatch(devHelp.stdout, /\(default\) \(default/);
});

test('startup errors: no worker file, a remote platform without a key', async () => {
  const empty = path.join(bed.tmp, 'empty');
  mkdirSync(empty);
  writeFileSync(path.join(empty, 'notes.txt'), 'nothing\n');
  // Not a project: refused as build refuses it, before the local platform is started for nothing.
  const outside = await runCli(['dev', '--port', '0'], {
    cwd: empty,
    env: { STRATO_API_URL: '', STRATO_API_KEY: '', STRATO_DATA_DIR: path.join(bed.tmp, 'never-started') },
  });
  assert.equal(outside.code, 1);
  assert.match(outside.stderr, /empty is not a Strato project \(none of .* is there or in a folder above\), so nothing was served: run strato dev in/);
  assert.ok(!existsSync(path.join(bed.tmp, 'never-started')), 'no platform was started');
  assert.ok(!existsSync(path.join(empty, '.strato')), 'the folder did not become a project');
  writeFileSync(path.join(empty, 'pyproject.toml'), '[project]\nname = "empty"\n');
  const none = await runCli(['dev', '--port', '0'], { cwd: empty, env: bed.env });
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no Python worker file found/);
  const noKey = await runCli(['dev'], { cwd: empty, env: { STRATO_API_URL: bed.platform.url, STRATO_API_KEY: '' } });
  assert.equal(noKey.code, 1);
  assert.match(noKey.stderr, /STRATO_API_KEY/);
  assert.match(noKey.stderr, /\.env/);
  // A --host that is no address of this machine: said as such, for dev and the platform alike (no "report a bug").
  const dir = await project('badhost');
  for (const [args, cwd] of [
    [['dev', '--host', '256.1.1.1', '--port', '0', '--no-reload'], dir],
    [['platform', 'serve', '--host', '256.1.1.1', '--port', '0', '--data-dir', path.join(bed.tmp, 'badhost-platform')], bed.tmp],
  ] as const) {
    const r = await runCli([...args], { cwd, env: bed.env });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^error: --host 256\.1\.1\.1 is not an address of this machine \(\w+\); use 127\.0\.0\.1/m);
    assert.doesNotMatch(r.stderr, /report this as a bug/);
  }
  // The dev server's host was refused before anything was made on the platform (no app, no live environment).
  assert.equal(await bed.platform.cp.findApp('badhost'), null);
  const anyPort = await startServing(['--host', '127.0.0.1', '--port', '0', '--no-reload'], { cwd: dir, env: bed.env });
  bed.running.push(anyPort);
  assert.doesNotMatch(anyPort.stderr(), /is taken/, '--port 0 asks for any free port');
});
