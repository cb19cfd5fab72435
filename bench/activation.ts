// Activation of the extension's own code (target under 50 ms): `require` of dist/extension.js plus `activate()` until
// it returns, in a Python workspace that does not use Strato (what onLanguage:python costs everyone) and in a Strato
// project (the language server then starts after activation returns). Each run is a fresh Node process with a small
// stand-in for the `vscode` module (the API calls activation makes, doing nothing), so this times our code, not
// VS Code's. Beside it, in the same run: loading all three bundles at once (what activation read when everything was
// one bundle), the language client's and the build's bundles alone (read later, when needed), and the bundle sizes.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median } from './report';

const repo = path.resolve(__dirname, '..');
const dist = path.join(repo, 'dist');
const RUNS = Number(process.env.RUNS ?? 11);
const TARGET_MS = 50;

/** Run in a child: a `vscode` stand-in, then the timed steps; prints {requireMs, activateMs} as JSON. */
const CHILD = String.raw`
const Module = require('module');
const path = require('path');
const noop = () => {};
const disposable = { dispose: noop };
const event = () => disposable;
class EventEmitter { constructor() { this.event = event; } fire() {} dispose() {} }
const channel = () => ({ appendLine: noop, append: noop, clear: noop, show: noop, dispose: noop, info: noop, warn: noop, error: noop, debug: noop, trace: noop });
const uri = (p) => ({ scheme: 'file', fsPath: p, path: p, toString: () => 'file://' + p });
const folders = JSON.parse(process.env.WS).map((p, index) => ({ uri: uri(p), name: path.basename(p), index }));
const vscode = {
  window: {
    createOutputChannel: channel,
    createTreeView: () => ({ visible: false, onDidChangeVisibility: event, dispose: noop, reveal: async () => {} }),
    createStatusBarItem: () => ({ show: noop, hide: noop, dispose: noop }),
    onDidCloseTerminal: event,
    showErrorMessage: async () => undefined,
    showInformationMessage: async () => undefined,
  },
  workspace: {
    workspaceFolders: folders,
    textDocuments: [],
    createFileSystemWatcher: () => ({ onDidCreate: event, onDidChange: event, onDidDelete: event, dispose: noop }),
    onDidChangeWorkspaceFolders: event,
    onDidChangeConfiguration: event,
    onDidOpenTextDocument: event,
    onDidGrantWorkspaceTrust: event,
    isTrusted: true,
    getConfiguration: () => ({ get: (_k, d) => d, inspect: () => undefined }),
    asRelativePath: (u) => String(u),
  },
  commands: { registerCommand: () => disposable, executeCommand: async () => undefined },
  debug: {
    registerDebugConfigurationProvider: () => disposable,
    registerDebugAdapterDescriptorFactory: () => disposable,
    onDidStartDebugSession: event,
    onDidTerminateDebugSession: event,
  },
  tasks: { registerTaskProvider: () => disposable },
  DebugConfigurationProviderTriggerKind: { Initial: 1, Dynamic: 2 },
  EventEmitter,
  ThemeIcon: class {},
  ThemeColor: class {},
  MarkdownString: class { constructor(v) { this.value = v; } },
  StatusBarAlignment: { Left: 1, Right: 2 },
  TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
  ProgressLocation: { Notification: 15 },
  Uri: { file: uri, parse: (s) => uri(s.replace(/^file:\/\//, '')) },
  env: {},
};
// The language client's bundle extends vscode classes as it loads: anything else is an empty class.
const stand = new Proxy(vscode, { get: (t, k) => (k in t ? t[k] : typeof k === 'string' && k !== 'then' ? (t[k] = class {}) : undefined) });
const load = Module._load;
Module._load = function (request, ...rest) { return request === 'vscode' ? stand : load.call(this, request, ...rest); };
const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;
(async () => {
  const out = {};
  let t = process.hrtime.bigint();
  for (const f of JSON.parse(process.env.BUNDLES)) require(f);
  out.requireMs = ms(t);
  if (process.env.ACTIVATE) {
    const memento = { get: (_k, d) => d, update: async () => {}, keys: () => [] };
    const secrets = { get: async () => undefined, store: async () => {}, delete: async () => {}, onDidChange: event };
    const context = { subscriptions: [], extension: {}, extensionPath: process.env.DIST, workspaceState: memento, globalState: memento, secrets };
    t = process.hrtime.bigint();
    await require(JSON.parse(process.env.BUNDLES)[0]).activate(context);
    out.activateMs = ms(t);
  }
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
`;

