// The jobs API of queue-based endpoints: every route under `/v2/<endpoint_id>/`, with the states, limits and
// error bodies of decisions.md. `/run` answers once the job is durable (its group commit is done); `/runsync`
// answers with the result as soon as the job ends, or with the job as it is (durable) when `wait` elapses. In a
// cluster, `/health` (serviceHealth.ts) and `/purge-queue` answer for the whole service (every live node adds its own
// part), the queue bound is the service's (queueBound.ts), and a `/runsync` job handed to another node's workers is
// waited for there.
import { jsonDepth, longestInteger, memberText } from '../util/jsonText';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mayInvoke, refusal } from './auth';
import type { KeyRing } from './controlPlane/keys';
import type { ControlPlane } from './controlPlane/service';
import { PlatformError } from './errors';
import { pathOf, queryParams, readBody, sendError, sendJson, sendNotAllowed, sendRaw } from './http';
import { Job, TERMINAL } from './jobs/job';
import type { JobEngine } from './jobs/jobEngine';
import { limits } from './options';
import type { JobWriter } from './store/jobWriter';
import { serveLogs, type LogsApiDeps } from './logsApi';
import type { Cluster } from './cluster';
import { FORWARDED_HEADER, NODE_CALL_TIMEOUT_MS } from './clusterForward';
import { serviceHealth, type Health, type HealthDeps } from './serviceHealth';
import type { JobPlace, PlatformStore } from './store/types';
import type { QueueBound } from './queueBound';
import type { WorkSharing } from './workSharing';

export interface JobsApiDeps {
  keys: KeyRing;
  cp: ControlPlane;
  engine: JobEngine;
  writer: JobWriter;
  /** Rows of jobs another node owns, or hands to this one (clusters). */
  store: Pick<PlatformStore, 'getJob' | 'getJobPlace'>;
  /** The service's health (serviceHealth.ts). */
  health: HealthDeps;
  streamWaitMs: number;
  logs: LogsApiDeps;
  /** Nodes sharing the store: a job another live node owns is answered there. */
  cluster?: Cluster;
  /** Clusters: the queue bound of the whole service. */
  queueBound?: QueueBound;
  /** Clusters: work sharing, whose hand-offs to this node may bring the job a request asks for. */
  sharing?: Pick<WorkSharing, 'arriving'>;
  log(line: string): void;
}

type Route = 'run' | 'runsync' | 'status' | 'stream' | 'cancel' | 'retry' | 'purge-queue' | 'health';
const METHOD: Record<Route, 'GET' | 'POST'> = {
  run: 'POST',
  runsync: 'POST',
  status: 'GET',
  stream: 'GET',
  cancel: 'POST',
  retry: 'POST',
  'purge-queue': 'POST',
  health: 'GET',
};
const WITH_JOB = new Set<Route>(['status', 'stream', 'cancel', 'retry']);

/** The route by which a node asks the others to purge their part of an endpoint's queue (`{endpointId}`). */
const NODE_PURGE_PATH = '/_cluster/purge';
/** A node asks the one it handed a `/runsync` job to for the job once it ends (`{jobId, ms}`; null: not there). */
const NODE_WAIT_PATH = '/_cluster/wait';

