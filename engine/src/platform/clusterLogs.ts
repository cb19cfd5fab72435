// Worker logs of a cluster (`GET /v2/<id>/logs` on any node): each node keeps the log of the workers it runs in its
// own data dir, so the node that answers reads every live node's part (its own from disk, the others' through
// `/_cluster/logs`) and merges them in time order. The cursor names each node's byte position (`<node>:<pos>,...`),
// so a cursor from one node's answer works on any node. A follow read (`wait`) long-polls every node at once and
// answers when any of them has a line; a node that does not answer in time is named in the answer (`partial`).
import path from 'node:path';
import { LOG_LIMITS, type LogNodeMissing, type WorkerLogLine, type WorkerLogPage } from '../protocol/logs';
import { NODE_ID_PATTERN, type Cluster } from './cluster';
import { NODE_CALL_TIMEOUT_MS } from './clusterForward';
import { unavailable } from './errors';
import type { NodeRow } from './store/types';
import type { Waiters } from '../util/waiters';
import { readLogPart, type LogPart } from './workers/logFile';

const NODE_LOGS_PATH = '/_cluster/logs';
const CURSOR_ITEM = new RegExp(`^(${NODE_ID_PATTERN}):(\\d+)$`);
/** Endpoint ids name log files: a node reads no path another node's call could make up. */
const SAFE_ID = /^[A-Za-z0-9_-]+$/;

export interface LocalLogs {
  logsDir: string;
  waiters: Waiters;
}

export interface LogQuery {
  since?: number;
  tail?: number;
  wait?: number;
}

/** This node's log of an endpoint: the lines after `since` or its tail, waiting up to `wait` ms for one. */
export async function readLocalLog(d: LocalLogs, endpointId: string, q: LogQuery, signal?: AbortSignal): Promise<LogPart> {
  const file = path.join(d.logsDir, `${endpointId}.log`);
  const read = () => readLogPart(file, { since: q.since, tail: q.tail });
  let part = read();
  // Woken by the next line (or the platform closing); a caller that went away ends the wait too.
  const deadline = Date.now() + (q.wait ?? 0);
  while (!part.page.lines.length && q.wait && !signal?.aborted && Date.now() < deadline) {
    await d.waiters.wait(endpointId, Math.min(1000, deadline - Date.now()), signal);
    part = read();
  }
  return part;
}

/** A cluster cursor: each node's byte position in its own log. */
export type ClusterCursor = Map<string, number>;

/**
 * The positions a `since` names, or null when it is not a cursor. A plain number (the cursor of a platform of one
 * node) is taken as this node's position.
 */
export function parseClusterCursor(text: string, here: string): ClusterCursor | null {
  if (/^\d+$/.test(text)) return Number.isSafeInteger(Number(text)) ? new Map([[here, Number(text)]]) : null;
  const cursor: ClusterCursor = new Map();
  for (const item of text.split(',')) {
    const m = CURSOR_ITEM.exec(item);
    if (!m || !Number.isSafeInteger(Number(m[2]))) return null;
    cursor.set(m[1], Number(m[2]));
  }
  return cursor;
}

export function formatClusterCursor(c: ClusterCursor): string {
  return [...c.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([node, pos]) => `${node}:${pos}`)
    .join(',');
}

/** Answers the other nodes' reads of this node's part of an endpoint's log. */
export function serveNodeLogs(cluster: Cluster, d: LocalLogs): void {
  cluster.serve(NODE_LOGS_PATH, (body, signal) => {
    const b = (body ?? {}) as { endpointId?: unknown; since?: unknown; tail?: unknown; wait?: unknown };
    const endpointId = String(b.endpointId ?? '');
    const num = (v: unknown, max: number) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? Math.min(v, max) : undefined);
    if (!SAFE_ID.test(endpointId)) return { page: { lines: [], cursor: '0', truncated: false }, from: 0, ends: [], more: false };
    return readLocalLog(
      d,
      endpointId,
      { since: num(b.since, Number.MAX_SAFE_INTEGER), tail: num(b.tail, LOG_LIMITS.maxTail), wait: num(b.wait, LOG_LIMITS.maxWaitMs) },
      signal,
    );
  });
}

/** One node's part of a read: its page, or why it did not answer. */
export type NodeRead = { node: NodeRow; part: LogPart } | { node: NodeRow; error: string };

export interface ClusterLogsDeps extends LocalLogs {
  cluster: Cluster;
}

