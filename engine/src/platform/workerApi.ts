// The `/_worker/<endpoint_id>/...` protocol of docs/worker-protocol.md: take (long-poll), done (with an
// optional next take), stream, heartbeat, ready. A worker authenticates with its own token; an unknown or
// retired worker gets 401/404 and exits.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { limits } from './options';
import { PlatformError } from './errors';
import { pathOf, readBody, sendError, sendJson, sendRaw } from './http';
import type { Dispatcher } from './jobs/dispatch';
import type { Job } from './jobs/job';
import type { JobEngine } from './jobs/jobEngine';
import type { RawChunk } from './jobs/streamChunks';
import type { Scheduler } from './workers/scheduler';
import { isBusy, type Worker } from './workers/worker';
import { isJsonText } from '../util/jsonText';

export interface WorkerApiDeps {
  engine: JobEngine;
  dispatch: Dispatcher;
  scheduler: Scheduler;
  log(line: string): void;
}

const MAX_WAIT_MS = 60_000;

export interface WorkerBody {
  workerId?: unknown;
  outputJson?: unknown;
  max?: unknown;
  waitMs?: unknown;
  jobId?: unknown;
  output?: unknown;
  error?: unknown;
  take?: unknown;
  chunks?: unknown;
  jobs?: unknown;
  port?: unknown;
}

export function workerApi(d: WorkerApiDeps) {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts = pathOf(req.url ?? '/').split('/'); // ['', '_worker', endpointId, op]
    const endpointId = decodeURIComponent(parts[2] ?? '');
    const op = parts[3] ?? '';
    if (req.method !== 'POST' || parts.length !== 4) return sendError(res, 404, 'unknown worker route');
    // The token is checked before a byte of the body is read: without one, nobody makes the platform hold a body.
    const w = authenticate(d, req, endpointId);
    if (!w) {
      req.resume();
      return sendError(res, 401, 'unknown worker or wrong worker token; this worker is not wanted and should exit');
    }
    let body: WorkerBody;
    try {
      const parsed: unknown = JSON.parse((await readBody(req, limits.workerMessageBytes, 'a worker request')).toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return sendError(res, 400, 'the worker request must be a JSON object');
      body = parsed as WorkerBody;
    } catch (e) {
      if (e instanceof PlatformError) return sendError(res, e.status, e.message);
      return sendError(res, 400, `the worker request is not valid JSON: ${(e as Error).message}`);
    }
    if (body.workerId !== undefined && body.workerId !== w.id) return sendError(res, 401, 'the worker id does not match the worker token');
    w.lastSeen = Date.now();
    switch (op) {
      case 'take':
        return take(d, w, body, res);
      case 'done':
        return done(d, w, body, res);
      case 'stream': {
        const chunks = Array.isArray(body.chunks) ? (body.chunks as RawChunk[]) : [];
        const ok = encodable(() => d.dispatch.addChunks(w, jobIdOf(body), chunks), 'a streamed value');
        return sendRaw(res, 200, ok ? '{"cancelled":false}' : '{"cancelled":true}');
      }
      case 'heartbeat': {
        const ids = Array.isArray(body.jobs) ? body.jobs.filter((id): id is string => typeof id === 'string') : [];
        const v = d.dispatch.heartbeat(w, ids);
        sendJson(res, 200, { cancel: v.cancel });
        if (v.replace) d.scheduler.replace(w, v.replace);
        return;
      }
      case 'ready': {
        const port = typeof body.port === 'number' && body.port > 0 ? body.port : undefined;
        d.scheduler.ready(w, port);
        return sendRaw(res, 200, '{}');
      }
      default:
        return sendError(res, 404, `unknown worker operation "${op}"`);
    }
  };
}

/** The worker whose token the request carries (compared in constant time over SHA-256 digests), or null. */
export function authenticate(d: WorkerApiDeps, req: IncomingMessage, endpointId: string): Worker | null {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (!m) return null;
  const presented = digest(m[1]);
  for (const w of d.engine.workers.values()) {
    if (w.endpointId !== endpointId || w.phase === 'exited') continue;
    if (timingSafeEqual(presented, tokenDigest(w))) return w;
  }
  return null;
}

