// The harness of the in-host tests (index.js, everyPlace.js): waiting, clicks in the workbench through the outer test's
// Playwright (workbenchUi.ts), the commands' outcomes, shared arguments, and the run (runner.js) with its screenshot.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const { runTests, sleep, until } = require('./runner');

/** The workspace folder and the extension's test API, set by the first test. */
const state = { api: undefined, folder: undefined };

// Clicks in the workbench, performed by the outer test with Playwright (workbenchUi.ts).
let uiSeq = 0;
async function ui(request, timeoutMs = 30000) {
  const dir = process.env.STRATO_INHOST_UI;
  const n = ++uiSeq;
  // Written whole, then renamed: the other side polls the folder and must never read half a request.
  fs.writeFileSync(path.join(dir, `${n}.json.tmp`), JSON.stringify(request));
  fs.renameSync(path.join(dir, `${n}.json.tmp`), path.join(dir, `${n}.json`));
  const out = path.join(dir, `${n}.out.json`);
  await until(`the workbench to do ${JSON.stringify(request)}`, () => fs.existsSync(out), timeoutMs);
  const answer = JSON.parse(fs.readFileSync(out, 'utf8'));
  if (!answer.ok) throw new Error(`${JSON.stringify(request)} failed in the workbench: ${answer.error}`);
  return answer.text;
}

/** Every (command, place) the tests reached through the workbench, checked against package.json at the end. */
const exercised = new Set();

/**
 * Clicks `request` (the command `cmd` offered at `place`), then waits for that command's run to end; `dismiss`
 * closes what it opens (a pick, a dialog). Returns how it ended (never "failed").
 */
async function click(place, cmd, request, o = {}) {
  exercised.add(`${place}:${cmd}`);
  if (request.view) await vscode.commands.executeCommand('workbench.view.extension.strato');
  const before = state.api.commandOutcomes().length;
  await ui(request);
  if (o.then) await o.then();
  const outcome = await until(
    `${cmd} from ${place} to end`,
    async () => {
      if (o.dismiss) {
        await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
        await ui({ action: 'key', key: 'Escape' });
      }
      return state.api.commandOutcomes().slice(before)[0];
    },
    o.timeoutMs ?? 60000,
  ).catch(async (e) => {
    await ui({ action: 'screenshot', name: `timeout-${cmd}-${place.replace(/[^\w]+/g, '-')}` }).catch(() => undefined);
    throw e;
  });
  // Extension tests refuse modal dialogs: a command that reached its confirmation ends with that refusal, naming it.
  if (o.dialog && outcome.outcome === 'failed' && /refused to show dialog in tests/.test(outcome.message)) {
    assert.match(outcome.message, o.dialog);
    return outcome;
  }
  assert.notStrictEqual(outcome.outcome, 'failed', `${cmd} from ${place} failed: ${outcome.message}`);
  return outcome;
}

/** A process named like `strato deploy --preview`, recorded in the project's .strato/preview.json; `exited` says by which signal. */
function startPreviewStandIn() {
  const root = vscode.workspace.workspaceFolders[0].uri.fsPath;
  const child = require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', 'deploy', '--preview'], { stdio: 'ignore' });
  const stateFile = path.join(root, '.strato', 'preview.json');
  fs.mkdirSync(path.dirname(stateFile), { recursive: true });
  fs.writeFileSync(
    stateFile,
    JSON.stringify({ pid: child.pid, network: 'strato-preview-test', url: 'http://127.0.0.1:9', startedAt: Date.now(), endpoints: [] }),
  );
  const exited = new Promise((resolve) => child.on('exit', (_code, signal) => (fs.rmSync(stateFile, { force: true }), resolve(signal))));
  setTimeout(() => child.kill('SIGKILL'), 60000).unref();
  return { exited };
}

