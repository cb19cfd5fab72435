// The extension in a REAL VS Code: code-server (installed from npm by scripts/install-code-server.sh) serving a
// workspace made by `strato init`, opened in Debian's chromium through playwright-core, a real embedded platform.
// The assertions run inside the extension host (inhost/index.js); this file sets up, waits (bounded), screenshots.
import { CHROMIUM_ARGS, findChromium } from '../helpers/chromium';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { REPO, runCli } from '../helpers/cli';
import { startTestPlatform, type TestPlatform } from '../helpers/platform';
import { dirArgs, installCodeServer, startCodeServer, userDataDir, type CodeServer } from './codeServer';
import { serveUiRequests } from './workbenchUi';

/** A streaming queue function beside the template's: the Jobs view streams, cancels and retries its jobs. */
const TICKER_PY = `import time

from strato import CpuInstanceType, Endpoint


@Endpoint(name="ticker", cpu=CpuInstanceType.CPU3C_1_2)
def ticks(n: int = 3, delay: float = 0.2):
    """Count to n, one chunk every delay seconds."""
    for i in range(n):
        time.sleep(delay)
        yield {"tick": i}
`;

const RESULTS_DIR = path.join(REPO, 'test-results');
let tmp: string;
let platform: TestPlatform | undefined;
let server: CodeServer | undefined;
let browser: Browser | undefined;
let port = 0;
let ws = '';
const timings: Record<string, number> = {};

/** The rendered colour of the first editor token with each text, plus the editor's plain foreground colour. */
async function colourOfTokens(page: import('playwright-core').Page, texts: string[]): Promise<Record<string, string>> {
  // A string, because this file is compiled without the DOM library; it runs in the page.
  const script = `(() => {
    const wanted = ${JSON.stringify(texts)};
    const out = {};
    const lines = document.querySelector('.monaco-editor .view-lines');
    if (lines) out.plain = getComputedStyle(lines).color;
    for (const span of document.querySelectorAll('.monaco-editor .view-line span span')) {
      const t = (span.textContent || '').trim();
      if (wanted.includes(t) && !out[t]) out[t] = getComputedStyle(span).color;
    }
    return out;
  })()`;
  return page.evaluate<Record<string, string>>(script).catch(() => ({}));
}

before(async () => {
  let t = Date.now();
  const codeServer = installCodeServer();
  timings.installMs = Date.now() - t;

  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-vscode-'));
  const init = await runCli(['init', 'shop'], { cwd: tmp }); // also builds dist/ (node esbuild.mjs)
  assert.equal(init.code, 0, init.stderr);
  ws = path.join(tmp, 'shop');
  fs.writeFileSync(path.join(ws, 'ticker_worker.py'), TICKER_PY);
  platform = await startTestPlatform();

  const userData = userDataDir(tmp, { 'security.workspace.trust.enabled': false });
  t = Date.now();
  server = await startCodeServer(codeServer, dirArgs(tmp, userData, path.join(tmp, 'extensions')), ['--disable-workspace-trust'], {
    ...process.env,
    STRATO_API_URL: platform.url,
    STRATO_API_KEY: platform.key,
    STRATO_INHOST_RESULTS: path.join(tmp, 'inhost-results.json'),
    STRATO_INHOST_SCREENSHOT: path.join(tmp, 'screenshot'),
    STRATO_INHOST_UI: path.join(tmp, 'ui'),
    STRATO_DATA_DIR: path.join(tmp, 'strato-data'), // never touch the user's own local platform
  });
  port = server.port;
  timings.serverReadyMs = Date.now() - t;
});

after(async () => {
  await browser?.close().catch(() => undefined);
  await server?.stop();
  await platform?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`vscode timings: ${JSON.stringify(timings)}`);
});

