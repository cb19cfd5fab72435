// In-host tests of test/vscode/vsix.test.ts, run by the harness extension (test/vscode/harness) in a code-server where
// Strato was installed from its .vsix and the workspace starts in Restricted Mode. The outer test answers requests
// this file writes to $STRATO_HARNESS_DIR (click Trust, take a screenshot, read the notifications), and reads the
// results from $STRATO_INHOST_RESULTS.
const assert = require('assert');
const fs = require('fs');
const http = require('http');
const net = require('net');
const path = require('path');
const vscode = require('vscode');

const HARNESS = process.env.STRATO_HARNESS_DIR;
const { runTests, sleep, until } = require('./runner');

let asked = 0;
/** Asks the outer test (it drives the browser) and waits for its answer. */
async function ask(kind, extra = {}, timeoutMs = 30000) {
  const id = `${++asked}-${kind}`;
  // Written whole, then renamed: the test polls the folder and must never read half a request.
  const tmpFile = path.join(HARNESS, `${id}.request.tmp`);
  fs.writeFileSync(tmpFile, JSON.stringify({ kind, ...extra }));
  fs.renameSync(tmpFile, path.join(HARNESS, `${id}.request.json`));
  const done = path.join(HARNESS, `${id}.done.json`);
  await until(`the outer test to answer ${id}`, () => fs.existsSync(done), timeoutMs);
  return JSON.parse(fs.readFileSync(done, 'utf8'));
}

async function notificationsSay(re) {
  let last = '';
  await vscode.commands.executeCommand('notifications.showList'); // toasts hide themselves; the list keeps them
  await until(
    `a notification matching ${re}`,
    async () => {
      last = (await ask('notifications')).text;
      return re.test(last);
    },
    15000,
  ).catch((e) => {
    throw new Error(`${e.message}; the notifications read: ${JSON.stringify(last)}`);
  });
  await vscode.commands.executeCommand('notifications.clearAll');
  await vscode.commands.executeCommand('notifications.hideList');
  return last;
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });
let ext;
let api;
let folder;
const file = (rel) => vscode.Uri.joinPath(folder.uri, rel);

// Every `stopped` event of a strato debug session, from the debug adapter itself; the parent sessions of attaches.
const stops = [];
const parents = [];
vscode.debug.onDidStartDebugSession((s) => s.configuration.strato && s.configuration.strato.parent && parents.push(s));
vscode.debug.registerDebugAdapterTrackerFactory('strato', {
  createDebugAdapterTracker: (session) => ({
    onDidSendMessage: (m) => {
      if (m.type === 'event' && m.event === 'stopped') stops.push({ session, threadId: m.body.threadId });
    },
  }),
});

async function nextStop(after, what) {
  return until(what, () => (stops.length > after ? stops[stops.length - 1] : undefined), 60000);
}

async function topFrame(stop) {
  const { stackFrames } = await stop.session.customRequest('stackTrace', { threadId: stop.threadId, levels: 1 });
  const frame = stackFrames[0];
  const { scopes } = await stop.session.customRequest('scopes', { frameId: frame.id });
  const { variables } = await stop.session.customRequest('variables', { variablesReference: scopes[0].variablesReference });
  return { frame, vars: Object.fromEntries(variables.map((v) => [v.name, v.value])) };
}

/** A frame's source path: code-server names files with vscode-remote URIs. */
const pathOf = (p) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(p) ? vscode.Uri.parse(p).path : p);

