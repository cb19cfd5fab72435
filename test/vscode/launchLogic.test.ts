// The extension's pure logic of debugging, inputs, tree-item actions and tasks, with plain node: the function a
// `strato` launch configuration names, the input box's first value, the arguments a tree item gives Run/Debug/Deploy,
// and the problem matcher of package.json against the CLI's real diagnostic lines. With a stand-in for the vscode
// module (fakeVscode.ts): the project a command on an item acts on, the dev and preview terminals' project, and the
// interpreter setting.
import { fake, folderOf } from './fakeVscode'; // first: the client modules below import vscode
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeDevState } from '../../engine/src/dev/state';
import { templateFiles } from '../../engine/src/init/template';
import { formatDiagnostic } from '../../engine/src/project';
import { isEndpointCommandArgs } from '../../engine/src/protocol';
import { analyzeFiles } from '../helpers/analysis';
import { debugpyProblem, debugTargets, launchConfigOf, outcomeOf, targetOf } from '../../client/src/debugConfig';
import { endpointArgsOf, endpointTargetOf } from '../../client/src/commandArgs';
import { buildEndpointTree, buildEnvironmentTree, type EnvironmentInfo } from '../../client/src/endpointTree';
import { initialInput, testInputCandidates, testInputOf } from '../../client/src/inputs';
import { DevAttach } from '../../client/src/debugAttach';
import { DevTerminal } from '../../client/src/devTerminal';
import { DevServerState } from '../../client/src/devServer';
import { isCancelled } from '../../client/src/errors';
import { projectFolder } from '../../client/src/folders';
import { stopPreview } from '../../client/src/previewCommands';
import { applyPythonSetting, effectiveEnv } from '../../client/src/settings';
import type { StratoViews } from '../../client/src/views';
import { REPO } from '../helpers/cli';

const uri = (f: string) => `file:///project/${f}`;

async function templateModel() {
  const t = templateFiles('shop');
  return analyzeFiles({ 'cpu_worker.py': t['cpu_worker.py'], 'lb_worker.py': t['lb_worker.py'] });
}

test('a launch configuration names a function the way a code lens does; a wrong name says what exists', async () => {
  const model = await templateModel();
  assert.deepEqual(targetOf(model, { endpoint: 'cpu-stats' }, uri), {
    endpoint: 'cpu-stats',
    function: 'cpu_stats',
    file: 'cpu_worker.py',
    uri: uri('cpu_worker.py'),
    kind: 'QUEUE',
  });
  const route = targetOf(model, { endpoint: 'lb-api', route: 'post /process' }, uri);
  assert.ok(isEndpointCommandArgs(route));
  assert.deepEqual([route.function, route.method, route.path], ['process', 'POST', '/process']);
  assert.deepEqual(launchConfigOf(route), {
    type: 'strato',
    request: 'launch',
    name: 'Debug lb-api POST /process',
    endpoint: 'lb-api',
    function: 'process',
    route: 'POST /process',
  });
  assert.equal(
    targetOf(model, { endpoint: 'cpu' }, uri),
    'no endpoint named "cpu" in this project (it has: cpu-stats, lb-api); fix "endpoint" in the debug configuration.',
  );
  assert.equal(targetOf(model, { endpoint: 'lb-api', route: 'PUT /x' }, uri), 'lb-api has no route "PUT /x" (its routes: "POST /process", "GET /health").');
  assert.deepEqual(
    debugTargets(model, uri).map((t) => t.label),
    ['cpu-stats', 'lb-api POST /process', 'lb-api GET /health'],
  );
});

test("the runner's result becomes a job's fields; no result file means the session ended first", () => {
  assert.deepEqual(outcomeOf('{"status": "COMPLETED", "output": {"a": 1}, "executionTime": 4}'), { status: 'COMPLETED', output: { a: 1 }, executionTime: 4 });
  assert.deepEqual(outcomeOf('{"status": "FAILED", "error": "ValueError: x", "traceback": "Traceback..."}'), {
    status: 'FAILED',
    error: 'ValueError: x',
    traceback: 'Traceback...',
    executionTime: undefined,
  });
  assert.equal(outcomeOf(undefined).status, 'CANCELLED');
  assert.equal(outcomeOf('{').status, 'ERROR');
});