export function jobsApi(d: JobsApiDeps) {
  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const parts = pathOf(url).split('/'); // ['', 'v2', endpointId, route, jobId?]
    const auth = d.keys.authenticate(req);
    if ('refused' in auth) return sendError(res, 401, auth.refused);
    const endpointId = decodeURIComponent(parts[2] ?? '');
    const route = parts[3] as Route;
    const ep = d.cp.endpoint(endpointId) ?? (await d.cp.endpointFresh(endpointId));
    if (!ep) return sendError(res, 404, `endpoint ${endpointId} does not exist; check the endpoint id in the URL`);
    const app = d.cp.app(ep.appId)?.name ?? '';
    // Worker logs, of either kind of endpoint, with their own access rule (logsApi.ts).
    if (parts[3] === 'logs' && parts.length === 4) return await serveLogs(d.logs, req, res, endpointId, app, auth.principal);
    if (!mayInvoke(auth.principal, app)) return sendError(res, 403, refusal.invoke(auth.principal, app, endpointId));
    if (ep.config.kind !== 'QUEUE') return sendError(res, 404, `endpoint ${endpointId} is load-balanced: call its routes under /lb/${endpointId}/`);
    if (!Object.hasOwn(METHOD, route) || parts.length !== (WITH_JOB.has(route) ? 5 : 4) || (WITH_JOB.has(route) && !parts[4])) {
      return sendError(
        res,
        404,
        `no such route ${pathOf(url)}; see the jobs API: run, runsync, status/<id>, stream/<id>, cancel/<id>, retry/<id>, purge-queue, health, logs`,
      );
    }
    if (req.method !== METHOD[route]) {
      // A known path asked with another method: 405 naming the one it takes, as load-balanced routes answer.
      return sendNotAllowed(res, METHOD[route], `${route} takes ${METHOD[route]}, not ${req.method}`);
    }
    try {
      if (route === 'run' || route === 'runsync') return await submit(d, req, res, endpointId, route);
      if (route === 'purge-queue') return sendJson(res, 200, { removed: await purge(d, endpointId), status: 'completed' });
      if (route === 'health') return sendJson(res, 200, await health(d, endpointId));
      const jobId = decodeURIComponent(parts[4]);
      if (d.cluster && !d.engine.jobs.has(jobId)) await d.sharing?.arriving(endpointId);
      if (d.cluster && !d.engine.jobs.has(jobId) && !d.engine.ended.has(jobId) && (await d.cluster.route(jobId, req, res))) return;
      let job = await d.engine.get(endpointId, jobId);
      if (job?.handingOff && d.cluster) {
        // The job is being handed to another node (workSharing.ts): answer once it is settled, here or there.
        const moving = job;
        await new Promise<void>((settled) => moving.watch((j) => !j.handingOff, 5000, settled));
        if (!d.engine.jobs.has(jobId) && (await d.cluster.route(jobId, req, res))) return;
        job = await d.engine.get(endpointId, jobId);
      }
      if (!job && d.cluster) {
        const place = await d.store.getJobPlace(jobId);
        // The node that forwarded this request took the job over meanwhile (a hand-off): its row says how it is.
        const from = String(req.headers[FORWARDED_HEADER] ?? '').split(',');
        if (route === 'status' && place && !TERMINAL.has(place.status) && place.endpoint_id === endpointId && from.includes(place.owner)) {
          const row = await d.store.getJob(jobId);
          if (row) return sendRaw(res, 200, Job.fromRow(row).toJson());
        }
        job = await arriving(d, d.cluster, endpointId, place);
      }
      if (!job) return sendError(res, 404, `job ${jobId} does not exist on this endpoint or its results have expired`);
      if (route === 'status') return status(d, req, res, job);
      if (route === 'stream') {
        const chunks = await d.engine.takeChunks(job, d.streamWaitMs);
        return sendRaw(res, 200, `[${chunks.join(',')}]`);
      }
      if (route === 'cancel') {
        if (d.engine.cancel(job) === 'finished')
          return sendError(res, 409, `job ${job.id} already ended (${job.status}); only queued or running jobs can be cancelled`);
        return sendJson(res, 200, { id: job.id, status: 'CANCELLED' });
      }
      if (d.engine.retry(job) === 'not-retryable') return sendError(res, 409, `job ${job.id} is ${job.status}; only FAILED or TIMED_OUT jobs can be retried`);
      await d.writer.durable();
      return sendJson(res, 200, { id: job.id, status: 'IN_QUEUE' });
    } catch (e) {
      if (e instanceof PlatformError) return sendError(res, e.status, e.message);
      d.log(`strato platform: ${req.method} ${url} failed: ${(e as Error).stack ?? String(e)}`);
      return sendError(res, 500, `the platform failed to handle this request (${(e as Error).message}); see the platform log`);
    }
  };
}

