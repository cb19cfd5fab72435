// The job channel of a queue worker (docs/worker-protocol.md): `CONNECT /_worker/<endpoint_id>/channel` with the
// worker's token turns one TCP connection into a two-way stream of length-prefixed JSON frames. The platform sends
// jobs the moment the worker has a free slot; the worker sends each result. No HTTP request per job on either side
// and no long-poll to re-arm: most of a warm `/runsync`'s cost was those (bench/platform-jobs.ts). CONNECT rather than
// an `Upgrade`: a listener for upgrades would also take every other client's upgrade (curl --http2 sends `h2c` with
// its POST body), while no other client of the platform sends CONNECT.
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { limits } from './options';
import { pathOf } from './http';
import type { Job } from './jobs/job';
import { authenticate, jobsJson, recordDone, type WorkerApiDeps, type WorkerBody } from './workerApi';
import { isBusy } from './workers/worker';

export const CHANNEL_OP = 'channel';
/** A frame is its length (4 bytes, big-endian) and that many bytes of UTF-8 JSON. */
const HEADER_BYTES = 4;

export interface WorkerChannels {
  /** The server's `connect` listener. */
  open(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every channel (platform shutdown: they are detached from the HTTP server, which no longer sees them). */
  closeAll(): void;
}

export function workerChannels(d: WorkerApiDeps): WorkerChannels {
  const open = new Set<Duplex>();
  return {
    open(req, socket, head) {
      socket.on('error', () => undefined); // a reset connection ends in 'close', handled below
      const refuse = (status: number, message: string) => {
        const body = JSON.stringify({ error: message });
        socket.end(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      };
      const parts = pathOf(req.url ?? '/').split('/'); // ['', '_worker', endpointId, 'channel']
      if (parts.length !== 4 || parts[1] !== '_worker' || parts[3] !== CHANNEL_OP)
        return refuse(404, 'CONNECT is only for a worker job channel: /_worker/<endpoint_id>/channel');
      let endpointId: string;
      try {
        endpointId = decodeURIComponent(parts[2]);
      } catch {
        return refuse(400, 'the endpoint id in the path has a malformed %-escape');
      }
      const w = authenticate(d, req, endpointId);
      if (!w) return refuse(401, 'unknown worker or wrong worker token; this worker is not wanted and should exit');
      if ((w.phase === 'draining' || w.phase === 'stopping') && !isBusy(w)) return refuse(404, 'this worker is retired and should exit');
      socket.write('HTTP/1.1 200 OK\r\n\r\n');
      (socket as Socket).setNoDelay?.(true);
      open.add(socket);
      w.lastSeen = Date.now();

      const send = (jobs: Job[]) => {
        if (socket.destroyed || !socket.writable) return false;
        socket.write(frame(jobsJson(jobs)));
        return true;
      };
      const close = (reason: string) => {
        if (socket.destroyed) return;
        socket.end(frame(JSON.stringify({ exit: reason })));
      };
      const detach = d.dispatch.attach(w, send, close);
      socket.on('close', () => {
        open.delete(socket);
        detach();
      });

      const reader = new FrameReader(limits.workerMessageBytes);
      const onData = (chunk: Buffer) => {
        let frames: Buffer[];
        try {
          frames = reader.push(chunk);
        } catch (e) {
          d.log(`strato platform: worker ${w.id}: ${(e as Error).message}; closing its job channel`);
          return socket.destroy();
        }
        for (const f of frames) {
          let body: WorkerBody & { op?: unknown };
          try {
            body = JSON.parse(f.toString('utf8')) as WorkerBody & { op?: unknown };
          } catch (e) {
            d.log(`strato platform: worker ${w.id} sent a job channel frame that is not JSON (${(e as Error).message}); closing the channel`);
            return socket.destroy();
          }
          w.lastSeen = Date.now();
          if (body?.op === 'done') {
            // A frame the platform cannot take closes this channel, never the platform (one worker's bad frame
            // must not stop every other endpoint): the worker opens another, its job times out or runs again.
            try {
              recordDone(d, w, body);
            } catch (e) {
              d.log(`strato platform: worker ${w.id} sent a job channel frame that was refused (${(e as Error).message}); closing the channel`);
              return socket.destroy();
            }
          } else {
            d.log(`strato platform: worker ${w.id} sent an unknown job channel frame (op ${JSON.stringify(body?.op)}); closing the channel`);
            return socket.destroy();
          }
        }
      };
      socket.on('data', onData);
      if (head.length > 0) onData(head);
    },
    closeAll() {
      for (const s of open) s.destroy();
      open.clear();
    },
  };
}

function frame(text: string): Buffer {
  const n = Buffer.byteLength(text);
  const buf = Buffer.allocUnsafe(HEADER_BYTES + n);
  buf.writeUInt32BE(n, 0);
  buf.write(text, HEADER_BYTES, 'utf8');
  return buf;
}

/** Cuts a byte stream into frames; a frame's bytes are copied once into a buffer of its size, however they arrive. */
export class FrameReader {
  private header = Buffer.alloc(HEADER_BYTES);
  private headerFill = 0;
  private body: Buffer | null = null;
  private bodyFill = 0;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.body === null) {
        const n = Math.min(HEADER_BYTES - this.headerFill, chunk.length - at);
        chunk.copy(this.header, this.headerFill, at, at + n);
        this.headerFill += n;
        at += n;
        if (this.headerFill < HEADER_BYTES) break;
        const size = this.header.readUInt32BE(0);
        if (size > this.limit) throw new Error(`a frame of ${size} bytes is over the limit of ${this.limit}`);
        this.headerFill = 0;
        // A frame that lies whole in the chunk is a view of it, not a copy.
        if (chunk.length - at >= size) {
          out.push(chunk.subarray(at, at + size));
          at += size;
          continue;
        }
        this.body = Buffer.allocUnsafe(size);
        this.bodyFill = 0;
      }
      const n = Math.min(this.body.length - this.bodyFill, chunk.length - at);
      chunk.copy(this.body, this.bodyFill, at, at + n);
      this.bodyFill += n;
      at += n;
      if (this.bodyFill === this.body.length) {
        out.push(this.body);
        this.body = null;
      }
    }
    return out;
  }
}