function walk(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

const CALC = { endpoint: 'calc', function: 'calc', file: 'calc_worker.py', kind: 'QUEUE' };

test('Strato runs from the installed .vsix: its files, commands in the Strato category, ts-morph beside it', async () => {
  folder = vscode.workspace.workspaceFolders[0];
  ext = vscode.extensions.getExtension('strato.strato');
  assert.ok(ext, 'strato.strato is installed');
  assert.ok(ext.extensionPath.startsWith(process.env.STRATO_EXTENSIONS_DIR), `${ext.extensionPath} is in the extensions folder`);
  api = await ext.activate();
  const files = walk(ext.extensionPath).map((f) => path.relative(ext.extensionPath, f));
  for (const f of ['dist/extension.js', 'dist/server.js', 'dist/cli.js', 'dist/python/strato/_debug.py', 'client/media/icon.png', 'LICENSE.txt'])
    assert.ok(files.includes(f), `${f} is packaged`);
  const leaked = files.filter((f) => /\.map$|\.d\.ts$|^(engine|server|test|bench|scripts|docs)\/|^client\/src\//.test(f));
  assert.deepStrictEqual(leaked, [], 'no sources, tests, benches or maps');
  assert.strictEqual(typeof require(path.join(ext.extensionPath, 'node_modules', 'ts-morph')).Project, 'function');
  const commands = ext.packageJSON.contributes.commands;
  assert.ok(
    commands.every((c) => c.category === 'Strato' && !c.title.startsWith('Strato')),
    'every command is in the Strato category, without the prefix in its title',
  );
  const registered = await vscode.commands.getCommands(true);
  assert.deepStrictEqual(
    commands.map((c) => c.command).filter((c) => !registered.includes(c)),
    [],
    'every contributed command is registered',
  );
  const menus = Object.values(ext.packageJSON.contributes.menus).flat();
  assert.deepStrictEqual(
    menus.map((m) => m.command).filter((c) => !commands.some((x) => x.command === c)),
    [],
    'every menu item names a contributed command',
  );
  assert.strictEqual(vscode.workspace.isTrusted, false, 'the workspace starts in Restricted Mode');
});

test('Restricted Mode: validation, hover and completion work', async () => {
  const uri = file('both_worker.py');
  const src =
    'from strato import CpuInstanceType, Endpoint, GpuGroup\n\n\n@Endpoint(name="both", gpu=GpuGroup.ADA_24, cpu=CpuInstanceType.CPU3C_1_2)\ndef both(x: int) -> int:\n    return x\n';
  await vscode.workspace.fs.writeFile(uri, Buffer.from(src));
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc);
  await until('the gpu-and-cpu diagnostic', () =>
    vscode.languages.getDiagnostics(uri).some((d) => (typeof d.code === 'object' ? d.code.value : d.code) === 'gpu-and-cpu'),
  );
  const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', uri, new vscode.Position(3, 37));
  const hoverText = hovers.flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value))).join('\n');
  assert.match(hoverText, /ADA_24|gpu/i, hoverText);
  const list = await vscode.commands.executeCommand('vscode.executeCompletionItemProvider', uri, new vscode.Position(3, 36));
  assert.ok(
    list.items.some((i) => (typeof i.label === 'string' ? i.label : i.label.label) === 'ADA_24'),
    'GpuGroup members are completed',
  );
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await vscode.workspace.fs.delete(uri);
});

