// Worker templates: per endpoint revision, one warm Python process that imported the endpoint's code and forks
// workers on request (engine/python/strato/_template.py, docs/platform.md "Worker templates"); null = plain start.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DeployedEndpoint } from '../controlPlane/service';
import { ForkedProcess } from './forked';
import { howItEnded, lastMeaningful, withErrorOutput } from './exitText';
import { LineSplitter } from '../../util/lines';
import { LOG_LIMITS } from '../../protocol/logs';

export interface TemplateDeps {
  python: string;
  /** One line of the template's own output into the endpoint's log. */
  writeLog(endpointId: string, source: string, stream: 'O' | 'E', line: string): void;
  log(line: string): void;
}

interface Template {
  key: string;
  label: string;
  proc: ChildProcess;
  ready: boolean;
  forks: Map<string, ForkedProcess>; // worker id -> fork, until the template reports its exit
  byPid: Map<number, ForkedProcess>;
  stderrTail: string[];
}

interface EndpointTemplates {
  current: Template | null;
  /** The revision (and build) the failures below are of: a new one starts with none. */
  key: string | null;
  failures: number;
  nextStartAt: number;
  /** The revision whose template found it cannot fork safely, and why: plain starts for it. */
  unsafe: { key: string; reason: string } | null;
  lastError: string | null;
}

/** A template serves one revision of an endpoint, on one build. */
const templateKey = (ep: DeployedEndpoint) => `${ep.revision}:${ep.buildId}`;

/** Workers the identity of the template does not carry: each fork gets its own. */
const PER_WORKER = ['STRATO_WORKER_TOKEN', 'STRATO_WORKER_ID', 'CUDA_VISIBLE_DEVICES', 'STRATO_LB_PORT'];
const BACKOFF_MS = [1000, 2000, 5000, 15_000, 60_000];

export class Templates {
  private endpoints = new Map<string, EndpointTemplates>();
  private awaitingLogs = new Map<string, ForkedProcess>();
  private socketDir: string | null = null;
  private server: net.Server | null = null;
  private closed = false;

  constructor(private readonly d: TemplateDeps) {}

  /** A worker forked from the endpoint's template, or null when it must start plainly (and why is noted). */
  fork(ep: DeployedEndpoint, root: string, env: NodeJS.ProcessEnv, workerId: string): ForkedProcess | null {
    if (this.closed) return null;
    const s = this.state(ep.id);
    const key = templateKey(ep);
    if (s.key !== key) {
      // A new revision (a fix deployed): the old one's template failures say nothing of it.
      s.key = key;
      s.failures = 0;
      s.nextStartAt = 0;
      s.lastError = null;
    }
    if (s.unsafe?.key === key) return null;
    if (s.current && s.current.key !== key) {
      this.retire(s.current); // a new revision: the old template leaves with its last worker
      s.current = null;
    }
    if (!s.current) {
      if (Date.now() >= s.nextStartAt) s.current = this.start(ep, root, env, key);
      return null;
    }
    const t = s.current;
    const socket = this.socketPath();
    if (!t.ready || !socket || !t.proc.stdin?.writable) return null;
    const fp = new ForkedProcess(workerId);
    t.forks.set(workerId, fp);
    this.awaitingLogs.set(workerId, fp);
    t.proc.stdin.write(`${JSON.stringify({ op: 'fork', id: workerId, env, log: socket })}\n`);
    return fp;
  }

  /** Why the endpoint's workers start without a template, when they do for a reason the user should know. */
  note(endpointId: string): string | null {
    const u = this.endpoints.get(endpointId)?.unsafe;
    return u ? `workers start without a template (slower cold starts): ${u.reason}` : null;
  }

  /** Why the template of the endpoint's current revision failed, if it did (an older revision's failure says nothing). */
  lastError(ep: DeployedEndpoint): string | null {
    const s = this.endpoints.get(ep.id);
    return s?.key === templateKey(ep) ? s.lastError : null;
  }

  /** The pid of the endpoint's ready template (tests, diagnostics). */
  pidOf(endpointId: string): number | undefined {
    const t = this.endpoints.get(endpointId)?.current;
    return t?.ready ? t.proc.pid : undefined;
  }

  /** The endpoint is gone: its template leaves with its last worker. */
  drop(endpointId: string): void {
    const s = this.endpoints.get(endpointId);
    if (s?.current) this.retire(s.current);
    if (s) s.current = null;
    this.endpoints.delete(endpointId);
  }

  close(): void {
    this.closed = true;
    for (const s of this.endpoints.values()) if (s.current) s.current.proc.kill('SIGTERM');
    this.server?.close();
    if (this.socketDir) fs.rmSync(this.socketDir, { recursive: true, force: true });
  }

  private state(endpointId: string): EndpointTemplates {
    let s = this.endpoints.get(endpointId);
    if (!s) this.endpoints.set(endpointId, (s = { current: null, key: null, failures: 0, nextStartAt: 0, unsafe: null, lastError: null }));
    return s;
  }