async function submit(d: JobsApiDeps, req: IncomingMessage, res: ServerResponse, endpointId: string, route: 'run' | 'runsync'): Promise<void> {
  let waitMs = limits.waitDefaultMs;
  const q = queryParams(req.url ?? '');
  const waitGiven = q.has('wait');
  if (route === 'runsync' && waitGiven) {
    const w = q.get('wait') ?? '';
    waitMs = /^\d+$/.test(w) ? Number(w) : NaN;
    if (!(waitMs >= limits.waitMinMs && waitMs <= limits.waitMaxMs))
      return sendError(res, 400, `wait must be an integer number of ms from ${limits.waitMinMs} to ${limits.waitMaxMs}, got "${w}"`);
  }
  const limit = route === 'run' ? limits.runBodyBytes : limits.runsyncBodyBytes;
  const body = await readBody(req, limit, `/${route}`);
  const input = extractInput(body);
  if (typeof input !== 'string') return sendError(res, 400, input.error);
  const outage = d.writer.outage;
  if (outage) throw outage;
  const admitted = d.queueBound?.admit(endpointId) ?? true;
  const job = (admitted === true || (admitted !== false && (await admitted))) && d.engine.submit(endpointId, input, route, waitGiven);
  if (!job) return sendError(res, 429, `endpoint ${endpointId} has too many queued jobs; retry later or raise its workers max`);
  if (route === 'run') {
    await durableOrRunning(d, job);
    return sendRaw(res, 200, `{"id":"${job.id}","status":"IN_QUEUE"}`);
  }
  const until = Date.now() + waitMs;
  // A job that ends here is answered inside its end (Job.watch), before the rest of that turn's work.
  await new Promise<void>((settled) =>
    d.engine.whenEnded(job, waitMs, () => {
      if (job.ended && !job.handedTo) sendRaw(res, 200, job.toJson());
      settled();
    }),
  );
  if (res.headersSent) return;
  if (job.handedTo && d.cluster) return sendRaw(res, 200, await followed(d.cluster, job, until));
  // Removed while this request waited: its id would answer 404 from now on, so it is not given as running.
  if (!job.ended && job.storeState === 'gone')
    return sendError(res, 404, `job ${job.id} was removed while this request waited for it (its endpoint was deleted, or its queue purged)`);
  // A finished job's output is in this answer; one that is still waiting must be durable before its id is given.
  if (!job.ended) await durableOrRunning(d, job);
  return sendRaw(res, 200, job.toJson());
}

/**
 * Waits for the job's row to commit. When the commit fails (the database went out of reach after the job was taken),
 * a job no worker has yet is taken back and the error (503) answered, so that the client's retry is its only run; a
 * job already running is answered as taken: it will run anyway, and its row is written when the database is back.
 */
async function durableOrRunning(d: JobsApiDeps, job: Job): Promise<void> {
  try {
    await d.writer.durable();
  } catch (e) {
    if (d.engine.withdraw(job)) throw e;
  }
}

/** The JSON text of `input` exactly as the client wrote it (never re-serialised), or why the body is not acceptable. */
function extractInput(body: Buffer): string | { error: string } {
  let parsed: unknown;
  const text = body.toString('utf8');
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { error: `the body is not valid JSON (${(e as Error).message}); send {"input": {...}}` };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed) || !('input' in parsed))
    return { error: 'the body must be a JSON object with an "input" field: {"input": {...}}' };
  const input = (parsed as { input: unknown }).input;
  if (!input || typeof input !== 'object' || Array.isArray(input)) return { error: '"input" must be a JSON object whose fields are the function\'s arguments' };
  // Python's decoder recurses once per level and stops near 1,000: a deeper input would fail in the worker instead.
  if (text.length > 2 * limits.inputDepthMax && jsonDepth(text) > limits.inputDepthMax)
    return {
      error: `the body nests arrays and objects more than ${limits.inputDepthMax} levels deep, deeper than a worker's JSON decoder goes; flatten the input`,
    };
  // Python reads no integer longer than 4,300 digits (int's own limit): the worker could not take the job at all.
  const digits = text.length > limits.inputIntegerDigitsMax ? longestInteger(text) : 0;
  if (digits > limits.inputIntegerDigitsMax)
    return {
      error: `the input holds an integer of ${digits} digits, more than the ${limits.inputIntegerDigitsMax} a Python worker reads; send it as a string`,
    };
  return memberText(text, 'input') ?? JSON.stringify(input);
}

