// Clicks in the real VS Code workbench for the in-host tests: they write a request file (inhost/index.js `ui()`), this
// side performs it with Playwright as a user would (a view's title button, a tree item's context menu or inline
// button, a code lens, the command palette, the status bar, a quick pick item, a key) and writes the answer beside it.
import fs from 'node:fs';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';

export type UiRequest =
  | { action: 'viewTitle'; view: string; title: string }
  /** An entry of a view's "More Actions..." menu (title entries outside the navigation group). */
  | { action: 'viewTitleMenu'; view: string; title: string }
  /** `detail`: text the row must also hold (its description), when several rows have the label. */
  | { action: 'itemMenu'; view: string; item: string; detail?: string; title: string; inline?: boolean }
  | { action: 'lens'; title: string }
  | { action: 'palette'; title: string }
  | { action: 'statusBar'; text: string }
  | { action: 'pick'; label: string }
  | { action: 'key'; key: string }
  /** Replaces the text of the open input box (quick input). */
  | { action: 'input'; text: string }
  | { action: 'read'; selector: string }
  | { action: 'has'; selector: string; text?: string }
  | { action: 'screenshot'; name: string };

export interface UiAnswer {
  ok: boolean;
  text?: string;
  error?: string;
}

const TIMEOUT = 10_000;

/** A view's pane in the Strato side bar, by its name. */
function pane(page: Page, view: string): Locator {
  return page.locator('.pane', { has: page.locator('.pane-header h3.title', { hasText: new RegExp(`^${view}$`, 'i') }) }).first();
}

