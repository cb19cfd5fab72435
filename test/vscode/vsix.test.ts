// The packaged extension in a REAL, clean VS Code: `npm run package` makes the .vsix, code-server installs it into an
// empty extensions folder, and a workspace made by `strato init` opens in Restricted Mode (Workspace Trust on). The
// assertions run inside the extension host (inhost/vsix.js, started by the harness extension, because a host started
// with extensionTestsPath is always trusted); this file answers its requests: click Trust, take the screenshots
// (walkthrough, debug stop: kept in test-results/), read the notifications.
import { CHROMIUM_ARGS, findChromium } from '../helpers/chromium';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO, runCli } from '../helpers/cli';
import { debugpyPython } from '../helpers/dap';
import { startTestPlatform, type TestPlatform } from '../helpers/platform';
import { dirArgs, installCodeServer, startCodeServer, userDataDir, type CodeServer } from './codeServer';

const RESULTS_DIR = path.join(REPO, 'test-results');
const CALC_WORKER = `from strato import CpuInstanceType, Endpoint


@Endpoint(name="calc", cpu=CpuInstanceType.CPU3C_1_2)
def calc(numbers: list) -> dict:
    from mathutil import total

    doubled = [n * 2 for n in numbers]
    return {"total": total(doubled)}
`;
const MATHUTIL = 'def total(values):\n    result = sum(values)\n    return result\n';

let tmp: string;
let port = 0;
let ws = '';
let harness = '';
let platform: TestPlatform | undefined;
let server: CodeServer | undefined;
let browser: Browser | undefined;
const timings: Record<string, number> = {};

/** The environment without the test runner's own STRATO_* variables (the stored key must be what deploys). */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('STRATO_')) delete env[k];
  return { ...env, ...extra };
}

/** What the in-host tests ask for. */
async function answer(page: Page, req: { kind: string; name?: string; contains?: string }): Promise<Record<string, unknown>> {
  if (req.kind === 'trust') {
    const button = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
    await button.click({ timeout: 20_000 });
    return { ok: true };
  }
  if (req.kind === 'notifications') {
    const texts = await Promise.all(
      ['.notifications-center', '.notifications-toasts'].map((sel) =>
        page
          .locator(sel)
          .innerText({ timeout: 2000 })
          .catch(() => ''),
      ),
    );
    return { text: texts.join('\n') };
  }
  if (req.kind === 'screenshot') {
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    const file = path.join(RESULTS_DIR, `vscode-${req.name}.png`);
    await page.screenshot({ path: file });
    const body = req.contains ? await page.locator('body').innerText() : '';
    return { file, contains: req.contains ? body.includes(req.contains) : undefined };
  }
  throw new Error(`unknown request ${req.kind}`);
}

before(async () => {
  let t = Date.now();
  const codeServer = installCodeServer();
  timings.installMs = Date.now() - t;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-vsix-'));

  t = Date.now();
  const vsix = path.join(tmp, 'strato.vsix');
  const pack = spawnSync('npm', ['run', 'package', '--', '--out', vsix], { cwd: REPO, encoding: 'utf8', timeout: 300_000 });
  assert.equal(pack.status, 0, `npm run package failed:\n${pack.stdout}\n${pack.stderr}`);
  timings.packageMs = Date.now() - t;
  timings.vsixBytes = fs.statSync(vsix).size;

  const init = await runCli(['init', 'shop'], { cwd: tmp });
  assert.equal(init.code, 0, init.stderr);
  ws = path.join(tmp, 'shop');
  fs.writeFileSync(path.join(ws, 'calc_worker.py'), CALC_WORKER);
  fs.writeFileSync(path.join(ws, 'mathutil.py'), MATHUTIL);
  fs.mkdirSync(path.join(tmp, 'new-projects'));
  const python = debugpyPython();
  platform = await startTestPlatform({ python }); // dev --debug's workers import debugpy

  const userData = userDataDir(tmp, {
    'security.workspace.trust.enabled': true,
    'security.workspace.trust.startupPrompt': 'never',
    'strato.pythonPath': python,
  });
  const extensions = path.join(tmp, 'extensions');
  const dirs = dirArgs(tmp, userData, extensions);
  const installed = spawnSync(codeServer, [...dirs, '--install-extension', vsix], {
    encoding: 'utf8',
    timeout: 120_000,
    env: cleanEnv({}),
  });
  assert.equal(installed.status, 0, `code-server --install-extension failed:\n${installed.stdout}\n${installed.stderr}`);

  t = Date.now();
  harness = path.join(tmp, 'harness');
  fs.mkdirSync(harness);
  server = await startCodeServer(
    codeServer,
    dirs,
    [],
    cleanEnv({
      STRATO_API_URL: platform.url, // no STRATO_API_KEY: the deploy must use the stored one
      STRATO_TEST_PLATFORM_KEY: platform.key,
      STRATO_HARNESS_DIR: harness,
      STRATO_INHOST_RESULTS: path.join(tmp, 'inhost-results.json'),
      STRATO_EXTENSIONS_DIR: extensions,
      STRATO_NEW_PROJECT_PARENT: path.join(tmp, 'new-projects'),
      STRATO_DATA_DIR: path.join(tmp, 'strato-data'),
    }),
  );
  port = server.port;
  timings.serverReadyMs = Date.now() - t;
});

