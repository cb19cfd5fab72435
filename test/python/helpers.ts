// Shared pieces of the Python package tests: a real interpreter with engine/python on its path, artifact-like
// temp folders (worker file, strato_manifest.json, handler_<name>.py), and a fake platform speaking the protocol.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { FrameReader } from '../../engine/src/platform/workerChannel';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const PYTHON = process.env.STRATO_PYTHON || 'python3';
export const PYTHONPATH = path.join(ROOT, 'engine', 'python');

export function pythonEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH, PYTHONDONTWRITEBYTECODE: '1', ...extra };
  for (const key of Object.keys(env)) if (key.startsWith('STRATO_') && !(key in extra)) delete env[key];
  return env;
}

export interface Proc {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal name) once the process ended. */
  exited: Promise<number | string>;
}

const running = new Set<ChildProcess>();

export function startPython(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Proc {
  const child = spawn(PYTHON, args, { cwd: opts.cwd, env: pythonEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | string>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve(code ?? signal ?? -1);
    }),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Runs python to completion (with a time limit) and returns its exit code and output. */
export async function runPython(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const p = startPython(args, opts);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), opts.timeoutMs ?? 15000);
  const code = await p.exited;
  clearTimeout(timer);
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** Polls until check() returns a truthy value; fails with `what` after timeoutMs. */
export async function waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = 10000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms))),
  ]);
}

/** An HTTP call to a route server whose answers are JSON: its status, parsed body and headers. */
export async function callJson(url: string, method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, { method, body, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers } });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

const tempDirs: string[] = [];

export function tempDir(prefix = 'strato-py-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
}

export interface EndpointDef {
  module: string;
  functions: string[];
  loadBalanced?: boolean;
  routes?: Record<string, string>;
  maxConcurrency?: number;
  /** The manifest's sample_input of its function (a build makes it from the parameters). */
  sampleInput?: Record<string, unknown>;
}

/** An artifact-like folder: the given source files, strato_manifest.json and handler_<name>.py per endpoint. */
export function makeArtifact(files: Record<string, string>, endpoints: Record<string, EndpointDef>): string {
  const dir = tempDir();
  const resources: Record<string, unknown> = {};
  const routes: Record<string, Record<string, string>> = {};
  const handlers: Record<string, string> = {};
  for (const [name, ep] of Object.entries(endpoints)) {
    const handler = `handler_${name.replace(/[^A-Za-z0-9_]/g, '_')}.py`;
    resources[name] = {
      is_load_balanced: !!ep.loadBalanced,
      imageName: 'strato/worker-cpu:py3.11',
      workersMin: 0,
      workersMax: 1,
      cpu: 'cpu3c-1-2',
      env: {},
      functions: ep.functions.map((f) => ({
        name: f,
        module: ep.module,
        is_async: false,
        is_class: false,
        is_generator: false,
        params: [],
        ...(ep.sampleInput ? { sample_input: ep.sampleInput } : {}),
      })),
      handler_file: handler,
      gpu_count: 1,
      idle_timeout: 60,
      max_concurrency: ep.maxConcurrency ?? 1,
      dependencies: [],
      source_file: `${ep.module.replace(/\./g, '/')}.py`,
    };
    if (ep.routes) routes[name] = ep.routes;
    handlers[handler] = `from strato.runtime import serve\nserve(${JSON.stringify(name)})\n`;
  }
  const manifest = { version: 1, project_name: 'test', source_fingerprint: '0'.repeat(64), python_version: '3.11', resources, routes };
  writeFiles(dir, { ...files, ...handlers, 'strato_manifest.json': JSON.stringify(manifest, null, 2) });
  return dir;
}

export interface FakeJob {
  id: string;
  input: unknown;
}

export interface Done {
  jobId: string;
  output?: unknown;
  outputJson?: string;
  error?: string;
  at: number;
}

/**
 * A fake platform node: /_worker/<endpoint>/{take,done,stream,heartbeat,ready} as docs/worker-protocol.md says, and
 * with `channel` the job channel (CONNECT .../channel) too, handing out at most `slots` jobs at a time over it.
 */
