// Transport to a Docker engine: plain HTTP over its unix socket (DOCKER_HOST, default /var/run/docker.sock),
// with the API version negotiated once (`GET /version`), so one client speaks to old and new engines alike.
import http from 'node:http';
import { UserError } from '../util/errors';

/** The oldest Engine API this client's requests are written for (Docker 20.10 speaks 1.41). */
const MIN_API = '1.40';
const MAX_API = '1.43';

export class EngineError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

export interface EngineResponse {
  status: number;
  body: Buffer;
}

/** Where the engine listens: a unix socket path from DOCKER_HOST (unix://PATH or a bare path). */
export function socketPath(dockerHost = process.env.DOCKER_HOST): string {
  if (!dockerHost) return '/var/run/docker.sock';
  if (dockerHost.startsWith('unix://')) return dockerHost.slice('unix://'.length);
  if (dockerHost.startsWith('/')) return dockerHost;
  throw new UserError(`DOCKER_HOST=${dockerHost} is not a unix socket: set it to unix:///path/to/docker.sock (the preview talks to a local engine only).`);
}

/** Why connecting to the socket failed, for the user: a socket this user may not open is not a missing engine. */
export function connectError(socket: string, e: NodeJS.ErrnoException): UserError {
  if (e.code === 'EACCES' || e.code === 'EPERM')
    return new UserError(
      `permission denied on the Docker socket ${socket} (${e.code}): add your user to the docker group ` +
        '(sudo usermod -aG docker $USER, then log in again) or set DOCKER_HOST=unix:///path/to/docker.sock to a socket you may open (rootless Docker).',
    );
  return noEngine(socket, e.code ?? e.message);
}

function noEngine(socket: string, why: string): UserError {
  return new UserError(
    `no Docker engine answers on ${socket} (${why}): start one (sudo systemctl start docker, or dockerd) or set ` +
      `DOCKER_HOST=unix:///path/to/docker.sock; strato deploy to the embedded platform needs no Docker.`,
  );
}

function cmp(a: string, b: string): number {
  const [am, an] = a.split('.').map(Number);
  const [bm, bn] = b.split('.').map(Number);
  return am - bm || an - bn;
}

export class DockerEngine {
  private prefix = '';
  readonly socket: string;
  /** Engine version and negotiated API version, after connect(). */
  version = '';
  apiVersion = '';

  constructor(dockerHost?: string) {
    this.socket = socketPath(dockerHost);
  }

  /** Checks the engine answers and picks the highest API version both sides speak. */
  async connect(): Promise<this> {
    let r: EngineResponse;
    try {
      r = await this.raw('GET', '/version');
    } catch (e) {
      throw connectError(this.socket, e as NodeJS.ErrnoException);
    }
    if (r.status !== 200) throw noEngine(this.socket, `GET /version answered ${r.status}`);
    const v = JSON.parse(r.body.toString('utf8')) as { Version: string; ApiVersion: string; MinAPIVersion?: string };
    if (cmp(v.ApiVersion, MIN_API) < 0)
      throw new UserError(`the Docker engine on ${this.socket} speaks API ${v.ApiVersion}, older than ${MIN_API}: upgrade Docker to 20.10 or later.`);
    this.apiVersion = cmp(v.ApiVersion, MAX_API) > 0 ? MAX_API : v.ApiVersion;
    this.version = v.Version;
    this.prefix = `/v${this.apiVersion}`;
    return this;
  }

  /** A request whose whole answer is read; non-2xx answers throw EngineError with the engine's message. */
  async call(method: string, path: string, body?: unknown, ok: number[] = []): Promise<EngineResponse> {
    const r = await this.raw(method, this.prefix + path, body === undefined ? undefined : Buffer.from(JSON.stringify(body)), 'application/json');
    if (r.status >= 300 && !ok.includes(r.status)) throw new EngineError(engineMessage(r), r.status);
    return r;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await this.call(method, path, body);
    return (r.body.length ? JSON.parse(r.body.toString('utf8')) : {}) as T;
  }

  /** A request with a streamed body (an image's root filesystem); the answer is read whole. */
  async upload(path: string, body: NodeJS.ReadableStream, contentType: string): Promise<EngineResponse> {
    return new Promise((resolve, reject) => {
      const req = http.request({ socketPath: this.socket, method: 'POST', path: this.prefix + path, headers: { 'content-type': contentType } }, (res) =>
        collect(res, resolve, reject),
      );
      req.on('error', reject);
      body.on('error', (e: Error) => req.destroy(e));
      body.pipe(req);
    });
  }

  /** A request whose answer is a stream (logs with follow=1); the caller reads and ends it. */
  stream(path: string): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = http.request({ socketPath: this.socket, method: 'GET', path: this.prefix + path }, (res) => {
        if ((res.statusCode ?? 500) >= 300) collect(res, (r) => reject(new EngineError(engineMessage(r), r.status)), reject);
        else resolve(res);
      });
      req.on('error', reject);
      req.end();
    });
  }

  private raw(method: string, path: string, body?: Buffer, contentType?: string): Promise<EngineResponse> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = {};
      if (body) {
        headers['content-type'] = contentType ?? 'application/json';
        headers['content-length'] = body.length;
      }
      const req = http.request({ socketPath: this.socket, method, path, headers }, (res) => collect(res, resolve, reject));
      req.on('error', reject);
      req.end(body);
    });
  }
}

function collect(res: http.IncomingMessage, resolve: (r: EngineResponse) => void, reject: (e: Error) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => resolve({ status: res.statusCode ?? 500, body: Buffer.concat(chunks) }));
  res.on('error', reject);
}

function engineMessage(r: EngineResponse): string {
  const text = r.body.toString('utf8');
  try {
    return (JSON.parse(text) as { message?: string }).message ?? `engine answered ${r.status}`;
  } catch {
    return text.trim() || `engine answered ${r.status}`;
  }
}
