// The fixed part of every generated client: job types, typed errors and the calls themselves over the global fetch.
// It is copied into each generated module as it is here, so it imports nothing and works in Node 18+ and browsers.

/**
 * Bounds of /runsync's `wait` (ms), how often a waiting client asks /status (ms), and how long a request that the
 * platform answers at once, or after /stream's hold of a few seconds, may take (ms); the generator writes the
 * catalog's values of the first two.
 */
const LIMITS = { waitMinMs: 1000, waitMaxMs: 300000, pollIntervalMs: 1000, requestMs: 30000 };

export type JobStatus = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'TIMED_OUT';

/** A job of a queue-based endpoint, as /run, /runsync, /status and /cancel answer. */
export interface Job<Output = unknown> {
  id: string;
  status: JobStatus;
  /** Present once the job completed. */
  output?: Output;
  /** Present on a failed job: the error the function raised. */
  error?: string;
  /** Milliseconds the job waited in the queue. */
  delayTime?: number;
  /** Milliseconds the job ran. */
  executionTime?: number;
}

export interface ClientOptions {
  /** The API key; by default STRATO_API_KEY of the process environment, read at each call. */
  apiKey?: string;
  /** The fetch function to use; by default the global one. */
  fetch?: typeof fetch;
  /** Milliseconds between two /status calls while a job is awaited. */
  pollIntervalMs?: number;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export interface CallOptions {
  /** Milliseconds to wait for the result; by default the endpoint's execution_timeout_ms, else 60 s. */
  timeoutMs?: number;
  /**
   * Stops waiting, with an AbortError (a queued job keeps running: cancel it through its handle). One already aborted
   * sends no request at all.
   */
  signal?: AbortSignal;
}

/** Every error this client throws. */
export class StratoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

/** An HTTP answer other than 2xx; `body` is its JSON (or text). */
export class HttpError extends StratoError {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** 401: the API key is missing or not valid for this endpoint. */
export class UnauthorizedError extends HttpError {}

/** 429: the platform sheds load (the endpoint's queue is full); try again later. */
export class RateLimitError extends HttpError {
  constructor(
    status: number,
    message: string,
    body: unknown,
    /** From the Retry-After header, when the platform sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(status, message, body);
  }
}

/** A load-balanced route answered `{error, detail}` with a 4xx or 5xx status. */
export class RouteError extends HttpError {
  constructor(
    status: number,
    readonly error: string,
    readonly detail: string,
    body: unknown,
  ) {
    super(status, detail ? `${error}: ${detail}` : error, body);
  }
}

/** A job ended FAILED, CANCELLED or TIMED_OUT (the platform's execution limit). */
export class JobFailedError extends StratoError {
  readonly jobId: string;
  readonly status: JobStatus;
  /** The error the function raised (FAILED). */
  readonly error?: string | undefined;
  constructor(readonly job: Job<unknown>) {
    super(`job ${job.id} ended ${job.status}${job.error ? `: ${job.error}` : ''}`);
    this.jobId = job.id;
    this.status = job.status;
    this.error = job.error;
  }
}

/** No result within the time-out. `jobId` names the job when one was queued: it may still run (see `cancel`). */
export class TimeoutError extends StratoError {
  constructor(
    readonly timeoutMs: number,
    readonly jobId?: string,
  ) {
    super(`no result within ${timeoutMs} ms${jobId ? ` (job ${jobId} is still queued or running)` : ''}`);
  }
}

/**
 * The call's `signal` was aborted. `reason` is the signal's; `jobId` names the job when one was queued: it keeps
 * running (see `cancel`). Its name is AbortError, as `fetch` names its own.
 */
export class AbortError extends StratoError {
  constructor(
    readonly reason: unknown,
    readonly jobId?: string,
  ) {
    super(`the call was aborted${jobId ? ` (job ${jobId} is still queued or running)` : ''}`);
  }
}

/** A TimeoutError or AbortError of a request about job `id`, naming it: the caller may want to cancel the job. */
function ofJob(e: unknown, id: string, timeoutMs: number): unknown {
  if (e instanceof TimeoutError && !e.jobId) return new TimeoutError(timeoutMs, id);
  if (e instanceof AbortError && !e.jobId) return new AbortError(e.reason, id);
  return e;
}

/** A job queued with `run`, or taken up again by id with `job`. */
export interface JobHandle<Output, Chunk = Output> {
  readonly id: string;
  /** The job as it is now. */
  status(): Promise<Job<Output>>;
  /** Waits for the job to end: its output, or JobFailedError / TimeoutError. */
  result(options?: CallOptions): Promise<Output>;
  /** Each value the function streams, as it comes; the whole output once when the function does not stream. */
  stream(options?: CallOptions): AsyncGenerator<Chunk, void, undefined>;
  /** Cancels the job (removed from the queue, or stopped while it runs). */
  cancel(): Promise<Job<Output>>;
}

/** The arguments of a call: the input may be left out when every key of it is optional. */
export type CallArgs<Input> = [Partial<Input>] extends [Input] ? [input?: Input, options?: CallOptions] : [input: Input, options?: CallOptions];

/** A queue-based function: call it for its output, or queue a job to follow, stream or cancel. */
export interface QueueFunction<Input, Output, Chunk = Output> {
  /** Runs the function and returns its output (/runsync, then /status until the job ends or the time-out passes). */
  (...args: CallArgs<Input>): Promise<Output>;
  /** Queues a job (/run) and returns its handle at once. */
  run(...args: CallArgs<Input>): Promise<JobHandle<Output, Chunk>>;
  /** Queues a job and yields each value the function streams. */
  stream(...args: CallArgs<Input>): AsyncGenerator<Chunk, void, undefined>;
  /** The handle of a job queued earlier, by its id. */
  job(id: string): JobHandle<Output, Chunk>;
}

/** The API key of the process environment, where there is one (Node, Deno, Bun; not a browser). */
function environmentKey(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.['STRATO_API_KEY'] || undefined; // an index signature's key: as noPropertyAccessFromIndexSignature has it
}

/** Waits `ms`; an abort ends the wait with an AbortError. The listener goes with the timer: a long poll adds one at a time. */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortError(signal.reason));
    const stop = () => (clearTimeout(timer), reject(new AbortError(signal!.reason)));
    const timer = setTimeout(() => (signal?.removeEventListener('abort', stop), resolve()), ms);
    signal?.addEventListener('abort', stop, { once: true });
  });

interface RequestOptions {
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** A load-balanced route answers errors as `{error, detail}`. */
  route?: boolean;
}

/** The HTTP side: the key on every request, JSON both ways, each failure as its typed error. @internal */
export class Transport {
  constructor(private readonly options: ClientOptions = {}) {}