export class FakePlatform {
  constructor(readonly o: { channel?: boolean; slots?: number } = {}) {
    if (o.channel) this.server.on('connect', (req, socket: Duplex) => this.openChannel(req, socket));
  }
  /** Job channels the worker opened. */
  channels: Socket[] = [];
  readonly token = 'test-token';
  readonly endpointId = 'ep-test';
  server = http.createServer((req, res) => this.handle(req, res));
  queue: FakeJob[] = [];
  done: Done[] = [];
  /** Stream posts, each chunk's value parsed from the JSON text the worker sent (`outputJson`, kept too). */
  streams: { jobId: string; chunks: { output: unknown; outputJson: string; metrics: Record<string, unknown> }[] }[] = [];
  heartbeats: { workerId: string; jobs: string[]; at: number }[] = [];
  ready: { workerId: string; port?: number; at: number }[] = [];
  takes: { max: number; waitMs: number }[] = [];
  /** Job id -> time it was handed to the worker. */
  handedOut = new Map<string, number>();
  /** Jobs handed out and not yet done, and its high-water mark. */
  inFlight = 0;
  maxInFlight = 0;
  /** Called with each done (for latency measurements). */
  onDone?: (done: Done) => void;
  private doneById = new Map<string, Done>();
  /** Ids to list in the next heartbeat answer. */
  cancelNext: string[] = [];
  /** Ids whose stream answer says cancelled. */
  streamCancelled = new Set<string>();
  /** Status to answer take with instead of serving jobs (401, 404, 429...). */
  takeStatus = 200;
  private waiters: (() => void)[] = [];
  private held = new Set<http.ServerResponse>();

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return this.url;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The environment the platform gives a worker. */
  workerEnv(extra: Record<string, string> = {}): Record<string, string> {
    return {
      STRATO_PLATFORM_URL: this.url,
      STRATO_WORKER_TOKEN: this.token,
      STRATO_WORKER_ID: 'w-1',
      STRATO_ENDPOINT_ID: this.endpointId,
      STRATO_HEARTBEAT_MS: '100',
      ...extra,
    };
  }

  enqueue(...jobs: FakeJob[]): void {
    this.queue.push(...jobs);
    for (const wake of this.waiters.splice(0)) wake();
    if (this.o.channel) this.pump();
  }

