// How a cluster merges its nodes' worker logs (engine/src/platform/clusterLogs.ts), on real log files: the cursor's
// form, a tail across nodes, and reads after a cursor page by page when one node's page is cut, so that every line
// comes once, in time order, across answers. The HTTP side (three real nodes) is in multinodeReads.test.ts.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatClusterCursor, mergeNodeLogs, parseClusterCursor, type ClusterCursor, type NodeRead } from '../../engine/src/platform/clusterLogs';
import { formatLogRecord, readLogPart } from '../../engine/src/platform/workers/logFile';
import type { NodeRow } from '../../engine/src/platform/store/types';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-cluster-logs-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const A = 'naaaaaaaaaa';
const B = 'nbbbbbbbbbb';
const row = (id: string): NodeRow => ({ id, url: `http://${id}`, started_at: 0, heartbeat_at: 0, alive: true });
const T0 = Date.parse('2026-01-01T00:00:00Z');

/** A node's log with a line at each of these milliseconds after T0. */
function logOf(node: string, ms: number[]): string {
  const file = path.join(tmp, `${node}.log`);
  fs.writeFileSync(file, ms.map((m) => formatLogRecord(`w-${node}`, 'O', `${node} ${m}`, new Date(T0 + m))).join(''));
  return file;
}

test('the cursor: each node and its position, any order in, sorted out; a plain number is the answering node; anything else is not one', () => {
  const c = parseClusterCursor(`${B}:7,${A}:12`, A);
  assert.deepEqual(
    [...c!],
    [
      [B, 7],
      [A, 12],
    ],
  );
  assert.equal(formatClusterCursor(c!), `${A}:12,${B}:7`);
  assert.deepEqual([...parseClusterCursor('42', B)!], [[B, 42]]);
  for (const bad of ['', 'x', `${A}:`, `${A}:1,`, `${A}:-1`, 'n1:5', `${A}:1;${B}:2`, `${A}:99999999999999999999`])
    assert.equal(parseClusterCursor(bad, A), null, bad);
});

test('a tail is the newest lines of all nodes, in time order, each node at its end', () => {
  const fa = logOf(A, [0, 20, 40, 60]);
  const fb = logOf(B, [10, 30, 50]);
  const reads: NodeRead[] = [
    { node: row(A), part: readLogPart(fa, { tail: 3 }) },
    { node: row(B), part: readLogPart(fb, { tail: 3 }) },
  ];
  const page = mergeNodeLogs(reads, undefined, 3);
  assert.deepEqual(
    page.lines.map((l) => l.text),
    [`${A} 40`, `${B} 50`, `${A} 60`],
  );
  assert.equal(page.truncated, true);
  assert.equal(page.cursor, `${A}:${fs.statSync(fa).size},${B}:${fs.statSync(fb).size}`);
  assert.equal(page.partial, undefined);
});

test('after a cursor, a node whose page is cut holds back the newer lines of the others: every line once, in order, over several reads', () => {
  const ma = Array.from({ length: 40 }, (_, i) => i * 10); // A writes often: its pages are cut
  const mb = [5, 95, 205, 395, 500];
  const files: Record<string, string> = { [A]: logOf(A, ma), [B]: logOf(B, mb) };
  let cursor: ClusterCursor = new Map();
  const seen: string[] = [];
  for (let i = 0; i < 50; i++) {
    const reads: NodeRead[] = [A, B].map((id) => ({ node: row(id), part: readLogPart(files[id], { since: cursor.get(id) ?? 0, pageBytes: 300 }) }));
    const page = mergeNodeLogs(reads, cursor, undefined);
    const times = page.lines.map((l) => l.time);
    assert.deepEqual(times, [...times].sort(), 'in time order within an answer');
    seen.push(...page.lines.map((l) => l.text));
    cursor = parseClusterCursor(page.cursor, A)!;
    if (!page.lines.length) break;
  }
  const all = [...ma.map((m) => ({ m, t: `${A} ${m}` })), ...mb.map((m) => ({ m, t: `${B} ${m}` }))].sort((x, y) => x.m - y.m).map((x) => x.t);
  assert.deepEqual(seen, all, 'every line once, and in time order across answers');
});

test('a node that did not answer is named; the cursor keeps its place', () => {
  const fa = logOf(A, [0, 10]);
  const since: ClusterCursor = new Map([
    [A, 0],
    [B, 123],
  ]);
  const page = mergeNodeLogs(
    [
      { node: row(A), part: readLogPart(fa, { since: 0 }) },
      { node: row(B), error: 'The operation was aborted due to timeout' },
    ],
    since,
    undefined,
  );
  assert.equal(page.lines.length, 2);
  assert.deepEqual(page.partial, [{ node: B, url: `http://${B}`, error: 'The operation was aborted due to timeout' }]);
  assert.equal(page.cursor, `${A}:${fs.statSync(fa).size},${B}:123`);
});
