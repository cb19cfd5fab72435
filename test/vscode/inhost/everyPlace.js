// The in-host sweep: every command from every place package.json offers it (palette, view titles and their menus, item
// menus, inline buttons, lenses, the status bar), clicked in the real workbench; fails when an offered place was never
// clicked by any in-host test (harness.js records them).
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { click, exercised, showWithLenses, startPreviewStandIn, state, stopAttached, test, ui, until } = require('./harness');

test('every command works from every place it is offered: palette, view titles, item menus, lenses, status bar', async () => {
  const dismiss = { dismiss: true };
  const env = { action: 'itemMenu', view: 'Environments', item: 'production' };
  // Lenses: "Deploy all 4 endpoints" names them all where the environment is chosen.
  await showWithLenses('cpu_worker.py');
  await click(
    'lens',
    'strato.deployEndpoint',
    { action: 'lens', title: 'Deploy all 4 endpoints' },
    {
      ...dismiss,
      then: async () => {
        const title = await ui({ action: 'read', selector: '.quick-input-widget .quick-input-title' });
        assert.match(title, /^Deploy shop, all 4 endpoints \(cpu-stats, gpu-hello, lb-api, ticker\), to$/);
      },
    },
  );
  await click('lens', 'strato.debugEndpoint', { action: 'lens', title: 'Debug' }, dismiss);
  // View titles.
  for (const [view, title, cmd, o] of [
    ['Endpoints', 'Refresh', 'strato.refresh', {}],
    ['Endpoints', 'Deploy', 'strato.deploy', dismiss],
    ['Jobs', 'Refresh Jobs', 'strato.refreshJobs', {}],
    ['Environments', 'Refresh', 'strato.refresh', {}],
    ['Environments', 'Undeploy', 'strato.undeploy', { dialog: /Remove 4 endpoint\(s\) of shop from production\?/ }],
  ])
    await click(`title:strato.${view.toLowerCase()}`, cmd, { action: 'viewTitle', view, title }, o);
  // Items: the environment's typed client (a save dialog, dismissed), an endpoint's and a deployment's logs.
  await click('inline:strato.environments', 'strato.generateClient', { ...env, title: 'Generate TypeScript Client', inline: true }, dismiss);
  await click('menu:strato.environments', 'strato.generateClient', { ...env, title: 'Generate TypeScript Client' }, dismiss);
  await click('inline:strato.environments', 'strato.showLogs', { action: 'itemMenu', view: 'Environments', item: 'ticker', title: 'Show Logs', inline: true });
  await click('menu:strato.environments', 'strato.showLogs', { action: 'itemMenu', view: 'Environments', item: 'ticker', title: 'Show Logs' });
  await click('menu:strato.endpoints', 'strato.followLogs', { action: 'itemMenu', view: 'Endpoints', item: 'lb-api', title: 'Follow Logs' });
  // Endpoints items: Run, Debug and Deploy on a function (inline and in its menu) and on its endpoint, each reaching
  // its first question (where to run, the input, the environment), dismissed.
  await vscode.commands.executeCommand('workbench.view.extension.strato');
  await state.api.views.reveal('cpu-stats').catch(() => false);
  const fnRow = { action: 'itemMenu', view: 'Endpoints', item: 'cpu_stats' };
  const epRow = { action: 'itemMenu', view: 'Endpoints', item: 'cpu-stats' };
  await click('inline:strato.endpoints', 'strato.runEndpoint', { ...fnRow, title: 'Run Endpoint', inline: true }, dismiss);
  await click('inline:strato.endpoints', 'strato.debugEndpoint', { ...fnRow, title: 'Debug Function', inline: true }, dismiss);
  await click('inline:strato.endpoints', 'strato.deployEndpoint', { ...epRow, title: 'Deploy Endpoint', inline: true }, dismiss);
  await click('menu:strato.endpoints', 'strato.runEndpoint', { ...epRow, title: 'Run Endpoint' }, dismiss);
  await click('menu:strato.endpoints', 'strato.debugEndpoint', { ...fnRow, title: 'Debug Function' }, dismiss);
  await click('menu:strato.endpoints', 'strato.deployEndpoint', { ...fnRow, title: 'Deploy Endpoint' }, dismiss);
  await click('menu:strato.environments', 'strato.envGet', { ...env, title: 'Show Environment' });
  await click(
    'menu:strato.environments',
    'strato.undeploy',
    { ...env, title: 'Undeploy Environment' },
    { dialog: /Remove 4 endpoint\(s\) of shop from production\?/ },
  );
  // A preview started outside this window (here a process standing in for `strato deploy --preview`, which needs a
  // Docker engine: test/preview runs the real one) shows in Environments; Stop on its item sends it SIGINT.
  for (const [place, inline] of [
    ['inline:strato.environments', true],
    ['menu:strato.environments', false],
  ]) {
    const stand = startPreviewStandIn();
    await until('the preview in the Environments view', async () => {
      await state.api.views.refresh();
      return state.api.views.environments.nodes().some((n) => n.label === 'preview');
    });
    await click(place, 'strato.stopPreview', { action: 'itemMenu', view: 'Environments', item: 'preview', title: 'Stop Deploy Preview', inline });
    assert.strictEqual(await stand.exited, 'SIGINT', 'the preview process got SIGINT');
    // The item leaves the view before the next one comes: a node of the same id removed and added at once left the
    // workbench's tree on the removed one ("Data tree node not found"), and the next click found no item.
    await until('the stopped preview to leave the Environments view', async () => {
      await state.api.views.refresh();
      return !state.api.views.environments.nodes().some((n) => n.label === 'preview');
    });
    await ui({ action: 'key', key: 'Escape' });
  }
  // View title menus ("More Actions..."), and the debugger attached to a dev server it starts with --debug.
  await click('title:strato.endpoints', 'strato.newProject', { action: 'viewTitleMenu', view: 'Endpoints', title: 'New Project' }, dismiss);
  await click('title:strato.environments', 'strato.setApiKey', { action: 'viewTitleMenu', view: 'Environments', title: 'Set API Key' }, dismiss);
  await click('title:strato.endpoints', 'strato.attachDev', { action: 'viewTitleMenu', view: 'Endpoints', title: 'Attach Debugger to Dev Server' });
  await stopAttached();
  // The palette: each command, its picks answered or dismissed.
  const palette = (title, cmd, o = {}) => click('palette', cmd, { action: 'palette', title }, o);
  await palette('Strato: Stop Following Logs', 'strato.stopFollowingLogs');
  await palette('Strato: Show Logs', 'strato.showLogs', { then: () => ui({ action: 'pick', label: 'gpu-hello' }) });
  await palette('Strato: Follow Logs', 'strato.followLogs', { then: () => ui({ action: 'pick', label: 'gpu-hello' }) });
  await palette('Strato: Stop Following Logs', 'strato.stopFollowingLogs');
  await palette('Strato: Refresh', 'strato.refresh');
  await palette('Strato: Refresh Jobs', 'strato.refreshJobs');
  await palette('Strato: Show Environment', 'strato.envGet');
  await palette('Strato: Deploy', 'strato.deploy', dismiss);
  await palette('Strato: Generate TypeScript Client', 'strato.generateClient', dismiss);
  await palette('Strato: Undeploy Environment', 'strato.undeploy', { dialog: /Remove 4 endpoint\(s\) of shop from production\?/ });
  await palette('Strato: Deploy Preview', 'strato.deployPreview');
  // How far that preview gets depends on the machine (a Docker engine, its images; a CI run saw it end before the
  // next click): its terminal is stopped here, and Stop from the palette then finds a preview started elsewhere.
  await state.api.preview.stop();
  const stand = startPreviewStandIn();
  await palette('Strato: Stop Deploy Preview', 'strato.stopPreview');
  assert.strictEqual(await stand.exited, 'SIGINT', 'the preview process started elsewhere got SIGINT');
  await palette('Strato: New Project', 'strato.newProject', dismiss);
  await palette('Strato: Set API Key', 'strato.setApiKey', dismiss);
  await palette('Strato: Remove Stored API Key', 'strato.clearApiKey');
  await palette('Strato: Debug Function', 'strato.debugEndpoint', dismiss);
  await palette('Strato: Attach Debugger to Dev Server', 'strato.attachDev');
  await stopAttached();
  await palette('Strato: Start Dev Server', 'strato.startDev');
  await until('the dev server to run', () => state.api.devServer.running(), 60000);
  await palette('Strato: Dev Server Actions', 'strato.devActions', { then: () => ui({ action: 'pick', label: 'Show the dev server terminal' }) });
  await palette('Strato: Stop Dev Server', 'strato.stopDev', { timeoutMs: 30000 });
  await vscode.commands.executeCommand('strato.startDev');
  await until('the dev server to run again', () => state.api.devServer.running(), 60000);
  await click('title:strato.endpoints', 'strato.stopDev', { action: 'viewTitle', view: 'Endpoints', title: 'Stop Dev Server' });
  assert.deepStrictEqual((await vscode.commands.executeCommand('strato.envGet', 'production')).endpoints.length, 4, 'the dismissed undeploys removed nothing');

  // What package.json offers, place by place, must all have been clicked above or in the tests before.
  const pkg = vscode.extensions.getExtension('strato.strato').packageJSON.contributes;
  const hidden = new Set(pkg.menus.commandPalette.filter((m) => m.when === 'false').map((m) => m.command));
  const offered = new Set(['lens:strato.runEndpoint', 'lens:strato.debugEndpoint', 'lens:strato.deployEndpoint', 'status:strato.devActions']);
  for (const c of pkg.commands) if (!hidden.has(c.command)) offered.add(`palette:${c.command}`);
  const views = (when) => [...when.matchAll(/view == (strato\.\w+)/g)].map((m) => m[1]);
  for (const m of pkg.menus['view/title']) for (const v of views(m.when)) offered.add(`title:${v}:${m.command}`);
  for (const m of pkg.menus['view/item/context'])
    for (const v of views(m.when)) offered.add(`${(m.group || '').startsWith('inline') ? 'inline' : 'menu'}:${v}:${m.command}`);
  assert.deepStrictEqual([...offered].filter((k) => !exercised.has(k)).sort(), [], 'offered but never clicked');
  assert.deepStrictEqual(
    state.api.commandOutcomes().filter((o) => o.outcome === 'failed' && !/refused to show dialog in tests/.test(o.message)),
    [],
  );
});