function measure(bundles: string[], o: { workspace?: string; activate?: boolean }): { requireMs: number; activateMs?: number } {
  const req: number[] = [];
  const act: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync(process.execPath, ['-e', CHILD], {
      cwd: os.tmpdir(),
      env: {
        ...process.env,
        WS: JSON.stringify(o.workspace ? [o.workspace] : []),
        BUNDLES: JSON.stringify(bundles.map((b) => path.join(dist, b))),
        ACTIVATE: o.activate ? '1' : '',
        DIST: dist,
      },
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`measuring ${bundles.join(', ')} failed:\n${r.stderr}`);
    const m = JSON.parse(r.stdout) as { requireMs: number; activateMs?: number };
    req.push(m.requireMs);
    if (m.activateMs !== undefined) act.push(m.activateMs);
  }
  return { requireMs: median(req), activateMs: act.length ? median(act) : undefined };
}

function main(): void {
  execFileSync(process.execPath, [path.join(repo, 'esbuild.mjs')], { cwd: repo });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'strato-bench-activation-'));
  try {
    // A Python workspace without Strato, and the template project.
    const plain = path.join(dir, 'plain');
    mkdirSync(plain);
    writeFileSync(path.join(plain, 'main.py'), 'import json\n');
    writeFileSync(path.join(plain, 'pyproject.toml'), '[project]\nname = "plain"\n');
    execFileSync(process.execPath, [path.join(dist, 'cli.js'), 'init', 'shop'], { cwd: dir, stdio: 'pipe' });
    const shop = path.join(dir, 'shop');

    const rows: Array<[string, number, string]> = [];
    const inPlain = measure(['extension.js'], { workspace: plain, activate: true });
    const inShop = measure(['extension.js'], { workspace: shop, activate: true });
    const all = measure(['extension.js', 'extension-lsp.js', 'extension-heavy.js'], {});
    const lsp = measure(['extension-lsp.js'], {});
    const heavy = measure(['extension-heavy.js'], {});
    const verdict = (ms: number) => `target < ${TARGET_MS} ms: ${ms < TARGET_MS ? 'met' : 'MISSED'}`;
    rows.push([
      'activation, a Python workspace without Strato (require + activate)',
      inPlain.requireMs + inPlain.activateMs!,
      verdict(inPlain.requireMs + inPlain.activateMs!),
    ]);
    rows.push(['  of which activate()', inPlain.activateMs!, '']);
    rows.push([
      'activation, the strato init project (require + activate)',
      inShop.requireMs + inShop.activateMs!,
      verdict(inShop.requireMs + inShop.activateMs!),
    ]);
    rows.push(['  of which activate()', inShop.activateMs!, '']);
    rows.push(['baseline: require of all three bundles at once (one eager bundle)', all.requireMs, '']);
    rows.push(['later, when the language server starts: require extension-lsp.js', lsp.requireMs, '']);
    rows.push(['later, on the first deploy or typed client: require extension-heavy.js', heavy.requireMs, '']);
    console.log(`median of ${RUNS} runs each, a fresh Node process each with a stand-in vscode module (our code only)`);
    for (const [what, ms, note] of rows) console.log(`${what.padEnd(74)} ${ms.toFixed(1).padStart(7)} ms  ${note}`);
    const eager = inShop.requireMs + inShop.activateMs!;
    console.log(`activation in a Strato project against loading everything at once: ${(eager / all.requireMs).toFixed(2)}x`);
    console.log('bundle sizes:');
    for (const f of ['extension.js', 'extension-lsp.js', 'extension-heavy.js', 'server.js'])
      console.log(`  dist/${f.padEnd(20)} ${(statSync(path.join(dist, f)).size / 1024).toFixed(0).padStart(6)} KB`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
