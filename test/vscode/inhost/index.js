// Integration tests run INSIDE code-server's extension host (extensionTestsPath): the host require()s this file
// and awaits run(); a throw fails the run. Results go to $STRATO_INHOST_RESULTS for the outer test to read.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { click, codeOf, cpuArgs, escapeRe, file, outputText, showWithLenses, sleep, state, test, tickerArgs, ui, until } = require('./harness');

let api;
let folder;

test('the extension activates in a real VS Code with the workspace made by strato init', async () => {
  assert.strictEqual(vscode.env.appName, 'code-server');
  folder = state.folder = vscode.workspace.workspaceFolders[0];
  assert.strictEqual(folder.uri.scheme, 'file');
  const ext = vscode.extensions.getExtension('strato.strato');
  assert.ok(ext, 'extension strato.strato is loaded');
  api = state.api = await ext.activate();
  assert.ok(ext.isActive);
  const cmds = await vscode.commands.getCommands(true);
  for (const c of [
    'strato.deploy',
    'strato.undeploy',
    'strato.envGet',
    'strato.generateClient',
    'strato.startDev',
    'strato.stopDev',
    'strato.refresh',
    'strato.runEndpoint',
    'strato.deployEndpoint',
    'strato.showLogs',
    'strato.followLogs',
    'strato.stopFollowingLogs',
    'strato.streamJob',
    'strato.cancelJob',
    'strato.retryJob',
    'strato.devActions',
  ])
    assert.ok(cmds.includes(c), `${c} registered`);
  // A Strato project: the language server starts once activation has returned.
  assert.ok(await api.startLanguageServer(), 'the language server runs');
});

test('the language server publishes gpu-and-cpu for an endpoint declaring both', async () => {
  const uri = file('both_worker.py');
  const src =
    'from strato import CpuInstanceType, Endpoint, GpuGroup\n\n\n@Endpoint(name="both", gpu=GpuGroup.ADA_24, cpu=CpuInstanceType.CPU3C_1_2)\ndef both(x: int) -> int:\n    return x\n';
  await vscode.workspace.fs.writeFile(uri, Buffer.from(src));
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
  const diags = await until('the gpu-and-cpu diagnostic', () => {
    const d = vscode.languages.getDiagnostics(uri).filter((x) => codeOf(x) === 'gpu-and-cpu');
    return d.length ? d : undefined;
  });
  assert.strictEqual(diags[0].source, 'strato');
  assert.strictEqual(diags[0].range.start.line, 3);
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await vscode.workspace.fs.delete(uri); // it would make the deploy below refuse the build
});

test('code lenses Run/Deploy sit above the template functions and routes', async () => {
  const titles = async (rel) => {
    const doc = await vscode.workspace.openTextDocument(file(rel));
    return until(`code lenses of ${rel}`, async () => {
      const lenses = (await vscode.commands.executeCommand('vscode.executeCodeLensProvider', doc.uri)) || [];
      const t = lenses.filter((l) => l.command && l.command.command.startsWith('strato.'));
      return t.length ? t.map((l) => ({ title: l.command.title, line: doc.lineAt(l.range.start.line).text })) : undefined;
    });
  };
  const cpu = await titles('cpu_worker.py');
  // The endpoints of a project deploy together: the lens says so rather than naming one.
  assert.deepStrictEqual(cpu.map((l) => l.title).sort(), ['Debug', 'Deploy all 4 endpoints', '▶ Run cpu-stats']);
  assert.ok(
    cpu.every((l) => l.line.startsWith('@Endpoint(name="cpu-stats"')),
    JSON.stringify(cpu),
  );
  assert.deepStrictEqual((await titles('gpu_worker.py')).map((l) => l.title).sort(), ['Debug', 'Deploy all 4 endpoints', '▶ Run gpu-hello']);
  const lb = await titles('lb_worker.py');
  assert.deepStrictEqual(
    lb
      .filter((l) => l.title.startsWith('▶'))
      .map((l) => `${l.title} @ ${l.line}`)
      .sort(),
    ['▶ Run GET /health @ @api.get("/health")', '▶ Run POST /process @ @api.post("/process")'],
  );
});

