// `GET /v2/<endpoint_id>/logs`: an endpoint's worker log (queue-based or load-balanced), as the last `tail` lines or
// the lines after a cursor, with `wait` to long-poll for the next ones (follow). Logs may hold what the code printed,
// its inputs and tracebacks: reading them needs a key that may see the app and read its secrets (not an invoke key).
// In a cluster, the answer holds the lines of every live node's workers (clusterLogs.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { maySee, mayReadSecrets, refusal, type Principal } from './auth';
import { queryParams, sendError, sendJson, sendNotAllowed } from './http';
import { LOG_LIMITS } from '../protocol/logs';
import type { Cluster } from './cluster';
import { clusterLogs, parseClusterCursor, readLocalLog, type ClusterCursor } from './clusterLogs';
import type { Waiters } from '../util/waiters';

export interface LogsApiDeps {
  logsDir: string;
  waiters: Waiters;
  /** Nodes sharing the store: every live node's workers' lines are read (clusterLogs.ts). */
  cluster?: Cluster;
}

/** A non-negative integer query parameter within `max`, undefined when absent, or the 400 sentence. */
function intParam(q: URLSearchParams, name: string, max: number, what: string): number | undefined | { error: string } {
  if (!q.has(name)) return undefined;
  const v = q.get(name) ?? '';
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!(n <= max)) return { error: `${name} must be ${what} from 0 to ${max}, got "${v}"` };
  return n;
}

export async function serveLogs(d: LogsApiDeps, req: IncomingMessage, res: ServerResponse, endpointId: string, app: string, p: Principal): Promise<void> {
  if (!maySee(p, app)) return sendError(res, 403, refusal.see(p, app));
  if (!mayReadSecrets(p)) return sendError(res, 403, refusal.secret(p, `the logs of endpoint ${endpointId}`));
  if (req.method !== 'GET') return sendNotAllowed(res, 'GET', `logs takes GET, not ${req.method}`);
  const q = queryParams(req.url ?? '');
  const cluster = d.cluster;
  let since: number | ClusterCursor | undefined | { error: string };
  if (cluster && q.has('since')) {
    since = parseClusterCursor(q.get('since') ?? '', cluster.nodeId) ?? {
      error: `since must be the cursor of a previous answer (as it was given), got "${q.get('since')}"`,
    };
  } else since = intParam(q, 'since', Number.MAX_SAFE_INTEGER, 'the cursor of a previous answer (an integer)');
  const tail = intParam(q, 'tail', LOG_LIMITS.maxTail, 'a number of lines');
  const wait = intParam(q, 'wait', LOG_LIMITS.maxWaitMs, 'an integer number of ms');
  for (const v of [since, tail, wait]) if (v && typeof v === 'object' && 'error' in v) return sendError(res, 400, v.error);
  if (wait !== undefined && since === undefined)
    return sendError(res, 400, 'wait needs since: pass the cursor of a previous answer to wait for the lines after it');
  // A client that went away ends a wait.
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const o = { tail: tail as number | undefined, wait: wait as number | undefined };
  if (cluster) return sendJson(res, 200, await clusterLogs({ ...d, cluster }, endpointId, { ...o, since: since as ClusterCursor | undefined }, gone.signal));
  const part = await readLocalLog(d, endpointId, { ...o, since: since as number | undefined }, gone.signal);
  return sendJson(res, 200, part.page);
}
