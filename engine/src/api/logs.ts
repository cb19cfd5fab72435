// Client of an endpoint's worker logs (`GET {base_url}/v2/<endpoint_id>/logs`): the last lines, the lines after a
// cursor, and follow (long-poll for what comes next); and the traceback a failed job left in them.
import { LOG_LIMITS, type WorkerLogLine, type WorkerLogPage } from '../protocol/logs';
import { UserError } from '../util/errors';
import { errorText, send, type ApiTarget } from './http';

export class LogsClient {
  constructor(private readonly target: ApiTarget) {}

  /** The last `tail` lines (the platform's default without it), or those after `since`, waiting up to `waitMs` for one. */
  async read(endpointId: string, o: { since?: string; tail?: number; waitMs?: number } = {}): Promise<WorkerLogPage> {
    const q = new URLSearchParams();
    if (o.since !== undefined) q.set('since', o.since);
    if (o.tail !== undefined) q.set('tail', String(o.tail));
    if (o.waitMs !== undefined) q.set('wait', String(o.waitMs));
    const r = await send(this.target, 'GET', `/v2/${encodeURIComponent(endpointId)}/logs${q.size ? `?${q}` : ''}`, {
      timeoutMs: (o.waitMs ?? 0) + 30_000,
    });
    if (r.status === 404) throw new UserError(`endpoint ${endpointId} does not exist any more (removed or undeployed), so it has no logs to read`);
    if (r.status !== 200) throw new UserError(`reading the logs failed (HTTP ${r.status}): ${errorText(r.body)}`);
    return r.body as WorkerLogPage;
  }

  /**
   * The last `tail` lines, then every new line as it comes, page by page, until `signal` aborts (a page already asked
   * for still arrives) or the endpoint goes away (a UserError). `onPage` sees every answer, empty ones too (a cluster
   * says in them which nodes did not answer).
   */
  async *follow(
    endpointId: string,
    o: { tail?: number; signal?: AbortSignal; waitMs?: number; onPage?: (page: WorkerLogPage) => void } = {},
  ): AsyncGenerator<WorkerLogPage> {
    let page = await this.read(endpointId, { tail: o.tail });
    o.onPage?.(page);
    yield page;
    while (!o.signal?.aborted) {
      page = await this.read(endpointId, { since: page.cursor, waitMs: o.waitMs ?? 25_000 });
      if (o.signal?.aborted) return;
      o.onPage?.(page);
      if (page.lines.length) yield page;
    }
  }
}

/**
 * What a page of a cluster lacks, in words: the nodes that did not answer (their workers' lines come with a later read);
 * null when every node answered.
 */
export function missingNodesNote(page: WorkerLogPage): string | null {
  if (!page.partial?.length) return null;
  const nodes = page.partial.map((m) => `${m.node} at ${m.url} (${m.error})`).join(', ');
  return `lines of the workers on ${page.partial.length === 1 ? 'node' : 'nodes'} ${nodes} are missing: it did not answer in time; a later read has them once it answers`;
}

/** How many lines a failure search reads back: a traceback is rarely longer. */
export const FAILURE_SEARCH_TAIL = Math.min(2000, LOG_LIMITS.maxTail);

/**
 * The lines a failed job left: the runtime's `job <id> failed: ...` line and the traceback it writes after it, from the
 * same worker (strato/_invoke.py log_failure). Empty when the log does not hold them (any more).
 */
export function jobFailureLines(lines: readonly WorkerLogLine[], jobId: string): WorkerLogLine[] {
  let start = lines.length - 1;
  while (start >= 0 && !(lines[start].level === 'error' && lines[start].text.includes(`job ${jobId} failed:`))) start--;
  if (start < 0) return [];
  const worker = lines[start].worker;
  const out = [lines[start]];
  for (const l of lines.slice(start + 1)) {
    if (l.worker !== worker) continue; // another worker's lines interleave
    if (l.level !== 'error' || /\bjob \S+ failed:/.test(l.text)) break;
    out.push(l);
  }
  return out;
}
