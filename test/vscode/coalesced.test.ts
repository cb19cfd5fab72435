// The views' refresh (client/src/coalesced.ts): overlapping calls share runs and every call ends. Two overlapping
// refreshes once handed each other a new run forever (each call's follow-up started the next), so a click on
// Refresh never ended while the views kept re-reading the control plane.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Coalesced } from '../../client/src/coalesced';

/** A task whose runs end when the test says; `runs` counts them. */
function gatedTask() {
  const gates: Array<() => void> = [];
  let runs = 0;
  const task = () => {
    const n = ++runs;
    return new Promise<number>((resolve) => gates.push(() => resolve(n)));
  };
  const openNext = async () => {
    while (gates.length === 0) await new Promise((r) => setImmediate(r));
    gates.shift()!();
  };
  return { task, openNext, runs: () => runs };
}

test('a call during a run gets one more run after it, shared by every call that came meanwhile; then all end', async () => {
  const g = gatedTask();
  const c = new Coalesced(g.task);
  const a = c.run();
  const b = c.run();
  const d = c.run();
  assert.equal(c.running, true);
  await g.openNext();
  assert.equal(await a, 1);
  await g.openNext();
  assert.deepEqual(await Promise.all([b, d]), [2, 2]);
  // Nothing more runs: the two overlapping calls do not start runs for each other.
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  assert.equal(g.runs(), 2);
  assert.equal(c.running, false);
});

test('the first caller awaiting its run and a caller arriving meanwhile both end after two runs', async () => {
  const g = gatedTask();
  const c = new Coalesced(g.task);
  const ended: string[] = [];
  const a = c.run().then(() => ended.push('a'));
  const b = c.run().then(() => ended.push('b'));
  await g.openNext();
  await g.openNext();
  await Promise.all([a, b]);
  assert.deepEqual(ended, ['a', 'b']);
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  assert.equal(g.runs(), 2);
});

test('a failed run rejects its callers; the next run still happens for those who came meanwhile', async () => {
  let runs = 0;
  let fail!: (e: Error) => void;
  const c = new Coalesced(() => (++runs === 1 ? new Promise<number>((_, reject) => (fail = reject)) : Promise.resolve(runs)));
  const a = c.run();
  const b = c.run();
  fail(new Error('the control plane did not answer'));
  await assert.rejects(a, /did not answer/);
  assert.equal(await b, 2);
  assert.equal(c.running, false);
  assert.equal(await c.run(), 3, 'a later call starts a run of its own');
});