const digests = new WeakMap<Worker, Buffer>();
const digest = (s: string) => createHash('sha256').update(s).digest();
function tokenDigest(w: Worker): Buffer {
  let d = digests.get(w);
  if (!d) digests.set(w, (d = digest(w.token)));
  return d;
}

/** Jobs handed to a worker, as `take` answers them and the job channel sends them. */
export function jobsJson(jobs: Job[], extra = ''): string {
  let s = '{"jobs":[';
  for (let i = 0; i < jobs.length; i++) s += `${i ? ',' : ''}{"id":"${jobs[i].id}","input":${jobs[i].input}}`;
  return `${s}]${extra}}`;
}

async function take(d: WorkerApiDeps, w: Worker, body: WorkerBody, res: ServerResponse): Promise<void> {
  const max = typeof body.max === 'number' && body.max > 0 ? Math.floor(body.max) : 1;
  const waitMs = Math.min(MAX_WAIT_MS, typeof body.waitMs === 'number' && body.waitMs > 0 ? body.waitMs : 0);
  if (w.phase === 'draining' || w.phase === 'stopping') {
    // Retiring: no new work. Once it runs nothing, tell it to exit.
    if (!isBusy(w)) return sendError(res, 404, 'this worker is retired and should exit');
    await new Promise((r) => setTimeout(r, Math.min(waitMs, 1000)));
    return sendRaw(res, 200, '{"jobs":[]}');
  }
  const jobs = await d.dispatch.take(w, max, waitMs, (cb) => res.on('close', cb));
  if (res.destroyed) {
    // The long-poll's connection went away after jobs were handed out: they go back to the queue.
    for (const job of jobs) d.dispatch.requeue(job);
    return;
  }
  sendRaw(res, 200, jobsJson(jobs));
}

function done(d: WorkerApiDeps, w: Worker, body: WorkerBody, res: ServerResponse): void {
  const owned = recordDone(d, w, body);
  const n = typeof body.take === 'number' && body.take > 0 ? Math.floor(body.take) : 0;
  const next = n > 0 && w.phase === 'ready' ? d.dispatch.takeNow(w, n) : [];
  sendRaw(res, 200, jobsJson(next, owned ? '' : ',"ignored":true'));
}

/**
 * Records a job's result from a `done` body (HTTP or job channel); false when the worker no longer owns the job.
 * Throws a PlatformError (400) for a body that names no job or holds a value too deeply nested to encode.
 */
export function recordDone(d: WorkerApiDeps, w: Worker, body: WorkerBody): boolean {
  const jobId = jobIdOf(body);
  let error: string | null = null;
  if (body.error !== undefined && body.error !== null)
    error = typeof body.error === 'string' ? body.error : encodable(() => JSON.stringify(body.error), 'the error');
  let output: string | null = null;
  if (error === null) {
    // `outputJson`: the handler's own JSON text, kept byte for byte (a parse and re-encode would round big integers,
    // turn 2.0 into 2 and -0.0 into 0). `output` is the older form of the protocol.
    if (typeof body.outputJson === 'string') {
      if (isJsonText(body.outputJson)) output = body.outputJson;
      else error = 'the worker sent an output that is not JSON text';
    } else output = encodable(() => JSON.stringify(body.output === undefined ? null : body.output), 'the output');
  }
  return d.dispatch.complete(w, jobId, output, error);
}

/** The job a `done` or `stream` body is about. */
function jobIdOf(body: WorkerBody): string {
  if (typeof body.jobId !== 'string') throw new PlatformError('BAD_REQUEST', 'the worker message needs "jobId", the id of its job as a string');
  return body.jobId;
}

/** `encode()`, with a value nested past what JSON.stringify's recursion takes refused as the worker's error. */
function encodable<T>(encode: () => T, what: string): T {
  try {
    return encode();
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw new PlatformError('BAD_REQUEST', `the worker sent ${what} nested too deeply to encode as JSON`);
  }
}