/** Ends the attach session that strato.attachDev started, and the dev server it started with --debug. */
async function stopAttached() {
  await until('the attach session', () => vscode.debug.activeDebugSession, 30000);
  await vscode.debug.stopDebugging();
  await until('the dev server to run with --debug', () => state.api.dev.running && state.api.dev.extraArgs.includes('--debug'), 30000);
  assert.strictEqual(await vscode.commands.executeCommand('strato.stopDev'), true);
}

const cpuArgs = () => ({ endpoint: 'cpu-stats', function: 'cpu_stats', file: 'cpu_worker.py', uri: file('cpu_worker.py').toString(), kind: 'QUEUE' });
const tickerArgs = () => ({ endpoint: 'ticker', function: 'ticks', file: 'ticker_worker.py', uri: file('ticker_worker.py').toString(), kind: 'QUEUE' });
const outputText = () => ui({ action: 'read', selector: '.part.panel .monaco-editor .view-lines' });
const escapeRe = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Shows a file with its code lenses drawn (code-server draws lenses of an editor shown late on its next change). */
async function showWithLenses(rel) {
  const ed = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file(rel)));
  await until(
    `code lenses of ${rel}`,
    async () => ((await vscode.commands.executeCommand('vscode.executeCodeLensProvider', ed.document.uri)) || []).length > 0,
  );
  await ed.edit((e) => e.insert(new vscode.Position(0, 0), ' '));
  await sleep(300);
  await vscode.commands.executeCommand('undo');
  await sleep(700);
}

const tests = [];
const test = (name, fn) => tests.push({ name, fn });
const file = (rel) => vscode.Uri.joinPath(state.folder.uri, rel);
const codeOf = (d) => (typeof d.code === 'object' && d.code ? d.code.value : d.code);

async function run() {
  const out = process.env.STRATO_INHOST_RESULTS;
  const results = await runTests(tests, out, () => !state.folder || !state.api);
  // Leave the workbench showing the Strato view and a file with code lenses, for the screenshot.
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file('cpu_worker.py'))).catch(() => undefined);
  await vscode.commands.executeCommand('workbench.view.extension.strato').catch(() => undefined);
  // The outer test takes its screenshot while this host still runs (the views die with it): ask, then wait (bounded).
  const shot = process.env.STRATO_INHOST_SCREENSHOT;
  if (shot) {
    const ed = vscode.window.activeTextEditor;
    if (ed)
      console.log(
        `screenshot editor: ${ed.document.uri.toString()} lenses: ${JSON.stringify(((await vscode.commands.executeCommand('vscode.executeCodeLensProvider', ed.document.uri)) || []).map((l) => l.command && l.command.title))}; editor.codeLens=${vscode.workspace.getConfiguration('editor').get('codeLens')}`,
      );
    // An editor shown after its lenses were first asked for renders them on its next change (seen in code-server
    // 4.100.3): one edit, undone, makes the workbench draw them for the screenshot.
    if (ed) {
      await ed.edit((e) => e.insert(new vscode.Position(0, 0), ' '));
      await sleep(500);
      await vscode.commands.executeCommand('undo');
    }
    for (const [uri, ds] of vscode.languages.getDiagnostics())
      if (ds.length) console.log(`diagnostics at the end: ${uri.toString()}: ${ds.map((d) => d.message).join(' | ')}`);
    await sleep(3000);
    fs.writeFileSync(`${shot}.ready`, '');
    await until('the screenshot', () => fs.existsSync(`${shot}.done`), 20000).catch(() => undefined);
  }
  if (results.failed.length) throw new Error(`${results.failed.length} in-host test(s) failed: ${results.failed.map((f) => f.name).join('; ')}`);
}

module.exports = {
  state,
  sleep,
  until,
  ui,
  exercised,
  click,
  startPreviewStandIn,
  stopAttached,
  cpuArgs,
  tickerArgs,
  outputText,
  escapeRe,
  showWithLenses,
  tests,
  test,
  file,
  codeOf,
  run,
};