test('the input box starts from the last input, else test_input.json, else the parameters', async () => {
  const model = await templateModel();
  const fn = model.endpoints.find((e) => e.name === 'cpu-stats')!.functions[0];
  assert.deepEqual(initialInput({ numbers: [9] }, '{"input": {"numbers": [1]}}', fn), { text: '{"numbers":[9]}', source: 'last input' });
  assert.deepEqual(initialInput(undefined, '{"input": {"numbers": [1]}}', fn), { text: '{"numbers":[1]}', source: 'test_input.json' });
  assert.deepEqual(initialInput(undefined, '{"numbers": [1]}', fn).source, 'parameters', 'a file without the "input" wrapper is not used');
  assert.equal(testInputOf('not json'), undefined);
  assert.deepEqual(testInputCandidates('workers/gpu.py'), ['workers/test_input.json', 'test_input.json']);
  assert.deepEqual(testInputCandidates('gpu.py'), ['test_input.json']);
});

test('function, route and endpoint items carry the arguments of Run, Debug and Deploy; environment items their name', async () => {
  const model = await templateModel();
  const [cpu, lb] = buildEndpointTree([{ name: 'shop', model }]);
  const fnArgs = endpointArgsOf(cpu.children![0]);
  assert.ok(isEndpointCommandArgs(fnArgs));
  assert.deepEqual(fnArgs, { endpoint: 'cpu-stats', function: 'cpu_stats', file: 'cpu_worker.py', uri: 'file:///project/cpu_worker.py', kind: 'QUEUE' });
  assert.deepEqual(endpointArgsOf(lb.children![1]), {
    endpoint: 'lb-api',
    function: 'health',
    file: 'lb_worker.py',
    uri: 'file:///project/lb_worker.py',
    kind: 'LOAD_BALANCED',
    method: 'GET',
    path: '/health',
  });
  assert.deepEqual(endpointArgsOf(cpu), fnArgs, "an endpoint's item acts on its first function");
  const lens = { ...fnArgs };
  assert.equal(endpointArgsOf(lens), lens, 'a code lens argument passes through');
  const [env] = buildEnvironmentTree([{ app: 'shop', environment: 'staging', endpoints: [] }]);
  assert.equal(env.environment, 'staging');
});

test("package.json's $strato problem matcher reads the CLI's diagnostic lines: file, line, column, severity, message, code", async () => {
  const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
    contributes: {
      problemMatchers: Array<{
        name: string;
        pattern: { regexp: string; file: number; line: number; column: number; severity: number; message: number; code: number };
      }>;
    };
  };
  const p = pkg.contributes.problemMatchers.find((m) => m.name === 'strato')!.pattern;
  const re = new RegExp(p.regexp);
  const model = await analyzeFiles({
    'workers/both.py':
      'from strato import Endpoint, GpuGroup, CpuInstanceType\n\n@Endpoint(name="both", gpu=GpuGroup.ADA_24, cpu=CpuInstanceType.CPU3C_1_2)\ndef both(x: int) -> int:\n    return x\n',
  });
  const d = model.diagnostics.find((x) => x.code === 'gpu-and-cpu')!;
  const line = formatDiagnostic(d);
  for (const text of [line, `error: ${line}`]) {
    const m = re.exec(text);
    assert.ok(m, text);
    assert.deepEqual(
      [m[p.file], m[p.line], m[p.column], m[p.severity], m[p.message], m[p.code]],
      ['workers/both.py', String(d.range.start.line + 1), String(d.range.start.character + 1), 'error', d.message, 'gpu-and-cpu'],
    );
  }
  // The dev server's start-up lines carry no severity (an error, the matcher's default).
  const dev = re.exec(`workers/both.py:3:1: ${d.message}`);
  assert.ok(dev && dev[p.severity] === undefined && dev[p.message] === d.message);
});

test('without debugpy (or without Python) the Debug command says how to install it', () => {
  // -S leaves out site-packages, where pip and Debian put debugpy: a real interpreter that cannot import it.
  const r = spawnSync('python3', ['-S', '-c', 'import debugpy'], { encoding: 'utf8' });
  assert.notEqual(r.status, 0);
  assert.equal(
    debugpyProblem('python3', { stderr: r.stderr, message: 'exit 1' }),
    'Strato: debugging needs debugpy, which python3 does not have: install debugpy for this interpreter: `python3 -m pip install debugpy`, or on ' +
      'Debian/Ubuntu `apt-get install python3-debugpy`; or set strato.pythonPath.',
  );
  const missing = spawnSync('no-such-python3', ['-c', 'import debugpy']);
  assert.equal(
    debugpyProblem('no-such-python3', { errno: (missing.error as NodeJS.ErrnoException).code, stderr: '', message: '' }),
    'Strato: debugging needs Python 3, and no-such-python3 was not found: set strato.pythonPath to your interpreter.',
  );
  assert.equal(debugpyProblem('python3', undefined), undefined);
});