/** The whole service's log of an endpoint: every live node's part, merged in time order. */
export async function clusterLogs(
  d: ClusterLogsDeps,
  endpointId: string,
  q: { since?: ClusterCursor; tail?: number; wait?: number },
  signal: AbortSignal,
): Promise<WorkerLogPage> {
  const here = d.cluster.nodeId;
  let rows: NodeRow[];
  try {
    rows = await d.cluster.nodes();
  } catch (e) {
    throw unavailable(`the other nodes' logs cannot be read: the database that lists them is out of reach (${(e as Error).message}); try again in a moment`);
  }
  const nodes = rows.filter((n) => n.alive && n.id !== here);
  const self: NodeRow = { id: here, url: '', started_at: 0, heartbeat_at: 0, alive: true };
  const readOne = (node: NodeRow, wait: number | undefined, sig: AbortSignal): Promise<LogPart> => {
    const one: LogQuery = { since: q.since ? (q.since.get(node.id) ?? 0) : undefined, tail: q.tail, wait };
    if (node.id === here) return readLocalLog(d, endpointId, one, sig);
    return d.cluster.call<LogPart>(node, NODE_LOGS_PATH, { endpointId, ...one }, { timeoutMs: NODE_CALL_TIMEOUT_MS + (wait ?? 0), signal: sig });
  };
  const readAll = (from: NodeRow[]): Promise<NodeRead[]> =>
    Promise.all(
      from.map(async (node): Promise<NodeRead> => {
        try {
          return { node, part: await readOne(node, undefined, signal) };
        } catch (e) {
          return { node, error: (e as Error).message };
        }
      }),
    );
  const all = [self, ...nodes];
  let reads = await readAll(all);
  let page = mergeNodeLogs(reads, q.since, q.tail);
  if (page.lines.length || !q.wait || signal.aborted) return page;
  // Nothing new: wait on every node that answered, until one of them has a line; then read them all again, so the
  // answer holds every node's lines in order (not only those of the node that woke first).
  const answered = reads.filter((r) => 'part' in r).map((r) => r.node);
  const stop = new AbortController();
  const stopAll = () => stop.abort();
  signal.addEventListener('abort', stopAll, { once: true });
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, q.wait);
      timer.unref();
      let pending = answered.length;
      for (const node of answered)
        readOne(node, q.wait, stop.signal).then(
          (part) => {
            if (part.page.lines.length || --pending === 0) resolve();
          },
          // A node that fails while waiting is not waited on; the read after the wait names it.
          () => {
            if (--pending === 0) resolve();
          },
        );
      stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    stop.abort();
    signal.removeEventListener('abort', stopAll);
  }
  if (signal.aborted) return page;
  // A node that failed the first read is not asked again (a hung one would hold the answer twice its timeout).
  const failed = reads.filter((r) => 'error' in r);
  reads = [...(await readAll(answered)), ...failed];
  page = mergeNodeLogs(reads, q.since, q.tail);
  return page;
}

/** The time a line sorts by: its own, or the one before it on its node when it has none (a line not written as a record). */
function timed(lines: WorkerLogLine[]): Array<{ line: WorkerLogLine; t: string }> {
  let last = '';
  return lines.map((line) => ({ line, t: (last = line.time || last) }));
}

/**
 * One answer from the nodes' parts. After a cursor, a node whose page was cut (more follows) bounds the answer: lines
 * of other nodes newer than its last one wait for the next read, so lines never come out of time order between
 * answers. A tail keeps the newest `tail` lines of all.
 */
export function mergeNodeLogs(reads: NodeRead[], since: ClusterCursor | undefined, tail: number | undefined): WorkerLogPage {
  const cursor: ClusterCursor = new Map(since ?? []);
  const parts = reads.filter((r): r is { node: NodeRow; part: LogPart } => 'part' in r);
  let merged: Array<{ line: WorkerLogLine; t: string }> = [];
  let truncated = parts.some((r) => r.part.page.truncated);
  if (since === undefined) {
    for (const r of parts) {
      cursor.set(r.node.id, Number(r.part.page.cursor));
      merged.push(...timed(r.part.page.lines));
    }
    merged.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
    const keep = tail ?? LOG_LIMITS.defaultTail;
    const kept = keep === 0 ? [] : merged.slice(-keep);
    truncated ||= kept.length < merged.length;
    merged = kept;
  } else {
    const cut = parts
      .filter((r) => r.part.more && r.part.page.lines.length)
      .map((r) => timed(r.part.page.lines).at(-1)!.t)
      .sort()[0];
    for (const r of parts) {
      const lines = timed(r.part.page.lines);
      let k = cut === undefined ? lines.length : lines.findIndex((l) => l.t > cut);
      if (k < 0) k = lines.length;
      cursor.set(r.node.id, k === lines.length ? Number(r.part.page.cursor) : k > 0 ? r.part.ends[k - 1] : r.part.from);
      merged.push(...lines.slice(0, k));
    }
    merged.sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
  }
  const page: WorkerLogPage = { lines: merged.map((x) => x.line), cursor: formatClusterCursor(cursor), truncated };
  const missing: LogNodeMissing[] = reads.filter((r) => 'error' in r).map((r) => ({ node: r.node.id, url: r.node.url, error: (r as { error: string }).error }));
  if (missing.length) page.partial = missing;
  return page;
}