function status(d: JobsApiDeps, req: IncomingMessage, res: ServerResponse, job: Job): void {
  const q = queryParams(req.url ?? '');
  if (q.has('ttl')) {
    const t = q.get('ttl') ?? '';
    const ttl = /^\d+$/.test(t) ? Number(t) : NaN;
    if (!(ttl >= 1 && ttl <= 7 * 24 * 3600 * 1000)) return sendError(res, 400, `ttl must be an integer number of ms from 1 to 604800000, got "${t}"`);
    d.engine.setTtl(job, ttl);
  }
  sendRaw(res, 200, job.toJson());
}

/** REST `/health`: the service's counts (serviceHealth.ts), without the notes GraphQL adds. */
async function health(d: JobsApiDeps, endpointId: string): Promise<Health> {
  const [{ jobs, workers }] = await serviceHealth(d.health, [endpointId]);
  return { jobs, workers };
}

/** Every node drops the queued jobs it owns (a node writes only its own rows); the number removed in all. */
async function purge(d: JobsApiDeps, endpointId: string): Promise<number> {
  let removed = d.engine.purge(endpointId);
  if (d.cluster) for (const r of await d.cluster.callOthers<{ removed: number }>(NODE_PURGE_PATH, { endpointId })) removed += Number(r.removed) || 0;
  return removed;
}

/**
 * A job whose row names this node and has not ended, but that memory does not hold: handed here by another node whose
 * answer is still on its way (workSharing.ts); it is waited for a moment. Else (a purge deleting it) there is none.
 */
async function arriving(d: JobsApiDeps, cluster: Cluster, endpointId: string, row: JobPlace | undefined): Promise<Job | undefined> {
  if (!row || row.owner !== cluster.nodeId || TERMINAL.has(row.status)) return undefined;
  const jobId = row.id;
  for (const until = Date.now() + NODE_CALL_TIMEOUT_MS; Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 20));
    if (d.engine.jobs.has(jobId)) return d.engine.get(endpointId, jobId);
  }
  return undefined;
}

/**
 * The JSON of a `/runsync` job handed to another node, from that node once the job ended there (or `until` passed);
 * when that node does not answer, the job as this node left it (durable and queued: `/status` finds it there).
 */
async function followed(cluster: Cluster, job: Job, until: number): Promise<string> {
  try {
    const node = (await cluster.nodes()).find((n) => n.id === job.handedTo && n.alive);
    const ms = Math.max(0, until - Date.now());
    const answer = node
      ? await cluster.call<{ json: string } | null>(
          node,
          NODE_WAIT_PATH,
          { endpointId: job.endpointId, jobId: job.id, ms },
          { timeoutMs: ms + NODE_CALL_TIMEOUT_MS },
        )
      : null;
    if (answer) return answer.json;
  } catch {
    /* below */
  }
  return job.toJson();
}

/** Answers the other nodes' calls for this node's part of a purge, and for a handed-off job's end (health: serviceHealth.ts). */
export function serveNodeParts(cluster: Cluster, d: Pick<JobsApiDeps, 'engine' | 'writer'>): void {
  const endpointOf = (body: unknown) => String((body as { endpointId?: unknown } | null)?.endpointId ?? '');
  cluster.serve(NODE_PURGE_PATH, (body) => ({ removed: d.engine.purge(endpointOf(body)) }));
  cluster.serve(NODE_WAIT_PATH, async (body) => {
    const b = body as { endpointId?: unknown; jobId?: unknown; ms?: unknown } | null;
    // It may have ended, and left memory, before the call came.
    const job = await d.engine.get(endpointOf(body), String(b?.jobId ?? ''));
    if (!job) return null;
    const until = Date.now() + Math.min(Math.max(0, Number(b?.ms) || 0), limits.waitMaxMs);
    await d.engine.waitForEnd(job, until - Date.now());
    if (job.handedTo) return { json: await followed(cluster, job, until) }; // handed on again
    if (!job.ended) await d.writer.durable();
    return { json: job.toJson() };
  });
}