test('the Endpoints view lists the template endpoints and the ticker with their functions and routes', async () => {
  // The file deleted above leaves the view once the language server has the file watcher's event.
  const nodes = await until('the Endpoints view without the deleted file', async () => {
    await api.views.refresh();
    const n = api.views.endpoints.nodes();
    return n.some((x) => x.label === 'both') ? undefined : n;
  });
  assert.deepStrictEqual(
    nodes.map((n) => n.label),
    ['cpu-stats', 'gpu-hello', 'lb-api', 'ticker'],
  );
  assert.match(nodes[0].description, /^queue · cpu_worker\.py:\d+$/);
  assert.deepStrictEqual(
    nodes[0].children.map((c) => c.label),
    ['cpu_stats'],
  );
  assert.deepStrictEqual(nodes[2].children.map((c) => c.label).sort(), ['GET /health', 'POST /process']);
});

test('strato.deploy deploys to the test platform; Environments then lists production with the endpoints', async () => {
  const summary = await vscode.commands.executeCommand('strato.deploy', 'production');
  assert.ok(summary, 'deploy returned a summary (see the error message otherwise)');
  assert.strictEqual(summary.environment, 'production');
  assert.deepStrictEqual(summary.endpoints.map((e) => e.name).sort(), ['cpu-stats', 'gpu-hello', 'lb-api', 'ticker']);
  assert.ok(
    summary.endpoints.every((e) => e.url.startsWith(process.env.STRATO_API_URL)),
    JSON.stringify(summary.endpoints),
  );
  const envs = api.views.environments.nodes();
  assert.deepStrictEqual(
    envs.map((n) => n.label),
    ['production'],
  );
  assert.deepStrictEqual(
    envs[0].children.map((c) => c.label),
    ['cpu-stats', 'gpu-hello', 'lb-api', 'ticker'],
  );
  const cpu = api.views.endpoints.nodes().find((n) => n.label === 'cpu-stats');
  assert.ok(
    cpu.children.some((c) => c.label === 'production' && /\/v2\//.test(c.description)),
    'deployed URL shown under the endpoint',
  );
});

test('strato.runEndpoint runs cpu-stats through /runsync and calls the lb-api route; the Jobs view lists both', async () => {
  const job = await vscode.commands.executeCommand('strato.runEndpoint', cpuArgs(), { input: { numbers: [1, 2, 3, 6] } });
  assert.ok(job, 'run returned the job');
  assert.strictEqual(job.status, 'COMPLETED', JSON.stringify(job));
  assert.deepStrictEqual(job.output, { count: 4, mean: 3, min: 1, max: 6 });
  const call = await vscode.commands.executeCommand(
    'strato.runEndpoint',
    {
      endpoint: 'lb-api',
      function: 'process',
      file: 'lb_worker.py',
      uri: file('lb_worker.py').toString(),
      kind: 'LOAD_BALANCED',
      method: 'POST',
      path: '/process',
    },
    { input: { text: 'hi', uppercase: true } },
  );
  assert.deepStrictEqual(call.output, { text: 'HI', length: 2 });
  assert.deepStrictEqual(
    api.views.jobs.nodes().map((n) => n.label),
    ['lb-api POST /process', 'cpu-stats'],
  );
  const shown = await vscode.commands.executeCommand('strato.showJob', job.id);
  assert.match(shown, /"mean": 3/);
});

test('strato.deploy without an argument asks for the environment in a quick pick (production preselected)', async () => {
  let settled = false;
  const deploying = Promise.resolve(vscode.commands.executeCommand('strato.deploy')).finally(() => (settled = true));
  // Accept the quick pick's selected item once it is shown (accepting with none open does nothing).
  await until(
    'the environment quick pick to be answered',
    async () => {
      if (!settled) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      return settled;
    },
    60000,
  );
  const summary = await deploying;
  assert.ok(summary, 'deploy through the quick pick returned a summary');
  assert.strictEqual(summary.environment, 'production');
  assert.strictEqual(summary.endpoints.length, 4);
});

test('cancelling a quick pick ends the command quietly: no error message, "cancelled" in the log', async () => {
  const before = api.commandOutcomes().length;
  let settled = false;
  const deploying = Promise.resolve(vscode.commands.executeCommand('strato.deploy')).finally(() => (settled = true));
  await until(
    'the environment pick to be dismissed',
    async () => {
      if (!settled) await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      return settled;
    },
    60000,
  );
  assert.strictEqual(await deploying, undefined);
  assert.deepStrictEqual(
    api
      .commandOutcomes()
      .slice(before)
      .map((o) => [o.what, o.outcome, o.message]),
    [['deploy', 'cancelled', 'no environment chosen']],
  );
});

test('strato.envGet shows the endpoints and URLs of production', async () => {
  const s = await vscode.commands.executeCommand('strato.envGet', 'production');
  assert.deepStrictEqual(
    s.endpoints.map((e) => `${e.name}:${e.type}`),
    ['cpu-stats:QUEUE', 'gpu-hello:QUEUE', 'lb-api:LOAD_BALANCED', 'ticker:QUEUE'],
  );
});

test('Generate TypeScript Client on the production item writes the typed client of that environment', async () => {
  const node = api.views.environments.nodes().find((n) => n.label === 'production');
  assert.strictEqual(node.contextValue, 'strato.environment');
  const menus = vscode.extensions.getExtension('strato.strato').packageJSON.contributes.menus['view/item/context'];
  assert.ok(
    menus.some((m) => m.command === 'strato.generateClient' && m.when.includes('viewItem == strato.environment')),
    'offered on environment items',
  );
  const file = path.join(folder.uri.fsPath, 'clients', 'shop-production.ts');
  const written = await vscode.commands.executeCommand('strato.generateClient', { ...node, file });
  assert.ok(written, 'the command returned what it wrote (see the error message otherwise)');
  assert.strictEqual(written.file, file);
  assert.deepStrictEqual([written.functions, written.routes], [3, 2]);
  const text = fs.readFileSync(file, 'utf8');
  assert.match(text, /export function createClient\(options: ClientOptions = \{\}\): Client/);
  assert.match(text, /cpuStats: QueueFunction<CpuStatsInput, CpuStatsOutput>;/);
  assert.match(text, /process\(args: ProcessInput, options\?: CallOptions\): Promise<ProcessOutput>;/);
  assert.ok(!text.includes(process.env.STRATO_API_KEY), 'the key is not written');
});

test('Jobs view: a failed job shows its traceback linked to the source; retry, stream and cancel from the view', async () => {
  const failed = await vscode.commands.executeCommand('strato.runEndpoint', cpuArgs(), { environment: 'production', input: { numbers: ['x'] } });
  assert.strictEqual(failed.status, 'FAILED', JSON.stringify(failed));
  const shown = await vscode.commands.executeCommand('strato.showJob', failed.id);
  const frame = new RegExp(`File ${escapeRe(path.join(folder.uri.fsPath, 'cpu_worker.py'))}:\\d+, in cpu_stats`);
  assert.match(shown, frame, 'the frame in the project file points at the workspace copy');
  const node = api.views.jobs.nodes().find((n) => n.id === `job:${failed.id}`);
  assert.deepStrictEqual([node.icon, node.contextValue], ['error', 'strato.job.queue.FAILED']);

  await click('inline:strato.jobs', 'strato.retryJob', {
    action: 'itemMenu',
    view: 'Jobs',
    item: 'cpu-stats',
    detail: failed.id.slice(0, 12),
    title: 'Retry Job',
    inline: true,
  });
  assert.strictEqual(api.views.jobList.get(failed.id).status, 'FAILED', 'the retry ran the same input again');
  // The view polls while a job runs: right-click once it has settled, as a user would on a row that stays put.
  await until('no job running', () => api.views.jobList.pending().length === 0, 30000);
  await sleep(1200);
  await click('menu:strato.jobs', 'strato.retryJob', {
    action: 'itemMenu',
    view: 'Jobs',
    item: 'cpu-stats',
    detail: failed.id.slice(0, 12),
    title: 'Retry Job',
  });
  await click('menu:strato.jobs', 'strato.showJob', {
    action: 'itemMenu',
    view: 'Jobs',
    item: 'cpu-stats',
    detail: failed.id.slice(0, 12),
    title: 'Show Job Output',
  });

  const ticked = await vscode.commands.executeCommand('strato.runEndpoint', tickerArgs(), { input: { n: 3, delay: 0.05 } });
  assert.strictEqual(ticked.status, 'COMPLETED', JSON.stringify(ticked));
  assert.deepStrictEqual(await vscode.commands.executeCommand('strato.streamJob', ticked.id), [{ tick: 0 }, { tick: 1 }, { tick: 2 }]);
  await click('menu:strato.jobs', 'strato.streamJob', {
    action: 'itemMenu',
    view: 'Jobs',
    item: 'ticker',
    detail: ticked.id.slice(0, 12),
    title: 'Stream Job Output',
  });
  await click('inline:strato.jobs', 'strato.streamJob', {
    action: 'itemMenu',
    view: 'Jobs',
    item: 'ticker',
    detail: ticked.id.slice(0, 12),
    title: 'Stream Job Output',
    inline: true,
  });

  // A long job: cancelled from its inline button, another from its context menu; Run then reports CANCELLED.
  for (const inline of [true, false]) {
    const before = new Set(api.views.jobList.all().map((j) => j.id));
    const running = Promise.resolve(vscode.commands.executeCommand('strato.runEndpoint', tickerArgs(), { input: { n: 600, delay: 0.1 } }));
    const job = await until('the long job to run', () => api.views.jobList.all().find((j) => !before.has(j.id) && j.status === 'IN_PROGRESS'), 60000);
    await until('its row to show it running', () => api.views.jobs.nodes().find((n) => n.id === `job:${job.id}` && n.icon === 'sync~spin'));
    await click(`${inline ? 'inline' : 'menu'}:strato.jobs`, 'strato.cancelJob', {
      action: 'itemMenu',
      view: 'Jobs',
      item: 'ticker',
      detail: job.id.slice(0, 12),
      title: 'Cancel Job',
      inline,
    });
    assert.strictEqual((await running).status, 'CANCELLED');
  }
});

test('Show Logs and Follow Logs of an endpoint: its worker log in its own channel with levels; following shows new lines', async () => {
  await click('menu:strato.endpoints', 'strato.showLogs', { action: 'itemMenu', view: 'Endpoints', item: 'cpu-stats', title: 'Show Logs' });
  // The Output view wraps long lines: compare without the breaks.
  const shown = await until('the log in the Output view', async () => {
    const t = (await outputText()).replace(/\n/g, '').replace(/\u00a0/g, ' ');
    return /\[error\] [\d:.]+ w-\S+ job \S+ failed: TypeError/.test(t) ? t : undefined;
  });
  assert.ok(shown.includes(`File ${path.join(folder.uri.fsPath, 'cpu_worker.py')}:`), `the traceback's frame is linked: ${shown}`);
  await vscode.commands.executeCommand('notifications.clearAll');
  await ui({ action: 'screenshot', name: 'vscode-logs' });

  await click('menu:strato.environments', 'strato.followLogs', { action: 'itemMenu', view: 'Environments', item: 'cpu-stats', title: 'Follow Logs' });
  assert.deepStrictEqual(api.logs.following(), ['Strato Logs: cpu-stats (production)']);
  const late = await vscode.commands.executeCommand('strato.runEndpoint', cpuArgs(), { environment: 'production', input: { numbers: ['late'] } });
  await until('the new job in the followed log', async () => (await outputText()).replace(/\n/g, '').includes(late.id), 30000);
  await click('title:strato.endpoints', 'strato.stopFollowingLogs', { action: 'viewTitle', view: 'Endpoints', title: 'Stop Following Logs' });
  assert.deepStrictEqual(api.logs.following(), []);
});

test('the dev server from the view title: its port in the status bar, stop in place of play, Run on it, live endpoints in Environments', async () => {
  // The button used to fail with an empty "Strato:" message: it passes an argument of its own.
  await click('title:strato.endpoints', 'strato.startDev', { action: 'viewTitle', view: 'Endpoints', title: 'Start Dev Server' });
  const dev = await until('the dev server to run', () => api.devServer.running(), 60000);
  assert.strictEqual(api.devServer.phase, 'running');
  // The workbench draws the status bar and the title buttons a moment after the state changes.
  const drawn = (selector, text, count) =>
    until(`${selector} ${text ?? ''} x${count}`, async () => (await ui({ action: 'has', selector, text })) === count, 15000);
  await drawn('.statusbar-item', `Strato dev :${dev.port}`, '1');
  await drawn('.pane-header .action-label[aria-label*="Stop Dev Server"]', undefined, '1');
  await drawn('.pane-header .action-label[aria-label*="Start Dev Server"]', undefined, '0');

  // The Run lens offers the dev server first; the input box comes prefilled with the last input (a failing one, from
  // the test before): the user types another and Enter runs it.
  await showWithLenses('cpu_worker.py');
  const before = new Set(api.views.jobList.all().map((j) => j.id));
  await click(
    'lens',
    'strato.runEndpoint',
    { action: 'lens', title: '▶ Run cpu-stats' },
    {
      then: async () => {
        await ui({ action: 'pick', label: 'dev server' });
        await sleep(500);
        await ui({ action: 'input', text: '{"numbers": [1, 2, 3]}' });
        await ui({ action: 'key', key: 'Enter' });
      },
    },
  );
  const viaDev = api.views.jobList.all().find((j) => !before.has(j.id));
  assert.deepStrictEqual([viaDev.environment, viaDev.viaDev, viaDev.status], ['dev server', true, 'COMPLETED'], JSON.stringify(viaDev));
  // The dev server makes its `live` environment at start and the endpoint at the first call: the view shows the
  // environment empty until the refresh after that call (a CI run read it in between).
  const live = await until(
    'live-cpu-stats in the live environment of the Environments view',
    () => api.views.environments.nodes().find((n) => n.label === 'live' && n.children?.some((c) => c.label === 'live-cpu-stats')),
    30000,
  );
  assert.deepStrictEqual(
    live.children.map((c) => c.label),
    ['live-cpu-stats'],
  );
  await vscode.commands.executeCommand('notifications.clearAll');
  await ui({ action: 'screenshot', name: 'vscode-dev-status-bar' });

  await click(
    'status',
    'strato.devActions',
    { action: 'statusBar', text: `Strato dev :${dev.port}` },
    { then: () => ui({ action: 'pick', label: 'Stop the dev server' }) },
  );
  await until('the dev server to stop', () => api.devServer.phase === 'stopped', 30000);
  await until('the live environment to leave the view', () => !api.views.environments.nodes().some((n) => n.label === 'live'), 30000);
  // As when it started, the workbench takes the item away a moment after the state changed (a CI run saw it still there).
  await drawn('.statusbar-item', 'Strato dev', '0');
});

test('strato.startDev runs `strato dev` in one reused terminal; strato.stopDev stops it', async () => {
  const name = await vscode.commands.executeCommand('strato.startDev');
  assert.strictEqual(name, 'Strato dev');
  assert.strictEqual(await vscode.commands.executeCommand('strato.startDev'), 'Strato dev');
  assert.strictEqual(vscode.window.terminals.filter((t) => t.name === 'Strato dev').length, 1);
  await sleep(3000);
  const stopped = await vscode.commands.executeCommand('strato.stopDev');
  assert.strictEqual(stopped, true, 'the dev server exited after Ctrl+C');
  assert.strictEqual(vscode.window.terminals.filter((t) => t.name === 'Strato dev').length, 0);
});

require('./everyPlace'); // registered last: it clicks everything the tests above left

exports.run = require('./harness').run;
