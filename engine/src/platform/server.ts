// The platform's HTTP server (node:http): routes each request by its first path segment to the control plane
// (/graphql, /_uploads), the jobs API (/v2), load-balanced endpoints (/lb), the worker protocol (/_worker), or
// worker hosts' agents (/_agent).
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Principal } from './auth';
import type { KeyRing } from './controlPlane/keys';
import { PlatformError } from './errors';
import { listenError, quoted } from '../util/errors';
import { pathOf, sendError, sendJson, sendNotAllowed } from './http';
import { AGENT_PREFIX } from '../protocol/agents';

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

export interface Routes {
  keys: KeyRing;
  graphql: Handler;
  jobs: Handler;
  lb: Handler;
  worker: Handler;
  /** `CONNECT /_worker/<endpoint_id>/channel`: a worker's job channel (workerChannel.ts). */
  workerChannel?(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Worker hosts' agents (agentApi.ts). */
  agent?: Handler;
  /** Routes between the nodes of a cluster (`/_cluster/...`); absent on the embedded database. */
  cluster?: Handler;
  /** Receives an artifact upload; refuses (before reading the body) a key that may not deploy to its app. */
  upload(uploadId: string, req: IncomingMessage, by: Principal): Promise<unknown>;
  info(): Record<string, unknown>;
  log(line: string): void;
}

/** A whole request (headers and body) must arrive within this; an artifact upload is the largest body. */
const REQUEST_TIMEOUT_MS = 30 * 60_000;

export function createServer(r: Routes): http.Server {
  const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: REQUEST_TIMEOUT_MS }, (req, res) => {
    route(r, req, res).catch((e: unknown) => {
      if (e instanceof PlatformError) return sendError(res, e.status, e.message);
      r.log(`strato platform: ${req.method} ${req.url} failed: ${(e as Error).stack ?? String(e)}`);
      sendError(res, 500, `the platform failed to handle this request (${(e as Error).message}); see its log`);
    });
  });
  server.headersTimeout = 60_000;
  // Without a listener Node drops CONNECT requests without a word; the platform answers them (workerChannel.ts).
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (r.workerChannel) return r.workerChannel(req, socket, head);
    socket.end('HTTP/1.1 405 Method Not Allowed\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
  });
  return server;
}

async function route(r: Routes, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  try {
    decodeURIComponent(pathOf(url)); // every route decodes its segments: a malformed %-escape is the client's error
  } catch {
    req.resume();
    return sendError(res, 400, `the path ${quoted(pathOf(url), 200)} has a malformed %-escape; encode it with encodeURIComponent`);
  }
  if (url.startsWith('/v2/')) return r.jobs(req, res);
  if (url.startsWith('/_worker/')) return r.worker(req, res);
  if (url.startsWith('/lb/')) return r.lb(req, res);
  if (url.startsWith(AGENT_PREFIX) && r.agent) return r.agent(req, res);
  if (url.startsWith('/_cluster/') && r.cluster) return r.cluster(req, res);
  if (url === '/graphql' || url.startsWith('/graphql?')) return r.graphql(req, res);
  if (url.startsWith('/_uploads/')) {
    const auth = r.keys.authenticate(req);
    if ('refused' in auth) return sendError(res, 401, auth.refused);
    if (req.method !== 'PUT') return sendNotAllowed(res, 'PUT', `upload the artifact with PUT, not ${req.method}`);
    try {
      return sendJson(res, 200, await r.upload(decodeURIComponent(url.slice('/_uploads/'.length).split('?')[0]), req, auth.principal));
    } catch (e) {
      if (e instanceof PlatformError) return sendError(res, e.status, e.message);
      throw e;
    }
  }
  if (url === '/healthz' || url === '/') return sendJson(res, 200, { status: 'ok', ...r.info() });
  return sendError(res, 404, `no route ${url}: the platform serves /graphql, /v2/<endpoint_id>/..., /lb/<endpoint_id>/...`);
}

export function listen(server: http.Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => reject(listenError(e, host, port));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}
