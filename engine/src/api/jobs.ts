// Typed client of the jobs API of queue-based endpoints ({base_url}/v2/<endpoint_id>/...): run, runsync,
// status, stream, cancel, retry, purge-queue, health. Errors come back as JobsApiError with the HTTP status
// and the platform's one-sentence message.
import { limits } from '../catalog';
import { UserError } from '../util/errors';
import { errorText, send, type ApiTarget, type HttpResult } from './http';

import type { Job, JobAccepted } from '../protocol/jobs';
export type { Job, JobAccepted, JobStatus } from '../protocol/jobs';

export interface StreamChunk<Output = unknown> {
  output: Output;
  metrics: { stream_index: number; [k: string]: unknown };
}

export interface HealthReport {
  jobs: { completed: number; failed: number; inProgress: number; inQueue: number; retried: number };
  workers: { idle: number; running: number; initializing: number };
}

export interface PurgeResult {
  removed: number;
  status: string;
}

export class JobsApiError extends UserError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'JobsApiError';
  }
}

export interface RunsyncOptions {
  /** `wait` query parameter, ms (1000..300000); the platform's default is 90000. */
  waitMs?: number;
  /** Client-side timeout, ms: the endpoint's execution_timeout_ms, else 60 s (spec). */
  timeoutMs?: number;
}

export class JobsClient {
  constructor(private readonly target: ApiTarget) {}

  run(endpointId: string, input: Record<string, unknown>): Promise<JobAccepted> {
    return this.call<JobAccepted>('POST', endpointId, 'run', { body: { input } });
  }

  runsync<O = unknown>(endpointId: string, input: Record<string, unknown>, o: RunsyncOptions = {}): Promise<Job<O>> {
    const q = o.waitMs !== undefined ? `?wait=${o.waitMs}` : '';
    const timeoutMs = o.timeoutMs ?? Math.max(limits.defaultClientTimeoutMs, (o.waitMs ?? 0) + 5000);
    return this.call<Job<O>>('POST', endpointId, `runsync${q}`, { body: { input }, timeoutMs });
  }

  status<O = unknown>(endpointId: string, jobId: string, o: { ttlMs?: number } = {}): Promise<Job<O>> {
    const q = o.ttlMs !== undefined ? `?ttl=${o.ttlMs}` : '';
    return this.call<Job<O>>('GET', endpointId, `status/${encodeURIComponent(jobId)}${q}`);
  }

  /** Chunks produced since the previous call (waits a few seconds for one while the job runs). */
  stream<O = unknown>(endpointId: string, jobId: string): Promise<StreamChunk<O>[]> {
    return this.call<StreamChunk<O>[]>('GET', endpointId, `stream/${encodeURIComponent(jobId)}`);
  }

  cancel(endpointId: string, jobId: string): Promise<JobAccepted> {
    return this.call<JobAccepted>('POST', endpointId, `cancel/${encodeURIComponent(jobId)}`);
  }

  retry(endpointId: string, jobId: string): Promise<JobAccepted> {
    return this.call<JobAccepted>('POST', endpointId, `retry/${encodeURIComponent(jobId)}`);
  }

  purgeQueue(endpointId: string): Promise<PurgeResult> {
    return this.call<PurgeResult>('POST', endpointId, 'purge-queue');
  }

  health(endpointId: string): Promise<HealthReport> {
    return this.call<HealthReport>('GET', endpointId, 'health');
  }

  /** Polls `/status` until the job ends or `timeoutMs` passes (then returns it as it is). */
  async waitFor<O = unknown>(endpointId: string, jobId: string, timeoutMs = 60_000, pollMs = 200): Promise<Job<O>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const job = await this.status<O>(endpointId, jobId);
      if (!['IN_QUEUE', 'IN_PROGRESS'].includes(job.status) || Date.now() >= deadline) return job;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  private async call<T>(method: string, endpointId: string, route: string, o: { body?: unknown; timeoutMs?: number } = {}): Promise<T> {
    const r: HttpResult = await send(this.target, method, `/v2/${encodeURIComponent(endpointId)}/${route}`, o);
    if (r.status !== 200) throw new JobsApiError(r.status, `${route.split(/[/?]/)[0]} failed (HTTP ${r.status}): ${errorText(r.body)}`);
    return r.body as T;
  }
}