test('Restricted Mode: nothing runs; the code lenses and the commands say why', async () => {
  const doc = await vscode.workspace.openTextDocument(file('calc_worker.py'));
  const lenses = await until('the code lenses of calc_worker.py', async () => {
    const l = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', doc.uri)) || [];
    return l.length ? l : undefined;
  });
  assert.deepStrictEqual(
    lenses.map((l) => `${l.command.title} -> ${l.command.command}`),
    ['$(shield) Restricted Mode: trust this workspace to run, debug or deploy -> workbench.trust.manage'],
  );
  assert.match(api.views.endpointsView.message, /^Restricted Mode: Strato checks this workspace's code but runs none of it/);
  assert.strictEqual(await vscode.commands.executeCommand('strato.deploy', 'production'), undefined);
  await notificationsSay(/Restricted Mode: Strato runs none of this workspace's code until you trust it\. To build and deploy, trust the workspace/);
  assert.strictEqual(await vscode.commands.executeCommand('strato.startDev'), undefined);
  assert.strictEqual(
    vscode.window.terminals.some((t) => t.name === 'Strato dev'),
    false,
    'no dev server terminal',
  );
  assert.strictEqual(
    await vscode.commands.executeCommand('strato.debugEndpoint', { ...CALC, uri: doc.uri.toString() }, { input: { numbers: [1] } }),
    undefined,
  );
  await notificationsSay(/To debug a function, trust the workspace/);
});

test('once the workspace is trusted, the Run, Debug and Deploy lenses come back', async () => {
  let granted = false;
  vscode.workspace.onDidGrantWorkspaceTrust(() => (granted = true));
  await vscode.commands.executeCommand('workbench.trust.manage');
  await ask('trust');
  await until('the trust to be granted', () => granted && vscode.workspace.isTrusted);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  const doc = await vscode.workspace.openTextDocument(file('calc_worker.py'));
  await vscode.window.showTextDocument(doc);
  const titles = await until('the trusted lenses', async () => {
    const l = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', doc.uri)) || [];
    const t = l.map((x) => x.command.title);
    return t.includes('Debug') ? t : undefined;
  });
  assert.deepStrictEqual(titles, ['▶ Run calc', 'Debug', 'Deploy all 4 endpoints']);
  assert.strictEqual(api.views.endpointsView.message, undefined);
});

test('Set API Key: the key goes to SecretStorage and the next deploy (from the .vsix) uses it', async () => {
  assert.strictEqual(await vscode.commands.executeCommand('strato.deploy', 'production'), undefined, 'no key yet');
  await notificationsSay(/STRATO_API_KEY is not; set it in the environment or in \.env \(in VS Code: Strato: Set API Key\)/);
  assert.strictEqual(await vscode.commands.executeCommand('strato.setApiKey', process.env.STRATO_TEST_PLATFORM_KEY), true);
  const summary = await vscode.commands.executeCommand('strato.deploy', 'production');
  assert.ok(summary, `the deploy with the stored key returned a summary; notifications: ${(await ask('notifications')).text}`);
  assert.deepStrictEqual(summary.endpoints.map((e) => e.name).sort(), ['calc', 'cpu-stats', 'gpu-hello', 'lb-api']);
  assert.ok(summary.endpoints.every((e) => e.url.startsWith(process.env.STRATO_API_URL)));
  // A deployment's item: Copy URL (its inline action and context menu) gets the node.
  const deployment = await until('the deployed URL under calc', async () => {
    await api.views.refresh();
    return api.views.endpoints.find((n) => n.contextValue === 'strato.deployment' && n.id.endsWith(':calc:env:production'));
  });
  assert.strictEqual(await vscode.commands.executeCommand('strato.copyUrl', deployment), deployment.url);
  // The project's .env still wins over the stored key, as in the CLI: a wrong key there is the one sent.
  const dotEnv = path.join(folder.uri.fsPath, '.env');
  fs.writeFileSync(dotEnv, 'STRATO_API_KEY=not-the-key\n');
  try {
    assert.strictEqual(await vscode.commands.executeCommand('strato.envGet', 'production'), undefined);
    await notificationsSay(/refused the API key \(401\)/);
  } finally {
    fs.rmSync(dotEnv);
  }
  const s = await vscode.commands.executeCommand('strato.envGet', 'production');
  assert.ok(s && s.endpoints.length === 4, 'with the .env gone the stored key works again');
  await vscode.commands.executeCommand('notifications.clearAll');
});

test('Debug: a breakpoint in the handler and one in a file it imports stop, variables are read, the run ends with its result', async () => {
  const worker = file('calc_worker.py');
  const util = file('mathutil.py');
  vscode.debug.addBreakpoints([
    new vscode.SourceBreakpoint(new vscode.Location(worker, new vscode.Position(8, 0))),
    new vscode.SourceBreakpoint(new vscode.Location(util, new vscode.Position(2, 0))),
  ]);
  const before = stops.length;
  // Started from the function's item in the Endpoints view, as its Debug action (inline or context menu) does.
  const node = api.views.endpoints.find((n) => n.contextValue === 'strato.function' && n.label === 'calc');
  assert.ok(node, 'the calc function in the Endpoints view');
  const running = vscode.commands.executeCommand('strato.debugEndpoint', node, { input: { numbers: [1, 2, 3] } });
  const first = await nextStop(before, 'the stop in the handler');
  const inHandler = await topFrame(first);
  assert.strictEqual(pathOf(inHandler.frame.source.path), worker.fsPath);
  assert.strictEqual(inHandler.frame.line, 9);
  assert.strictEqual(inHandler.vars.doubled, '[2, 4, 6]');
  await sleep(1500); // the editor shows the stopped line
  await ask('screenshot', { name: 'debug-stop' });
  await first.session.customRequest('continue', { threadId: first.threadId });
  const second = await nextStop(before + 1, 'the stop in the imported file');
  const inUtil = await topFrame(second);
  assert.strictEqual(pathOf(inUtil.frame.source.path), util.fsPath);
  assert.strictEqual(inUtil.vars.result, '12');
  await second.session.customRequest('continue', { threadId: second.threadId });
  const job = await running;
  assert.ok(job, 'the debug run returned its job');
  assert.strictEqual(job.status, 'COMPLETED', JSON.stringify(job));
  assert.deepStrictEqual(job.output, { total: 12 });
  assert.strictEqual(job.environment, 'local (debug)');
  assert.ok(
    api.views.jobs.nodes().some((n) => n.id === `job:${job.id}`),
    'the Jobs view lists the run',
  );
});

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

function post(port, route, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request({ host: '127.0.0.1', port, path: route, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

test('Attach to Dev Server: the dev server starts with --debug, its worker is attached as it starts, a breakpoint stops a call', async () => {
  vscode.debug.removeBreakpoints(vscode.debug.breakpoints.filter((b) => b.location.uri.fsPath.endsWith('mathutil.py')));
  const port = await freePort();
  const before = stops.length;
  const started = await vscode.debug.startDebugging(folder, {
    type: 'strato',
    request: 'attach',
    name: 'Attach to Dev Server',
    devArgs: ['--port', String(port), '--no-reload'],
  });
  assert.strictEqual(started, true);
  assert.deepStrictEqual(api.dev.extraArgs.slice(0, 1), ['--debug']);
  const parent = await until('the parent session', () => parents[0]);
  await until(
    'the dev server',
    () => new Promise((resolve) => http.get(`http://127.0.0.1:${port}/`, (r) => (r.resume(), resolve(r.statusCode === 200))).on('error', () => resolve(false))),
    90000,
  );
  const call = post(port, '/calc_worker/runsync', { input: { numbers: [5] } });
  const stop = await nextStop(before, 'the stop in the worker').catch(async (e) => {
    const dir = path.join(folder.uri.fsPath, '.strato', 'debug');
    const announced = fs.existsSync(dir) ? fs.readdirSync(dir) : 'no announcement folder';
    throw new Error(
      `${e.message}; announcements: ${announced}; attached: ${api.debugger.attach.attachedWorkers()}; notifications: ${(await ask('notifications')).text}`,
    );
  });
  assert.ok(stop.session.configuration.strato.worker, 'the stop is in a worker session');
  assert.strictEqual(stop.session.parentSession && stop.session.parentSession.id, parent.id);
  const top = await topFrame(stop);
  assert.strictEqual(pathOf(top.frame.source.path), file('calc_worker.py').fsPath, 'the worker build is mapped onto the project');
  assert.strictEqual(top.vars.doubled, '[10]');
  await stop.session.customRequest('continue', { threadId: stop.threadId });
  const r = await call;
  assert.strictEqual(r.status, 200, JSON.stringify(r.body));
  assert.deepStrictEqual(r.body.output, { total: 10 });
  await vscode.debug.stopDebugging(parent);
  vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
  assert.strictEqual(await vscode.commands.executeCommand('strato.stopDev'), true);
});

test('the strato tasks: build, deploy and dev for the folder; the build task runs the bundled CLI to success', async () => {
  const tasks = await vscode.tasks.fetchTasks({ type: 'strato' });
  assert.deepStrictEqual(tasks.map((t) => t.name).sort(), ['build', 'deploy', 'dev']);
  const build = tasks.find((t) => t.name === 'build');
  assert.strictEqual(build.group && build.group.id, vscode.TaskGroup.Build.id);
  const artifact = path.join(folder.uri.fsPath, '.strato', 'artifact.tar.gz');
  fs.rmSync(artifact, { force: true });
  const ended = new Promise((resolve) => vscode.tasks.onDidEndTaskProcess((e) => e.execution.task.name === 'build' && resolve(e.exitCode)));
  await vscode.tasks.executeTask(build);
  assert.strictEqual(await ended, 0, `the build task failed; notifications: ${(await ask('notifications')).text}`);
  assert.ok(fs.existsSync(artifact), 'the build task wrote the artifact');
});

test('New Project writes the template with the bundled CLI; the walkthrough opens', async () => {
  const parent = process.env.STRATO_NEW_PROJECT_PARENT;
  const dir = await vscode.commands.executeCommand('strato.newProject', { parent, name: 'demo', open: false });
  assert.strictEqual(dir, path.join(parent, 'demo'));
  for (const f of ['cpu_worker.py', 'gpu_worker.py', 'lb_worker.py', 'pyproject.toml']) assert.ok(fs.existsSync(path.join(dir, f)), f);
  const walkthroughs = ext.packageJSON.contributes.walkthroughs;
  assert.deepStrictEqual(
    walkthroughs[0].steps.map((s) => s.id),
    ['create', 'validate', 'run', 'deploy'],
  );
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await vscode.commands.executeCommand('workbench.action.closePanel');
  await vscode.commands.executeCommand('workbench.action.closeSidebar');
  await vscode.commands.executeCommand('workbench.action.openWalkthrough', 'strato.strato#strato.gettingStarted', false);
  await sleep(2500);
  await ask('screenshot', { name: 'walkthrough', contains: 'Get started with Strato' });
});

exports.run = async function run() {
  await runTests(tests, process.env.STRATO_INHOST_RESULTS, () => !api);
};