test(
  'in a real VS Code: activation, diagnostics, code lenses, views, deploy, run, jobs, logs, env get, typed client, dev server; every command from every place',
  { timeout: 420_000 },
  async () => {
    const t = Date.now();
    browser = await chromium.launch({
      executablePath: findChromium(),
      headless: true,
      args: [...CHROMIUM_ARGS], // a fresh temporary profile each run
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.route('**/*', (r) => (['127.0.0.1', 'localhost', '[::1]'].includes(new URL(r.request().url()).hostname) ? r.continue() : r.abort()));
    const hostLog: string[] = [];
    let exit!: (code: number | 'timeout') => void;
    const exited = new Promise<number | 'timeout'>((r) => (exit = r));
    await page.exposeFunction('codeAutomationLog', (_type: string, args: unknown[]) => {
      const line = (args ?? []).map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ');
      hostLog.push(line);
      if (process.env.STRATO_TEST_VERBOSE) console.log(`[ext-host] ${line}`);
    });
    await page.exposeFunction('codeAutomationExit', (code: number) => exit(code));
    const remote = (p: string) => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload = [
      ['extensionDevelopmentPath', remote(REPO)],
      ['extensionTestsPath', remote(path.join(__dirname, 'inhost', 'index.js'))],
      ['skipWelcome', 'true'],
    ];
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}&payload=${encodeURIComponent(JSON.stringify(payload))}`, {
      waitUntil: 'domcontentloaded',
      timeout: 60_000,
    });
    const timer = setTimeout(() => exit('timeout'), 360_000);
    // The in-host run asks for the screenshot (a .ready file) before it ends, while the views still have data.
    const shot = path.join(tmp, 'screenshot');
    let done = false;
    let lensTitles: string[] = [];
    let tokenColours: Record<string, string> = {};
    void exited.then(() => (done = true));
    // The in-host tests click through the workbench: buttons, menus, lenses, the palette and the status bar.
    const serving = serveUiRequests(
      page,
      path.join(tmp, 'ui'),
      RESULTS_DIR,
      () => done,
      (l) => hostLog.push(l),
    );
    while (!done && !fs.existsSync(`${shot}.ready`)) await new Promise((r) => setTimeout(r, 200));
    if (!done) {
      fs.mkdirSync(RESULTS_DIR, { recursive: true });
      await page.screenshot({ path: path.join(RESULTS_DIR, 'vscode-workbench.png') }).catch(() => undefined);
      await page
        .locator('.codelens-decoration a')
        .first()
        .waitFor({ timeout: 5000 })
        .catch(() => undefined);
      lensTitles = await page
        .locator('.codelens-decoration a')
        .allTextContents()
        .catch(() => []);
      tokenColours = await colourOfTokens(page, ['CpuInstanceType', 'CPU3C_1_2', 'def']);
      fs.writeFileSync(`${shot}.done`, '');
    }
    const code = await exited;
    clearTimeout(timer);
    await serving;
    timings.inHostMs = Date.now() - t;
    const resultsFile = path.join(tmp, 'inhost-results.json');
    const results = fs.existsSync(resultsFile) ? JSON.parse(fs.readFileSync(resultsFile, 'utf8')) : undefined;
    // The whole log stays beside the screenshots; the message leads with what failed (CI shows its first lines).
    fs.mkdirSync(RESULTS_DIR, { recursive: true });
    fs.writeFileSync(path.join(RESULTS_DIR, 'vscode-host.log'), hostLog.join('\n'));
    const failed = (results?.failed ?? []).map((f: { name: string; error: string }) => `${f.name}: ${f.error.split('\n').slice(0, 4).join(' | ')}`);
    const detail = [
      `exit ${code}; in-host tests passed: ${results?.passed.length ?? 0}, failed: ${failed.length}, finished: ${results?.finished ?? false}`,
      ...failed,
      `extension host log (the end; all of it in test-results/vscode-host.log):`,
      ...hostLog.slice(-40),
    ].join('\n');
    assert.equal(code, 0, detail);
    assert.ok(results, detail);
    assert.deepEqual(results.failed, [], detail);
    assert.equal(results.passed.length, 15, detail);
    assert.deepEqual(lensTitles.sort(), ['Debug', 'Deploy all 4 endpoints', '▶ Run cpu-stats'], 'the workbench draws the code lenses above cpu_stats');
    // syntaxes/: the injection grammar colours the catalog enum (support.class / variable.other.enummember), which Python's
    // grammar alone leaves in the editor's plain foreground colour.
    const plain = tokenColours.plain;
    assert.ok(plain && tokenColours.CpuInstanceType && tokenColours.CPU3C_1_2, JSON.stringify(tokenColours));
    assert.notEqual(tokenColours.CpuInstanceType, plain, JSON.stringify(tokenColours));
    assert.notEqual(tokenColours.CPU3C_1_2, plain, JSON.stringify(tokenColours));
  },
);
