// A small Debug Adapter Protocol client for tests that debug without VS Code: debugpy's own adapter over stdio
// (`python -m debugpy.adapter`, as the extension's launch uses it) or a worker's listening debugpy over TCP (attach).
// Also finds a Python that has debugpy (scripts/test-all.sh installs Debian's python3-debugpy).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import type { Readable, Writable } from 'node:stream';

/** The first interpreter that imports debugpy: $STRATO_PYTHON, python3 on PATH, then Debian's own. */
export function debugpyPython(): string {
  const candidates = [process.env.STRATO_PYTHON, 'python3', '/usr/bin/python3'].filter((p): p is string => !!p);
  for (const p of candidates) if (spawnSync(p, ['-c', 'import debugpy'], { stdio: 'ignore' }).status === 0) return p;
  throw new Error(`none of ${candidates.join(', ')} has debugpy: apt-get install python3-debugpy (scripts/test-all.sh does)`);
}

interface Message {
  seq: number;
  type: 'request' | 'response' | 'event';
  command?: string;
  event?: string;
  request_seq?: number;
  success?: boolean;
  message?: string;
  body?: Record<string, unknown>;
  arguments?: Record<string, unknown>;
}

export class DapClient {
  private seq = 1;
  private buffer = Buffer.alloc(0);
  private readonly pending = new Map<number, { resolve: (m: Message) => void; reject: (e: Error) => void }>();
  readonly events: Message[] = [];
  private readonly waiters: Array<{ match: (m: Message) => boolean; resolve: (m: Message) => void }> = [];
  /** Requests the adapter sends to us (runInTerminal, startDebugging): answered with success and no body. */
  readonly reverse: Message[] = [];

  private constructor(
    private readonly out: Writable,
    input: Readable,
    private readonly close: () => void,
  ) {
    input.on('data', (d: Buffer) => this.read(d));
  }

  /** debugpy's adapter over stdio, run by `python` (what VS Code runs for the extension's launch configurations). */
  static spawnAdapter(python: string, env: NodeJS.ProcessEnv = process.env): { client: DapClient; process: ChildProcess } {
    const proc = spawn(python, ['-m', 'debugpy.adapter'], { stdio: ['pipe', 'pipe', 'inherit'], env });
    return { client: new DapClient(proc.stdin!, proc.stdout!, () => proc.kill()), process: proc };
  }

  /** A debugpy that listens (debugpy.listen in a worker). */
  static connect(host: string, port: number): Promise<DapClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, host, () => resolve(new DapClient(socket, socket, () => socket.destroy())));
      socket.once('error', reject);
    });
  }

  private read(d: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, d]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString())?.[1]);
      if (this.buffer.length < end + 4 + length) return;
      const m = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString()) as Message;
      this.buffer = this.buffer.subarray(end + 4 + length);
      this.dispatch(m);
    }
  }

  private dispatch(m: Message): void {
    if (m.type === 'response') {
      const p = this.pending.get(m.request_seq!);
      this.pending.delete(m.request_seq!);
      if (m.success) p?.resolve(m);
      else p?.reject(new Error(`${m.command} failed: ${m.message} ${JSON.stringify(m.body ?? {})}`));
      return;
    }
    if (m.type === 'request') {
      this.reverse.push(m);
      this.write({ seq: this.seq++, type: 'response', request_seq: m.seq, command: m.command, success: true });
      return;
    }
    this.events.push(m);
    for (const w of [...this.waiters])
      if (w.match(m)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(m);
      }
  }

  private write(m: Record<string, unknown>): void {
    const json = Buffer.from(JSON.stringify(m));
    this.out.write(Buffer.concat([Buffer.from(`Content-Length: ${json.length}\r\n\r\n`), json]));
  }

  /** Sends a request; the promise settles with the response (not waited for: launch and attach answer late). */
  send(command: string, args: Record<string, unknown> = {}): Promise<Message> {
    const seq = this.seq++;
    const answered = new Promise<Message>((resolve, reject) => this.pending.set(seq, { resolve, reject }));
    this.write({ seq, type: 'request', command, arguments: args });
    return answered;
  }

  async request(command: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    return (await this.send(command, args)).body ?? {};
  }

  /** The next event named `event` (one seen already counts when `seen` is true), within timeoutMs. */
  waitEvent(event: string, timeoutMs = 20_000, match: (m: Message) => boolean = () => true, seen = false): Promise<Message> {
    const known = seen ? this.events.find((m) => m.event === event && match(m)) : undefined;
    if (known) return Promise.resolve(known);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no "${event}" event within ${timeoutMs} ms; events: ${this.events.map((e) => e.event).join(', ')}`)),
        timeoutMs,
      );
      this.waiters.push({ match: (m) => m.event === event && match(m), resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  }

  /** The variables of the top frame of a stopped thread, by name (values as the debugger shows them). */
  async topFrameVariables(threadId: number): Promise<{ frame: { name: string; line: number; source?: { path?: string } }; vars: Record<string, string> }> {
    const trace = (await this.request('stackTrace', { threadId, levels: 1 })) as {
      stackFrames: Array<{ id: number; name: string; line: number; source?: { path?: string } }>;
    };
    const frame = trace.stackFrames[0];
    const { scopes } = (await this.request('scopes', { frameId: frame.id })) as { scopes: Array<{ name: string; variablesReference: number }> };
    const locals = scopes.find((s) => /local/i.test(s.name)) ?? scopes[0];
    const { variables } = (await this.request('variables', { variablesReference: locals.variablesReference })) as {
      variables: Array<{ name: string; value: string }>;
    };
    return { frame, vars: Object.fromEntries(variables.map((v) => [v.name, v.value])) };
  }

  dispose(): void {
    this.close();
  }
}