  get pollIntervalMs(): number {
    return this.options.pollIntervalMs ?? LIMITS.pollIntervalMs;
  }

  async request<T>(method: string, url: string, o: RequestOptions): Promise<T> {
    // An abort listener never hears a signal aborted before it was added: without this the request would go out.
    if (o.signal?.aborted) throw new AbortError(o.signal.reason);
    const key = this.options.apiKey ?? environmentKey();
    if (!key) throw new StratoError('no API key: pass createClient({ apiKey }) or set STRATO_API_KEY in the environment');
    const headers: Record<string, string> = { ...this.options.headers, authorization: `Bearer ${key}` };
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => ((timedOut = true), controller.abort()), o.timeoutMs);
    const stop = () => controller.abort(o.signal?.reason);
    o.signal?.addEventListener('abort', stop, { once: true });
    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      const res = await (this.options.fetch ?? fetch)(url, {
        method,
        headers,
        body: o.body === undefined ? null : JSON.stringify(o.body),
        signal: controller.signal,
      });
      status = res.status;
      retryAfter = res.headers.get('retry-after');
      text = await res.text();
    } catch (e) {
      if (timedOut) throw new TimeoutError(o.timeoutMs);
      if (o.signal?.aborted) throw new AbortError(o.signal.reason);
      throw new StratoError(`could not reach ${url}: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', stop);
    }
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    if (status >= 200 && status < 300) return body as T;
    throw errorOf(status, body, retryAfter, o.route === true);
  }
}

function errorOf(status: number, body: unknown, retryAfter: string | null, route: boolean): HttpError {
  const b = (body && typeof body === 'object' ? body : {}) as { error?: unknown; detail?: unknown };
  const error = typeof b.error === 'string' ? b.error : typeof body === 'string' && body ? body.slice(0, 500) : `HTTP ${status}`;
  if (status === 401) return new UnauthorizedError(status, error, body);
  if (status === 429) {
    const seconds = Number(retryAfter);
    return new RateLimitError(status, error, body, retryAfter && Number.isFinite(seconds) ? seconds * 1000 : undefined);
  }
  if (route && typeof b.error === 'string') return new RouteError(status, b.error, typeof b.detail === 'string' ? b.detail : '', body);
  return new HttpError(status, error, body);
}

const ENDED: readonly JobStatus[] = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

function outputOf<Output>(job: Job<Output>): Output {
  if (job.status !== 'COMPLETED') throw new JobFailedError(job);
  return job.output as Output;
}

interface StreamChunk {
  output: unknown;
  metrics?: { part?: number; parts?: number; json?: boolean };
}

/** Joins the pieces of a value the platform split over several chunks (over 1 MB); other chunks pass as they are. @internal */
export class ChunkJoiner {
  private pieces: string[] = [];

  /** The value the chunk completes, or `undefined` while a split value is still arriving. */
  add(chunk: StreamChunk): { value: unknown } | undefined {
    const m = chunk.metrics ?? {};
    if (typeof m.parts !== 'number' || m.parts < 2) return { value: chunk.output };
    this.pieces.push(String(chunk.output));
    if ((m.part ?? 0) < m.parts - 1) return undefined;
    const text = this.pieces.join('');
    this.pieces = [];
    return { value: m.json ? JSON.parse(text) : text };
  }
}

/** Where an endpoint is and how long its calls may take (ms). @internal */
export interface EndpointTarget {
  url: string;
  timeoutMs: number;
}

function splitArgs<Input>(args: CallArgs<Input>): { input: Input; options: CallOptions } {
  return { input: (args[0] ?? {}) as Input, options: args[1] ?? {} };
}

/** A queue-based function of the endpoint at `target`. @internal */
export function queueFunction<Input, Output, Chunk = Output>(t: Transport, target: EndpointTarget): QueueFunction<Input, Output, Chunk> {
  const base = target.url.replace(/\/+$/, '');
  const jobUrl = (what: string, id: string) => `${base}/${what}/${encodeURIComponent(id)}`;
  const shortCall = (o: CallOptions) => ({ timeoutMs: Math.min(o.timeoutMs ?? target.timeoutMs, LIMITS.requestMs), signal: o.signal });

  async function waitFor(id: string, deadline: number, timeoutMs: number, o: CallOptions): Promise<Output> {
    try {
      for (;;) {
        const job = await t.request<Job<Output>>('GET', jobUrl('status', id), shortCall(o));
        if (ENDED.includes(job.status)) return outputOf(job);
        const left = deadline - Date.now();
        if (left <= 0) throw new TimeoutError(timeoutMs, id);
        await sleep(Math.min(t.pollIntervalMs, left), o.signal);
      }
    } catch (e) {
      throw ofJob(e, id, timeoutMs);
    }
  }

  function handle(id: string): JobHandle<Output, Chunk> {
    return {
      id,
      status: () => t.request<Job<Output>>('GET', jobUrl('status', id), { timeoutMs: LIMITS.requestMs }),
      result: (o: CallOptions = {}) => {
        const timeoutMs = o.timeoutMs ?? target.timeoutMs;
        return waitFor(id, Date.now() + timeoutMs, timeoutMs, o);
      },
      stream: (o: CallOptions = {}) => streamJob(id, o),
      cancel: () => t.request<Job<Output>>('POST', jobUrl('cancel', id), { timeoutMs: LIMITS.requestMs }),
    };
  }

  async function* streamJob(id: string, o: CallOptions): AsyncGenerator<Chunk, void, undefined> {
    const timeoutMs = o.timeoutMs ?? target.timeoutMs;
    const deadline = Date.now() + timeoutMs;
    const joiner = new ChunkJoiner();
    let ended: Job<Output> | undefined;
    try {
      for (;;) {
        // /stream waits a few seconds for a new chunk while the job runs; once it ended, one more call takes the rest.
        // The request outlives that hold whatever the time-out (cut short, the chunks it took would be lost), which is
        // checked between requests.
        const chunks = await t.request<StreamChunk[]>('GET', jobUrl('stream', id), { timeoutMs: LIMITS.requestMs, signal: o.signal });
        for (const c of chunks) {
          const done = joiner.add(c);
          if (done) yield done.value as Chunk;
        }
        if (ended) {
          if (chunks.length) continue;
          outputOf(ended);
          return;
        }
        if (chunks.length) continue;
        const job = await t.request<Job<Output>>('GET', jobUrl('status', id), shortCall(o));
        if (ENDED.includes(job.status)) ended = job;
        else if (Date.now() >= deadline) throw new TimeoutError(timeoutMs, id);
      }
    } catch (e) {
      throw ofJob(e, id, timeoutMs);
    }
  }

  async function run(...args: CallArgs<Input>): Promise<JobHandle<Output, Chunk>> {
    const { input, options } = splitArgs(args);
    const job = await t.request<Job<Output>>('POST', `${base}/run`, { body: { input }, ...shortCall(options) });
    return handle(job.id);
  }

  async function call(...args: CallArgs<Input>): Promise<Output> {
    const { input, options } = splitArgs(args);
    const timeoutMs = options.timeoutMs ?? target.timeoutMs;
    const deadline = Date.now() + timeoutMs;
    const wait = Math.min(Math.max(timeoutMs, LIMITS.waitMinMs), LIMITS.waitMaxMs);
    // The request outlives `wait`: the platform answers when the job ends or `wait` passes, with the job as it is.
    const job = await t.request<Job<Output>>('POST', `${base}/runsync?wait=${wait}`, {
      body: { input },
      timeoutMs: wait + LIMITS.requestMs,
      signal: options.signal,
    });
    if (ENDED.includes(job.status)) return outputOf(job);
    if (Date.now() >= deadline) throw new TimeoutError(timeoutMs, job.id);
    return waitFor(job.id, deadline, timeoutMs, options);
  }

  async function* stream(...args: CallArgs<Input>): AsyncGenerator<Chunk, void, undefined> {
    const job = await run(...args);
    yield* job.stream(splitArgs(args).options);
  }

  return Object.assign(call, { run, stream, job: handle });
}

/** Text in a URL, escaped; text no URL can hold (a lone surrogate) is refused as the call's error, naming the argument. */
function urlText(name: string, text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    throw new StratoError(`${name} holds text that no URL can carry (a lone UTF-16 surrogate); send it in the body, or fix the text`);
  }
}

/**
 * Calls a route of a load-balanced endpoint: path parameters from the arguments, the others as the JSON body (or the query of GET and DELETE).
 * @internal
 */
export async function callRoute<Output>(
  t: Transport,
  target: EndpointTarget,
  method: string,
  path: string,
  args: object = {},
  options: CallOptions = {},
): Promise<Output> {
  const rest: Record<string, unknown> = { ...args };
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    if (value === undefined || value === null) throw new StratoError(`${method} ${path} needs ${name}`);
    // URLs resolve a segment `.` or `..` (escaped too): the call would reach another route of the endpoint.
    if (/^\.{1,2}$/.test(String(value)))
      throw new StratoError(`${method} ${path}: ${name} cannot be "${String(value)}", which a URL path resolves away; send another value`);
    return urlText(name, String(value));
  });
  let url = `${target.url.replace(/\/+$/, '')}${filled}`;
  const inQuery = method === 'GET' || method === 'DELETE';
  if (inQuery) {
    // null is an Optional argument left at its default: not sent (the route would get the text "null"). An array is
    // its key once per item (?tag=a&tag=b), which the route server reads back as a list (Python's _wire.query_string).
    const query: string[] = [];
    for (const [k, v] of Object.entries(rest)) {
      if (v === undefined || v === null) continue;
      for (const x of Array.isArray(v) ? v : [v]) query.push(`${urlText(k, k)}=${urlText(k, typeof x === 'string' ? x : JSON.stringify(x))}`);
    }
    if (query.length) url += `?${query.join('&')}`;
  }
  const timeoutMs = options.timeoutMs ?? target.timeoutMs;
  return t.request<Output>(method, url, { body: inQuery ? undefined : rest, timeoutMs, signal: options.signal, route: true });
}
