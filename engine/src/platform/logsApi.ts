// `GET /v2/<endpoint_id>/logs`: an endpoint's worker log (queue-based or load-balanced), as the last `tail` lines or
// the lines after a cursor, with `wait` to long-poll for the next ones (follow). Logs may hold what the code printed,
// its inputs and tracebacks: reading them needs a key that may see the app and read its secrets (not an invoke key).
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { maySee, mayReadSecrets, refusal, type Principal } from './auth';
import { queryParams, sendError, sendJson } from './http';
import { LOG_LIMITS } from '../protocol/logs';
import { readLog, type LogWaiters } from './workers/logFile';

export interface LogsApiDeps {
  logsDir: string;
  waiters: LogWaiters;
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
  if (req.method !== 'GET') return sendError(res, 404, `logs takes GET, not ${req.method}`);
  const q = queryParams(req.url ?? '');
  const since = intParam(q, 'since', Number.MAX_SAFE_INTEGER, 'the cursor of a previous answer (an integer)');
  const tail = intParam(q, 'tail', LOG_LIMITS.maxTail, 'a number of lines');
  const wait = intParam(q, 'wait', LOG_LIMITS.maxWaitMs, 'an integer number of ms');
  for (const v of [since, tail, wait]) if (typeof v === 'object') return sendError(res, 400, v.error);
  if (wait !== undefined && since === undefined)
    return sendError(res, 400, 'wait needs since: pass the cursor of a previous answer to wait for the lines after it');
  const file = path.join(d.logsDir, `${endpointId}.log`);
  const read = () => readLog(file, { since: since as number | undefined, tail: tail as number | undefined });
  let page = read();
  if (!page.lines.length && wait) {
    let closed = false;
    res.once('close', () => (closed = true));
    // Woken by the next line (or the platform closing); a client that went away ends the wait too.
    const deadline = Date.now() + (wait as number);
    while (!page.lines.length && !closed && Date.now() < deadline) {
      await d.waiters.wait(endpointId, Math.min(1000, deadline - Date.now()));
      page = read();
    }
  }
  return sendJson(res, 200, page);
}
