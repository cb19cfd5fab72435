// /docs of the dev server rendered in a real Chromium (Debian's, driven by playwright-core): every operation
// and its summary (the docstring's first line) is on the page. The screenshot is kept in test-results/.
import { CHROMIUM_ARGS, findChromium } from '../helpers/chromium';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { REPO, runCli } from '../helpers/cli';
import { startServing, type DevProcess } from '../helpers/devServer';
import { startTestPlatform, type TestPlatform } from '../helpers/platform';

let tmp: string;
let p: TestPlatform;
let dev: DevProcess;
let browser: Browser;

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-docs-'));
  p = await startTestPlatform();
  assert.equal((await runCli(['init', 'docsapp'], { cwd: tmp })).code, 0);
  dev = await startServing(['--host', '127.0.0.1', '--port', String(40000 + Math.floor(Math.random() * 10000)), '--no-reload'], {
    cwd: path.join(tmp, 'docsapp'),
    env: { STRATO_API_URL: p.url, STRATO_API_KEY: p.key },
  });
  browser = await chromium.launch({
    executablePath: findChromium(),
    args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP rebind.example 127.0.0.1'],
  });
});
after(async () => {
  await browser?.close();
  await dev?.stop();
  await p?.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('Swagger UI lists every operation with its docstring summary', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
  await page.route(/^(?!http:\/\/127\.0\.0\.1)/, (route) => route.abort());
  await page.goto(`http://127.0.0.1:${dev.port}/docs`);
  await page.waitForSelector('.opblock-summary', { timeout: 20000 });
  const ops = await page.$$eval('.opblock-summary', (els) =>
    els.map((e) => ({
      method: e.querySelector('.opblock-summary-method')?.textContent?.trim(),
      path: e.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? e.querySelector('.opblock-summary-path')?.textContent?.trim(),
      summary: e.querySelector('.opblock-summary-description')?.textContent?.trim(),
    })),
  );
  const byPath = Object.fromEntries(ops.map((o) => [`${o.method} ${o.path}`, o.summary]));
  assert.deepEqual(byPath, {
    'POST /cpu_worker/runsync': 'Compute simple statistics of a list of numbers.',
    'POST /gpu_worker/runsync': 'Echo a prompt back, as a stand-in for model inference on a GPU.',
    'GET /lb_worker/health': 'Report that the service is up.',
    'POST /lb_worker/process': 'Process a piece of text and return it with its length.',
  });
  const out = path.join(REPO, 'test-results');
  mkdirSync(out, { recursive: true });
  const shot = path.join(out, 'dev-docs.png');
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(existsSync(shot) && statSync(shot).size > 10_000);
});

test('/docs calls its own server from the page; a rebound DNS name is refused', async () => {
  const page = await browser.newPage();
  await page.route(/^(?!http:\/\/(127\.0\.0\.1|rebind\.example|evil\.example))/, (route) => route.abort());
  await page.goto(`http://127.0.0.1:${dev.port}/docs`);
  const same = await page.evaluate(async () => {
    const r = await fetch('/cpu_worker/runsync', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input: { numbers: [1, 3] } }),
    });
    return { status: r.status, body: (await r.json()) as { output: unknown } };
  });
  assert.equal(same.status, 200, JSON.stringify(same.body));
  assert.deepEqual(same.body.output, { count: 2, mean: 2, min: 1, max: 3 });

  // DNS rebinding: a name the attacker controls now resolves to 127.0.0.1; the Host header gives it away.
  const rebound = await page.goto(`http://rebind.example:${dev.port}/docs`);
  assert.equal(rebound?.status(), 403);
  assert.match(await rebound!.text(), /does not name this machine/);

  await page.close();
});