after(async () => {
  await browser?.close().catch(() => undefined);
  await server?.stop();
  await platform?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`vsix timings: ${JSON.stringify(timings)}`);
});

test(
  'the .vsix in a clean VS Code: Restricted Mode, trust, the stored key and a deploy, debugging (launch and attach), tasks, New Project, walkthrough',
  { timeout: 420_000 },
  async () => {
    const t = Date.now();
    browser = await chromium.launch({ executablePath: findChromium(), headless: true, args: [...CHROMIUM_ARGS] });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.route('**/*', (r) => (['127.0.0.1', 'localhost', '[::1]'].includes(new URL(r.request().url()).hostname) ? r.continue() : r.abort()));
    const payload = [
      ['extensionDevelopmentPath', `vscode-remote://127.0.0.1:${port}${path.join(REPO, 'test', 'vscode', 'harness')}`],
      ['skipWelcome', 'true'],
    ];
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`, {
      waitUntil: 'domcontentloaded',
      timeout: 60_000,
    });
    const resultsFile = path.join(tmp, 'inhost-results.json');
    const answered = new Set<string>();
    const shots: Record<string, { file: string; contains?: boolean }> = {};
    const deadline = Date.now() + 360_000;
    type Results = { passed: Array<{ name: string; ms: number }>; failed: unknown[]; finished: boolean };
    // Rewritten after each in-host test; `finished` once the run ended.
    const read = (): Results | undefined => (fs.existsSync(resultsFile) ? (JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as Results) : undefined);
    while (!read()?.finished && Date.now() < deadline) {
      for (const f of fs.readdirSync(harness).filter((n) => n.endsWith('.request.json') && !answered.has(n))) {
        answered.add(f);
        const req = JSON.parse(fs.readFileSync(path.join(harness, f), 'utf8')) as { kind: string; name?: string };
        const reply = await answer(page, req).catch((e: Error) => ({ error: e.message }));
        if (req.kind === 'screenshot' && req.name) shots[req.name] = reply as { file: string; contains?: boolean };
        // Whole, then renamed: the harness polls for the file and must never read half an answer.
        const done = path.join(harness, f.replace('.request.json', '.done.json'));
        fs.writeFileSync(`${done}.tmp`, JSON.stringify(reply));
        fs.renameSync(`${done}.tmp`, done);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    timings.inHostMs = Date.now() - t;
    const results = read();
    assert.ok(
      results?.finished,
      `the in-host tests did not finish within the time limit; so far: ${JSON.stringify(results)}\n${server?.log.slice(-30).join('')}`,
    );
    console.log(`in-host: ${results.passed.map((p) => `${p.name} (${p.ms} ms)`).join('\n  ')}`);
    const detail = JSON.stringify(results, null, 2);
    assert.deepEqual(results.failed, [], detail);
    assert.equal(results.passed.length, 9, detail);
    assert.ok(fs.existsSync(shots['debug-stop']?.file), 'a screenshot of the debug stop');
    assert.ok(fs.existsSync(shots.walkthrough?.file), 'a screenshot of the walkthrough');
    assert.equal(shots.walkthrough.contains, true, 'the walkthrough is on screen');
  },
);
