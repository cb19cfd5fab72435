// What both in-host suites (index.js through harness.js, and vsix.js) run on: bounded waits and a runner that bounds
// each test, names the step a stuck test was at, and writes the results after every test, so the outer test reads
// what ran even when the extension host never ends.
const fs = require('fs');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What the running test waits for now: named when a test runs past its bound. */
let step = '';

/** Polls `fn` until it returns something truthy; each try is bounded too (a call into VS Code may never answer). */
async function until(what, fn, timeoutMs = 30000) {
  step = what;
  const deadline = Date.now() + timeoutMs;
  const timedOut = () => new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  while (Date.now() < deadline) {
    const attempt = Promise.resolve().then(fn);
    attempt.catch(() => undefined); // a try that fails after the wait gave up on it is not an unhandled rejection
    let timer;
    const bound = new Promise((_, reject) => (timer = setTimeout(() => reject(timedOut()), deadline - Date.now())));
    const last = await Promise.race([attempt, bound]).finally(() => clearTimeout(timer));
    if (last) return last;
    await sleep(150);
  }
  throw timedOut();
}

/** The most one test may take; past it the test fails naming the step it was at, and the run stops there. */
const TEST_LIMIT_MS = 150_000;

/** Runs `tests` ({name, fn}) in order; `stop()` after a failure ends the run early. The saved results say `finished` at the end. */
async function runTests(tests, resultsFile, stop) {
  const results = { passed: [], failed: [], finished: false };
  // Whole, then renamed: the outer test polls the file and must never read half of it.
  const save = () => {
    if (!resultsFile) return;
    fs.writeFileSync(`${resultsFile}.tmp`, JSON.stringify(results, null, 2));
    fs.renameSync(`${resultsFile}.tmp`, resultsFile);
  };
  for (const t of tests) {
    const t0 = Date.now();
    let timer;
    let overLimit;
    const limit = new Promise((_, reject) => {
      timer = setTimeout(() => reject((overLimit = new Error(`the test did not end within ${TEST_LIMIT_MS} ms; it was waiting for ${step}`))), TEST_LIMIT_MS);
    });
    try {
      step = '(the test itself)';
      const running = Promise.resolve().then(t.fn);
      running.catch(() => undefined); // a test that fails after its limit is not an unhandled rejection
      await Promise.race([running, limit]);
      results.passed.push({ name: t.name, ms: Date.now() - t0 });
      console.log(`ok - ${t.name} (${Date.now() - t0} ms)`);
    } catch (e) {
      results.failed.push({ name: t.name, error: String((e && e.stack) || e) });
      console.log(`not ok - ${t.name}\n${(e && e.stack) || e}`);
      if (stop() || (overLimit && e === overLimit)) break;
    } finally {
      clearTimeout(timer);
      save();
    }
  }
  results.finished = true;
  save();
  return results;
}

module.exports = { sleep, until, runTests };