// Two projects in one window: shop (whose editor is active) and billing, both with endpoints.
const shop = folderOf('/ws/shop', 0);
const billing = folderOf('/ws/billing', 1);
const twoProjects = (): StratoViews => {
  fake.folders = [shop, billing];
  fake.activeFile = '/ws/shop/cpu_worker.py';
  fake.messages = [];
  fake.answer = undefined;
  const state = fake.folders.map((folder) => ({ folder, model: { endpoints: [{ name: 'x' }] } }));
  return { state: () => state, refreshSoon: () => undefined } as unknown as StratoViews;
};

test("undeploy, env get, logs and the typed client on billing's item act on billing while an editor of shop is active", async () => {
  const views = twoProjects();
  const envs: EnvironmentInfo[] = ['shop', 'billing'].map((app) => ({
    app,
    environment: 'production',
    endpoints: [{ name: 'api', type: 'LOAD_BALANCED', url: `http://p/lb/${app}`, id: app, routes: [{ method: 'POST', path: '/pay' }] }],
  }));
  const tree = buildEnvironmentTree(
    envs,
    new Map([
      ['shop', shop.uri.fsPath],
      ['billing', billing.uri.fsPath],
    ]),
  );
  const env = tree.find((n) => n.id === 'env:billing:production')!;
  const deployment = env.children![0];
  for (const node of [env, deployment, deployment.children![0]]) assert.equal((await projectFolder(views, node)).name, 'billing', node.id);
  assert.equal(endpointTargetOf(deployment)?.folder, billing.uri.fsPath, "Show Logs reads the deployment's project");
  assert.equal((await projectFolder(views)).name, 'shop', "from the palette: the active editor's project");
});

test('clearing strato.pythonPath gives back the interpreter the window started with, without a reload', () => {
  const started = process.env.STRATO_PYTHON;
  fake.settings['strato.pythonPath'] = '/opt/py/bin/python3';
  applyPythonSetting();
  assert.equal(process.env.STRATO_PYTHON, '/opt/py/bin/python3');
  fake.settings['strato.pythonPath'] = '';
  applyPythonSetting();
  assert.equal(process.env.STRATO_PYTHON, started);
  assert.equal(effectiveEnv().STRATO_PYTHON, started, 'builds, runs and the dev server get it too');
});

test('the dev server started for another project stops the running one once the user agrees; Attach waits on the project it started', async () => {
  const views = twoProjects();
  const dev = new DevTerminal();
  await dev.start(shop);
  const [first] = fake.terminals;
  assert.equal(await dev.start(shop), first, "its own project's terminal is reused");
  await assert.rejects(dev.start(billing), isCancelled, 'dismissed: nothing changes');
  assert.deepEqual(fake.messages, ['`strato dev` runs for shop in this window. Stop it and start it for billing?']);
  assert.ok(dev.runsFor(shop.uri.fsPath) && first.sent.length === 0);
  fake.answer = 'Stop and Start';
  await dev.start(billing);
  assert.deepEqual(first.sent, ['\x03'], "shop's dev server got Ctrl+C");
  assert.deepEqual(
    fake.terminals.map((t) => t.options.cwd),
    [billing.uri.fsPath],
  );
  assert.ok(dev.runsFor(billing.uri.fsPath) && !dev.runsFor(shop.uri.fsPath));
  // Attach to billing while shop's runs with --debug: billing's dev server starts with --debug, and the session waits there.
  await dev.stop();
  await dev.start(shop, ['--debug']);
  const config = await new DevAttach(views, dev).resolve(billing, { type: 'strato', request: 'attach', name: 'Attach' });
  assert.ok(dev.runsFor(billing.uri.fsPath) && dev.extraArgs.includes('--debug'));
  assert.equal((config.strato as { root: string }).root, billing.uri.fsPath);
  await dev.stop();
  dev.dispose();
});

test("Stop Deploy Preview on another project's item leaves this window's preview running and says that project has none", async () => {
  const views = twoProjects();
  const preview = new DevTerminal('Strato preview', ['deploy', '--preview'], 'vm-running');
  await preview.start(shop);
  const item = (root: string) => ({ id: `preview:${path.basename(root)}`, label: 'preview', contextValue: 'strato.preview', root });
  await assert.rejects(stopPreview(views, preview, item(billing.uri.fsPath)), /no preview of billing is running/);
  assert.ok(preview.runsFor(shop.uri.fsPath), "shop's preview runs on");
  assert.equal(await stopPreview(views, preview, item(shop.uri.fsPath)), true);
  assert.ok(!preview.running);
  preview.dispose();
});