  private start(ep: DeployedEndpoint, root: string, workerEnv: NodeJS.ProcessEnv, key: string): Template {
    const env: NodeJS.ProcessEnv = { ...workerEnv, STRATO_TEMPLATE: '1' };
    for (const k of PER_WORKER) delete env[k];
    const proc = spawn(this.d.python, ['-u', ep.config.handlerFile], { cwd: root, env, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
    const t: Template = { key, label: `template-r${ep.revision}`, proc, ready: false, forks: new Map(), byPid: new Map(), stderrTail: [] };
    const s = this.state(ep.id);
    proc.stdin?.on('error', () => {}); // a template that died: its exit handler says so
    lines(proc.stdout, (l) => this.d.writeLog(ep.id, t.label, 'O', l));
    lines(proc.stderr, (l) => {
      this.d.writeLog(ep.id, t.label, 'E', l);
      t.stderrTail.push(l);
      if (t.stderrTail.length > 30) t.stderrTail.shift();
    });
    lines(proc.stdio[3] as NodeJS.ReadableStream | null, (l) => this.onReply(ep.id, s, t, l));
    proc.on('error', (e) => t.stderrTail.push(`could not start ${this.d.python}: ${e.message}`));
    proc.on('exit', (code, signal) => this.onExit(ep.id, s, t, code, signal));
    return t;
  }

  private onReply(endpointId: string, s: EndpointTemplates, t: Template, line: string): void {
    let m: { t?: string; id?: string; pid?: number; code?: number | null; signal?: NodeJS.Signals | null; reason?: string };
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (m.t === 'ready') {
      t.ready = true;
      s.failures = 0;
      s.lastError = null;
    } else if (m.t === 'unsafe') {
      s.unsafe = { key: t.key, reason: m.reason ?? 'unknown' };
      this.d.writeLog(endpointId, t.label, 'E', `strato WARN  ${this.note(endpointId)}`);
    } else if (m.t === 'forked' && m.id && m.pid) {
      const fp = t.forks.get(m.id);
      if (fp) {
        t.byPid.set(m.pid, fp);
        fp.started(m.pid);
      }
    } else if (m.t === 'exit' && m.pid) {
      const fp = t.byPid.get(m.pid);
      if (!fp) return;
      t.byPid.delete(m.pid);
      t.forks.delete(fp.workerId);
      this.awaitingLogs.delete(fp.workerId);
      fp.finish(m.code ?? null, m.signal ?? null);
    }
  }

  private onExit(endpointId: string, s: EndpointTemplates, t: Template, code: number | null, signal: NodeJS.Signals | null): void {
    // Its workers die with it (PR_SET_PDEATHSIG); nobody else can report how, so it is said here.
    for (const fp of t.forks.values()) {
      fp.stderr.write(`strato ERROR the worker's template process ended (${signal ?? `code ${code}`}), taking the worker with it\n`);
      this.awaitingLogs.delete(fp.workerId);
      fp.finish(null, 'SIGKILL');
    }
    t.forks.clear();
    if (s.current !== t) return; // retired: leaving was its job
    s.current = null;
    if (this.closed || s.unsafe?.key === t.key) return;
    const wait = BACKOFF_MS[Math.min(s.failures, BACKOFF_MS.length - 1)];
    s.failures++;
    s.nextStartAt = Date.now() + wait;
    const tail = lastMeaningful(t.stderrTail);
    const how = howItEnded(code, signal);
    s.lastError = t.ready ? null : withErrorOutput(`the endpoint's worker template ${how}`, tail);
    this.d.log(`strato platform: worker template of endpoint ${endpointId} ${how}${tail ? ` (${tail})` : ''}; next try in ${wait / 1000} s`);
  }

  /** The template leaves with its last worker. A bare end of its requests means this node is gone: it leaves at once. */
  private retire(t: Template): void {
    if (t.proc.stdin?.writable) t.proc.stdin.write(`${JSON.stringify({ op: 'retire' })}\n`);
    t.proc.stdin?.end();
  }

  /** The unix socket forked workers send their stdout and stderr to, made on first use. */
  private socketPath(): string | null {
    if (this.server) return path.join(this.socketDir!, 'logs.sock');
    this.socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-tpl-'));
    const file = path.join(this.socketDir, 'logs.sock');
    this.server = net.createServer((sock) => this.attach(sock));
    this.server.on('error', (e) => this.d.log(`strato platform: worker log socket: ${e.message}`));
    this.server.listen(file);
    this.server.unref();
    return file;
  }

  /** A forked worker's output connection: a header line "<worker id> O|E", then its output. */
  private attach(sock: net.Socket): void {
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('utf8');
      const nl = head.indexOf('\n');
      if (nl < 0) return head.length > 200 ? sock.destroy() : undefined;
      sock.off('data', onData);
      const [id, stream] = head.slice(0, nl).split(' ');
      const fp = this.awaitingLogs.get(id);
      if (!fp) return sock.destroy();
      const out = stream === 'E' ? fp.stderr : fp.stdout;
      const rest = head.slice(nl + 1);
      if (rest) out.write(rest);
      sock.on('data', (c) => out.write(c));
      sock.on('close', () => fp.streamEnded());
    };
    sock.on('data', onData);
    sock.on('error', () => {});
  }
}

function lines(stream: NodeJS.ReadableStream | null, each: (line: string) => void): void {
  if (!stream) return;
  const split = new LineSplitter(each, LOG_LIMITS.lineChars);
  stream.setEncoding('utf8');
  stream.on('data', (text: string) => split.push(text));
}