  doneOf(id: string): Done | undefined {
    return this.doneById.get(id);
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    for (const c of this.channels) c.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** Closes the open job channel (the worker must open another and lose no result). */
  breakChannel(): void {
    this.channels.at(-1)?.destroy();
  }

  /** Sends a frame on the open job channel. */
  sendFrame(message: unknown): void {
    const text = Buffer.from(JSON.stringify(message));
    const head = Buffer.alloc(4);
    head.writeUInt32BE(text.length);
    this.channels.at(-1)?.write(Buffer.concat([head, text]));
  }

  /** The job is no longer the worker's (cancelled): its slot is free, as on the platform. */
  private release(id: string): void {
    if (this.released.has(id) || this.doneById.has(id)) return;
    this.released.add(id);
    this.inFlight -= 1;
    if (this.o.channel) this.pump();
  }

  private released = new Set<string>();

  private record(body: { jobId: string; outputJson?: string; output?: unknown; error?: string }): void {
    // Workers send the output's own JSON text (`outputJson`); `outputJson` keeps it as sent.
    const output = typeof body.outputJson === 'string' ? JSON.parse(body.outputJson) : body.output;
    const done = { jobId: body.jobId, output, outputJson: body.outputJson, error: body.error, at: Date.now() };
    this.done.push(done);
    this.doneById.set(done.jobId, done);
    if (!this.released.has(done.jobId)) this.inFlight -= 1;
    this.onDone?.(done);
  }

  private openChannel(req: http.IncomingMessage, socket: Duplex): void {
    if (req.headers.authorization !== `Bearer ${this.token}` || this.takeStatus !== 200) {
      const status = req.headers.authorization !== `Bearer ${this.token}` ? 401 : this.takeStatus;
      socket.end(`HTTP/1.1 ${status} No\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}`);
      return;
    }
    const sock = socket as Socket;
    this.channels.push(sock);
    sock.on('error', () => undefined);
    sock.write('HTTP/1.1 200 OK\r\n\r\n');
    const reader = new FrameReader(1 << 30);
    sock.on('data', (chunk: Buffer) => {
      for (const f of reader.push(chunk)) {
        const body = JSON.parse(f.toString());
        if (body.op === 'done') this.record(body);
      }
      this.pump();
    });
    this.pump();
  }

  /** Channel: sends queued jobs, one per frame, while the worker has a free slot. */
  private pump(): void {
    const sock = this.channels.at(-1);
    if (!sock || sock.destroyed) return;
    while (this.queue.length > 0 && this.inFlight < (this.o.slots ?? 1)) this.sendFrame({ jobs: this.hand(1) });
  }

  private hand(max: number): FakeJob[] {
    const jobs = this.queue.splice(0, Math.max(0, max));
    for (const j of jobs) this.handedOut.set(j.id, Date.now());
    this.inFlight += jobs.length;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return jobs;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const prefix = `/_worker/${this.endpointId}/`;
      if (req.headers.authorization !== `Bearer ${this.token}`) return send(401, { error: 'bad token' });
      if (req.method !== 'POST' || !req.url?.startsWith(prefix)) return send(404, { error: 'no such route' });
      const body = JSON.parse(raw || '{}');
      switch (req.url.slice(prefix.length)) {
        case 'ready':
          this.ready.push({ workerId: body.workerId, port: body.port, at: Date.now() });
          return send(200, {});
        case 'heartbeat': {
          this.heartbeats.push({ workerId: body.workerId, jobs: body.jobs, at: Date.now() });
          const cancel = this.cancelNext.filter((id) => body.jobs.includes(id));
          this.cancelNext = this.cancelNext.filter((id) => !cancel.includes(id));
          for (const id of cancel) this.release(id);
          return send(200, { cancel });
        }
        case 'stream': {
          const chunks = (body.chunks as Array<{ outputJson: string; metrics: Record<string, unknown> }>).map((c) => ({
            ...c,
            output: JSON.parse(c.outputJson) as unknown,
          }));
          this.streams.push({ jobId: body.jobId, chunks });
          if (this.streamCancelled.has(body.jobId)) this.release(body.jobId);
          return send(200, { cancelled: this.streamCancelled.has(body.jobId) });
        }
        case 'done':
          this.record(body);
          return send(200, { jobs: this.hand(body.take ?? 0) });
        case 'take': {
          this.takes.push({ max: body.max, waitMs: body.waitMs });
          if (this.takeStatus !== 200) return send(this.takeStatus, { error: 'not wanted' });
          let timer: NodeJS.Timeout | undefined; // eslint-disable-line prefer-const -- assigned after the closure that clears it
          const answer = () => {
            this.held.delete(res);
            clearTimeout(timer);
            send(200, { jobs: this.hand(body.max) });
          };
          if (this.queue.length > 0) return answer();
          this.held.add(res);
          timer = setTimeout(answer, Math.min(body.waitMs, 2000));
          this.waiters.push(() => {
            if (!res.writableEnded) answer();
          });
          return;
        }
        default:
          return send(404, { error: 'unknown call' });
      }
    });
  }
}

/** Runs each snippet in a fresh namespace; the result is the ValueError message, or null when none was raised. */
export async function errorsOf(snippets: string[]): Promise<(string | null)[]> {
  const script = `
import json, sys
results = []
for code in json.load(open(sys.argv[1])):
    try:
        exec("from strato import *\\n" + code, {})
        results.append(None)
    except ValueError as e:
        results.append(str(e))
print(json.dumps(results))
`;
  const dir = tempDir();
  writeFiles(dir, { 'cases.json': JSON.stringify(snippets), 'run.py': script });
  const r = await runPython([path.join(dir, 'run.py'), path.join(dir, 'cases.json')]);
  if (r.code !== 0) throw new Error(`the snippets did not run (exit ${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}