/** A tree row by its label (exact) and optionally other text it holds, in a view. */
function row(page: Page, view: string, item: string, detail?: string): Locator {
  const label = page.locator('.label-name', { hasText: new RegExp(`^${item.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) });
  return pane(page, view)
    .locator('.monaco-list-row', { has: label, ...(detail ? { hasText: detail } : {}) })
    .first();
}

/**
 * The row, scrolled into the view's viewport: trees render only the rows in view, and a view keeps its scroll position
 * while rows are added above (the Jobs view puts the newest job first).
 */
async function scrolledTo(page: Page, view: string, target: Locator): Promise<Locator> {
  const body = pane(page, view).locator('.pane-body');
  for (const dy of [0, -100_000, 300, 300, 300, 300, 300, 300]) {
    if (dy) {
      await body.hover({ timeout: TIMEOUT });
      await page.mouse.wheel(0, dy);
    }
    if (
      await target.waitFor({ timeout: dy ? 1000 : 3000 }).then(
        () => true,
        () => false,
      )
    )
      return target;
  }
  return target; // the caller's action then fails with the locator's own message
}

/** Opens the command palette with F1 from the editor (a terminal that just closed may hold the focus otherwise). */
async function openPalette(page: Page, input: Locator): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    await page.keyboard.press('Escape');
    await page
      .locator('.monaco-editor .view-lines')
      .first()
      .click({ timeout: 2000 })
      .catch(() => undefined);
    await page.keyboard.press('F1');
    if (
      await input.waitFor({ timeout: 3000 }).then(
        () => true,
        () => attempt >= 2,
      )
    )
      break;
  }
  await input.waitFor({ timeout: TIMEOUT });
}

async function perform(page: Page, r: UiRequest, resultsDir: string): Promise<UiAnswer> {
  switch (r.action) {
    case 'viewTitle': {
      const header = pane(page, r.view).locator('.pane-header');
      await header.hover({ timeout: TIMEOUT });
      await header.locator(`.actions .action-label[aria-label*="${r.title}"]`).first().click({ timeout: TIMEOUT });
      return { ok: true };
    }
    case 'viewTitleMenu': {
      const header = pane(page, r.view).locator('.pane-header');
      await header.hover({ timeout: TIMEOUT });
      await header.locator('.actions .action-label[aria-label^="More Actions"]').first().click({ timeout: TIMEOUT });
      const item = page.locator('.monaco-menu .action-item', { hasText: r.title }).first();
      await item.hover({ timeout: TIMEOUT });
      await page.waitForTimeout(250);
      await item.click({ timeout: TIMEOUT });
      return { ok: true };
    }
    case 'itemMenu': {
      const target = await scrolledTo(page, r.view, row(page, r.view, r.item, r.detail));
      if (r.inline) {
        await target.hover({ timeout: TIMEOUT });
        await target.locator(`.actions .action-label[aria-label*="${r.title}"]`).first().click({ timeout: TIMEOUT });
      } else {
        await target.click({ button: 'right', timeout: TIMEOUT });
        // Point at the entry first and let the menu settle: a click during its opening is lost.
        const item = page.locator('.monaco-menu .action-item', { hasText: r.title }).first();
        await item.hover({ timeout: TIMEOUT });
        await page.waitForTimeout(250);
        await item.click({ timeout: TIMEOUT });
      }
      return { ok: true };
    }
    case 'lens':
      await page.locator('.codelens-decoration a', { hasText: r.title }).first().click({ timeout: TIMEOUT });
      return { ok: true };
    case 'palette': {
      // The row whose label is the title itself (a longer title may match the typed text too).
      const exact = new RegExp(`^${r.title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
      const row = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: exact }) }).first();
      const input = page.locator('.quick-input-widget input');
      // The list is filtered as the text is typed: on a loaded machine (a preview building its image) that takes seconds.
      const deadline = Date.now() + 3 * TIMEOUT;
      // A terminal whose process ends meanwhile (the one `Deploy Preview` opened, say) takes the focus and closes the
      // palette: it is then opened again, as a person would; while it stays open, the row is waited for.
      for (let open = false; ;) {
        if (!open) {
          await openPalette(page, input);
          await input.fill(`>${r.title}`);
        }
        try {
          await row.click({ timeout: Math.max(500, Math.min(3000, deadline - Date.now())) });
          return { ok: true };
        } catch (e) {
          if (Date.now() >= deadline) throw e;
          open = await input.isVisible();
        }
      }
    }
    case 'statusBar':
      await page.locator('.statusbar-item', { hasText: r.text }).first().click({ timeout: TIMEOUT });
      return { ok: true };
    case 'pick':
      await page.locator('.quick-input-list .monaco-list-row', { hasText: r.label }).first().click({ timeout: TIMEOUT });
      return { ok: true };
    case 'key':
      await page.keyboard.press(r.key);
      return { ok: true };
    case 'input':
      await page.locator('.quick-input-widget input').first().fill(r.text, { timeout: TIMEOUT });
      return { ok: true };
    case 'read': {
      const l = page.locator(r.selector).first();
      await l.waitFor({ timeout: TIMEOUT });
      return { ok: true, text: await l.innerText() };
    }
    case 'has': {
      const n = await page.locator(r.selector, r.text ? { hasText: r.text } : {}).count();
      return { ok: true, text: String(n) };
    }
    case 'screenshot':
      fs.mkdirSync(resultsDir, { recursive: true });
      await page.screenshot({ path: path.join(resultsDir, `${r.name}.png`) });
      return { ok: true, text: path.join(resultsDir, `${r.name}.png`) };
  }
}

/** Serves the requests under `dir` (`<n>.json` -> `<n>.out.json`) until `done()` says to stop. */
export async function serveUiRequests(page: Page, dir: string, resultsDir: string, done: () => boolean, log: (line: string) => void): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const served = new Set<string>();
  while (!done()) {
    for (const f of fs.readdirSync(dir).filter((n) => /^\d+\.json$/.test(n) && !served.has(n))) {
      served.add(f);
      const req = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as UiRequest;
      let answer: UiAnswer;
      try {
        answer = await perform(page, req, resultsDir);
      } catch (e) {
        answer = { ok: false, error: (e as Error).message.split('\n')[0] };
        await page.screenshot({ path: path.join(resultsDir, `ui-failed-${f.replace('.json', '')}.png`) }).catch(() => undefined);
      }
      log(`ui ${JSON.stringify(req)} -> ${JSON.stringify(answer).slice(0, 300)}`);
      // Whole, then renamed, as the requests are: the in-host side polls for this file.
      const out = path.join(dir, f.replace('.json', '.out.json'));
      fs.writeFileSync(`${out}.tmp`, JSON.stringify(answer));
      fs.renameSync(`${out}.tmp`, out);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
