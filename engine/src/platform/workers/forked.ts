// A worker forked from a template (templates.ts) as the supervisor sees it: the template reports its pid and exit
// status, its output arrives over the template log socket; kill() signals the pid like a child process's would.
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';

/** How long an exit waits for the output sockets to close, so the last lines come before the exit is handled. */
const FLUSH_MS = 300;

export class ForkedProcess extends EventEmitter {
  pid?: number;
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  private exited = false;
  private openStreams = 2;
  private pendingSignal: NodeJS.Signals | number | null = null;
  private exitTimer: NodeJS.Timeout | null = null;
  private exitArgs: [number | null, NodeJS.Signals | null] | null = null;

  constructor(readonly workerId: string) {
    super();
  }

  /** The template forked it: signals asked for before this arrive now. */
  started(pid: number): void {
    this.pid = pid;
    if (this.pendingSignal !== null) this.kill(this.pendingSignal);
  }

  kill(signal: NodeJS.Signals | number = 'SIGTERM'): boolean {
    if (this.exited) return false;
    if (this.pid === undefined) {
      this.pendingSignal = signal;
      return true;
    }
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false; // already gone; its exit report is on the way
    }
  }

  /** One of its output sockets closed (the process, or its copy of the socket, is gone). */
  streamEnded(): void {
    this.openStreams--;
    if (this.openStreams <= 0 && this.exitArgs) this.emitExit();
  }

  /** The template reaped it (or died, taking it along). */
  finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exited = true;
    this.exitArgs = [code, signal];
    if (this.openStreams <= 0) return this.emitExit();
    this.exitTimer = setTimeout(() => this.emitExit(), FLUSH_MS);
    this.exitTimer.unref();
  }

  private emitExit(): void {
    if (!this.exitArgs) return;
    const [code, signal] = this.exitArgs;
    this.exitArgs = null;
    if (this.exitTimer) clearTimeout(this.exitTimer);
    this.stdout.end();
    this.stderr.end();
    this.emit('exit', code, signal);
  }
}
