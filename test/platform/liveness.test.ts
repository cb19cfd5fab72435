// The heartbeat watchdog's judgement of a late worker (workers/liveness.ts) on real processes: one whose CPU time
// grows while its heartbeats are late is computing (a long call of C code holding the GIL); one that uses none is
// stuck, however late the watchdog took its first sample (a loaded machine's tick), and is replaced.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { judgeLate } from '../../engine/src/platform/workers/liveness';
import { processStat } from '../../engine/src/util/procfs';
import type { Worker } from '../../engine/src/platform/workers/worker';

const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

const HUNG_AFTER = 6000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function workerOf(child: ChildProcess): Worker {
  return { id: `w${child.pid}`, lastSeen: 0, jobs: new Set([{}]), inFlight: 0, process: child } as unknown as Worker;
}

test('a stopped worker is stuck even when the first CPU sample came late; a spinning one is computing', async () => {
  const stopped = spawn('python3', ['-c', 'while True: pass']);
  const spinning = spawn('python3', ['-c', 'while True: pass']);
  children.push(stopped, spinning);
  await sleep(300); // both have used CPU: the stopped one up to its stop, as a worker that had just started a job
  stopped.kill('SIGSTOP');
  await sleep(100);
  const a = workerOf(stopped);
  const b = workerOf(spinning);
  // The first samples come late in the first half-window (a loaded machine's watchdog tick), then 300 ms later.
  for (const w of [a, b]) assert.equal(judgeLate(w, 0.8 * HUNG_AFTER, HUNG_AFTER), undefined);
  // The spinning one runs on: wait until its CPU time has grown (a loaded machine may not run it for a while).
  const grown = processStat(spinning.pid!)!.cpuMs + 20;
  for (let i = 0; i < 100 && processStat(spinning.pid!)!.cpuMs < grown; i++) await sleep(100);
  for (const w of [a, b]) assert.equal(judgeLate(w, 0.85 * HUNG_AFTER, HUNG_AFTER), undefined);
  const stuck = judgeLate(a, HUNG_AFTER + 1, HUNG_AFTER);
  assert.equal(stuck?.computing, false, 'the stopped process used no CPU since the watchdog first looked');
  assert.match((stuck as { why: string }).why, /its process used no CPU meanwhile/);
  assert.deepEqual(judgeLate(b, HUNG_AFTER + 1, HUNG_AFTER), { computing: true, first: true });
});