test("the window going hangs up its dev server's process: code-server keeps terminals past their window", async () => {
  twoProjects();
  const child = spawn(
    process.execPath,
    ['-e', "process.on('SIGHUP', () => { console.log('hung up'); process.exit(0); }); console.log('ready'); setInterval(() => {}, 1000);"],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => child.stdout.once('data', r));
  fake.terminalPid = child.pid;
  const dev = new DevTerminal();
  await dev.start(shop);
  await new Promise((r) => setImmediate(r));
  const exited = new Promise((r) => child.once('exit', r));
  dev.dispose();
  try {
    assert.equal(await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 5000))]), 0);
    assert.match(out, /hung up/);
  } finally {
    child.kill('SIGKILL');
    fake.terminalPid = undefined;
  }
});

test("two projects' dev servers: each is its own project's (Run, the status bar), and Stop says when none runs", async () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-devstate-'));
  const disposeAtEnd: Array<{ dispose(): void }> = [];
  try {
    const [a, b] = ['shop', 'billing'].map((name, i) => {
      mkdirSync(path.join(tmp, name));
      return folderOf(path.join(tmp, name), i);
    });
    fake.folders = [a, b];
    fake.messages = [];
    const state = (folder: typeof a, port: number) => ({
      pid: process.pid,
      url: `http://127.0.0.1:${port}`,
      port,
      startedAt: Date.now(),
      app: folder.name,
      platformUrl: 'http://127.0.0.1:1',
      endpoints: [],
    });
    // shop's dev server runs in another terminal; this window starts billing's.
    writeDevState(a.uri.fsPath, state(a, 8888));
    const terminal = new DevTerminal();
    const dev = new DevServerState(terminal);
    disposeAtEnd.push(dev, terminal);
    assert.equal(fake.statusBar.get('Strato dev server')?.text, '$(server-process) Strato dev :8888');
    await dev.start(b);
    assert.equal(dev.running(a)?.port, 8888, "Run in shop uses shop's dev server");
    assert.equal(dev.running(b), undefined, "billing's is starting: Run there waits for it");
    assert.equal(fake.statusBar.get('Strato dev server')?.text, '$(loading~spin) Strato dev starting', "the status bar follows this window's");
    writeDevState(b.uri.fsPath, state(b, 8889));
    for (let i = 0; i < 40 && fake.statusBar.get('Strato dev server')?.text !== '$(server-process) Strato dev :8889'; i++)
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(fake.statusBar.get('Strato dev server')?.text, '$(server-process) Strato dev :8889');
    assert.equal(dev.running(b)?.port, 8889);
    assert.equal(dev.running(a)?.port, 8888);
    dev.dispose();
    terminal.dispose();
    // Nothing runs: Stop says so rather than nothing.
    rmSync(path.join(tmp, 'shop', '.strato'), { recursive: true });
    rmSync(path.join(tmp, 'billing', '.strato'), { recursive: true });
    const idle = new DevServerState(new DevTerminal());
    disposeAtEnd.push(idle);
    assert.equal(await idle.stop(), false);
    assert.deepEqual(fake.messages, ['Strato: no dev server is running in this window.']);
    idle.dispose();
  } finally {
    for (const d of disposeAtEnd) d.dispose();
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('Attach to Dev Server ends when the dev server stops (no worker will come)', async () => {
  const views = twoProjects();
  fake.stoppedSessions = [];
  const dev = new DevTerminal();
  await dev.start(shop, ['--debug']);
  const attach = new DevAttach(views, dev);
  try {
    const session = {
      id: 's1',
      workspaceFolder: shop,
      configuration: { strato: { parent: true, root: shop.uri.fsPath } },
    } as unknown as import('vscode').DebugSession;
    attach.started(session);
    await new Promise((r) => setTimeout(r, 600));
    assert.deepEqual(fake.stoppedSessions, [], 'the dev server runs: the session waits for workers');
    await dev.stop();
    for (let i = 0; i < 20 && !fake.stoppedSessions.length; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(fake.stoppedSessions, [session]);
  } finally {
    attach.dispose();
    dev.dispose();
  }
});
