// One node of a cluster: platform nodes over one PostgreSQL server that form one service. The node registers in the
// `nodes` table and heartbeats there; it hears other nodes' control-plane changes (LISTEN/NOTIFY) and reads them
// again; it adopts the jobs of nodes whose heartbeat is too old (claimed in SQL, SKIP LOCKED); it forwards a
// request for a job another live node owns to that node (and a load-balanced request to a node with a worker of its
// endpoint: lbPeers.ts; how, in clusterForward.ts); and it serves and makes the calls between nodes (`/_cluster/...`, with a secret the nodes of
// one database share). The embedded database (one node) uses none of this.
import fs from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { ControlPlane } from './controlPlane/service';
import type { KeyRing } from './controlPlane/keys';
import { unavailable } from './errors';
import { UserError } from '../util/errors';
import { hostPort, isWildcardHost } from '../util/hostUrl';
import { readBody, sendError } from './http';
import type { JobEngine } from './jobs/jobEngine';
import { CHANGES_CHANNEL } from './store/sqlStore';
import type { NodeRow, PlatformStore, SqlDriver } from './store/types';
import { Forwarder, forwardedVia, MAX_HOPS, NODE_CALL_TIMEOUT_MS, type ForwardEnd, type ForwardOptions } from './clusterForward';

/** Jobs claimed from lost nodes per statement (several adopters share a large backlog between them). */
const ADOPT_BATCH = 2000;

const SECRET_HEADER = 'x-strato-cluster-secret';

/** A route between nodes: takes the JSON body the calling node sent, answers JSON; `signal` aborts when the caller left. */
export type NodeRoute = (body: unknown, signal: AbortSignal) => Promise<unknown> | unknown;

/** The form of a node's id (`n` and ten base-36 digits): job ids end with it, log cursors name it. */
export const NODE_ID_PATTERN = 'n[0-9a-z]{10}';

/**
 * The address other nodes reach this one at when `--node-url` is not given: the listening address, or for a wildcard
 * one (`0.0.0.0`, `::`) this machine's first address other machines can reach (loopback where it has none, as on a
 * machine with nodes on several ports of its own).
 */
export function defaultNodeUrl(host: string, port: number, interfaces = os.networkInterfaces()): string {
  let h = host;
  if (isWildcardHost(host)) {
    const external = Object.values(interfaces)
      .flat()
      .filter((a) => a && !a.internal && (a.family === 'IPv4' || host === '::'));
    const pick = external.find((a) => a!.family === 'IPv4') ?? external.find((a) => !a!.address.startsWith('fe80:'));
    h = pick?.address ?? '127.0.0.1';
  }
  return `http://${hostPort(h, port)}`;
}

/** This node's instance id, kept in its data dir so that a restarted node finds its own jobs again. */
export function nodeIdOf(dataDir: string): string {
  const file = path.join(dataDir, 'node-id');
  try {
    const id = fs.readFileSync(file, 'utf8').trim();
    if (new RegExp(`^${NODE_ID_PATTERN}$`).test(id)) return id;
  } catch {
    /* first start */
  }
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
  const id = `n${[...randomBytes(10)].map((b) => alphabet[b % 36]).join('')}`;
  fs.writeFileSync(file, `${id}\n`);
  return id;
}

export interface ClusterDeps {
  nodeId: string;
  store: PlatformStore;
  driver: SqlDriver;
  /** The URL other nodes reach this node at. */
  url(): string;
  heartbeatMs: number;
  /** A node whose heartbeat is older than this is lost. */
  lostMs: number;
  /** A node silent this long leaves the node list (its row is deleted). */
  forgetMs: number;
  engine: JobEngine;
  cp: ControlPlane;
  keys: KeyRing;
  log(line: string): void;
}

export interface NodeView {
  id: string;
  url: string;
  startedAt: number;
  heartbeatAt: number;
  state: 'alive' | 'lost';
}

export class Cluster {
  private timer: NodeJS.Timeout | undefined;
  private listener: { close(): Promise<void> } | null = null;
  private beating: Promise<void> | null = null;
  private adopting: Promise<number> | null = null;
  private nodeCache: { at: number; rows: NodeRow[] } | null = null;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private closed = false;
  private secret = Buffer.alloc(0);
  private readonly routes = new Map<string, NodeRoute>();
  /**
   * After this node could not reach the database, it adopts nothing until the others have had the time to heartbeat
   * again: they were cut off too, and are not lost for that. The wait counts from this node's first heartbeat that
   * gets through (`cutOff` until then), not from its last failure: the outage may outlast any wait counted from its
   * start, and this node's process may have stood still meanwhile (the others' heartbeats are as old as the outage).
   * A heartbeat after a pause longer than the lost bound (the process stood still) starts the same wait.
   */
  private adoptAfter = 0;
  private cutOff = false;
  private beatAt = Date.now();
  private forgetAfter = 0;
  /** Another node has jobs of this endpoint queued that its workers do not take (workSharing.ts). */
  onQueued: (endpointId: string) => void = () => undefined;
  /** A worker slot of the endpoint was freed (by another node, or here from a lost node): a claim may find it. */
  onSlotFreed: (endpointId: string) => void = () => undefined;
  /** Another node told its queued jobs per endpoint (`<endpoint id>:<count>,...`; queueBound.ts). */
  onCounts: (from: string, entries: string) => void = () => undefined;
  /** Another node told which of its hosts have GPUs (gpuOffers.ts). */
  onGpus: (from: string, offers: string) => void = () => undefined;

  private readonly forwarder: Forwarder;

  constructor(private readonly d: ClusterDeps) {
    this.forwarder = new Forwarder({
      nodeId: d.nodeId,
      agent: this.agent,
      lostMs: d.lostMs,
      heartbeatMs: d.heartbeatMs,
      nodes: () => this.nodes(true),
      log: d.log,
    });
  }

  get nodeId(): string {
    return this.d.nodeId;
  }

  /** Registers this node and starts heartbeating, listening and adopting. */
  async start(): Promise<void> {
    // One secret for every node of the database: calls between nodes are not for clients' keys.
    this.secret = Buffer.from(await this.d.store.metaOnce('cluster_secret', randomBytes(24).toString('hex')));
    await this.refuseTakenPlace();
    await this.d.store.registerNode(this.d.url());
    this.beatAt = Date.now(); // registering is this node's first heartbeat: a slow start is no pause of the process
    const changed = () => this.changed();
    const heard = (payload: string) => {
      const [what, subject, from] = payload.split(' ');
      if (what === 'queued' && from !== this.d.nodeId) this.onQueued(subject);
      else if (what === 'slot' && from !== this.d.nodeId) this.onSlotFreed(subject);
      else if (what === 'counts' && from !== this.d.nodeId) this.onCounts(from, subject);
      else if (what === 'gpus' && from !== this.d.nodeId) this.onGpus(from, subject);
      else if (what === 'cp' && subject !== this.d.nodeId) changed(); // this node's own changes are in its memory already
    };
    this.listener = (await this.d.driver.listen?.(CHANGES_CHANNEL, heard, changed)) ?? null;
    this.timer = setInterval(() => void this.beat(), this.d.heartbeatMs);
    this.timer.unref();
    await this.adopt();
  }

  /**
   * Refuses to start with the id of a node alive at another URL (a data dir or machine image copied with its node-id
   * file: taking the id over would hand the other node's jobs and slots back and forth), or at the URL of another live
   * node (a copied --node-url: the others would send this node's requests there). A row alive in the way may also be a
   * node stopped a moment ago (this one's last run on another port, another that had this port): only a live node
   * heartbeats again, so a row that does not within its heartbeat period and a half is taken over.
   */
  private async refuseTakenPlace(): Promise<void> {
    const url = this.d.url();
    const inTheWay = (await this.d.store.listNodes()).filter((n) => n.alive && (n.id === this.d.nodeId) !== (n.url === url));
    if (!inTheWay.length) return;
    // A node heartbeats at most every half of its own lost bound (options.ts); this one's period, at least.
    const period = Math.max(this.d.heartbeatMs, ...inTheWay.map((n) => Number(n.lost_ms ?? 0) / 2));
    await new Promise((r) => setTimeout(r, period * 1.5));
    const now = await this.d.store.listNodes();
    for (const first of inTheWay) {
      const again = now.find((n) => n.id === first.id);
      if (!again?.alive || again.url !== first.url || Number(again.heartbeat_at) <= Number(first.heartbeat_at)) continue;
      throw new UserError(
        first.id === this.d.nodeId
          ? `node id ${this.d.nodeId} belongs to a live node at ${first.url}: this node's data dir holds a copy of that node's ` +
              'node-id file (a copied data dir or machine image); remove node-id from this data dir and start again, for an id of its own'
          : `another live node (${first.id}) is reached at ${url}, the URL this node would register: the other nodes would send ` +
              "this node's requests to it. Give this node the URL the others reach it at (--node-url http://HOST:PORT), or leave " +
              '--node-url out (this host and port).',
      );
    }
  }

  /** Another node changed control-plane records or keys: read them again. */
  private changed(): void {
    this.d.cp.sync.reload().catch((e: Error) => this.d.log(`strato platform: could not read another node's changes (${e.message}); retrying`));
    void this.d.keys.sync();
    this.nodeCache = null;
  }

  private beat(): Promise<void> {
    this.beating ??= (async () => {
      try {
        if (!(await this.d.store.heartbeatNode())) await this.d.store.registerNode(this.d.url());
        if (this.cutOff || Date.now() - this.beatAt > this.d.lostMs) {
          this.cutOff = false;
          this.adoptAfter = Date.now() + this.d.lostMs + 2 * this.d.heartbeatMs;
        }
        this.beatAt = Date.now();
        if (this.mayAdopt()) {
          await this.adopt();
          await this.freeLostSlots();
          await this.forgetGone();
        }
      } catch (e) {
        this.cutOff = true;
        this.d.log(`strato platform: the node heartbeat failed (${(e as Error).message}); trying again`);
      }
    })().finally(() => (this.beating = null));
    return this.beating;
  }

  /** Whether this node may take lost nodes' jobs now (not cut off from the database, nor just back: `adoptAfter`). */
  private mayAdopt(): boolean {
    return !this.cutOff && Date.now() >= this.adoptAfter;
  }

  /** Claims every job of lost nodes, batch by batch, and queues them here; returns how many were taken. */
  adopt(): Promise<number> {
    this.adopting ??= (async () => {
      let taken = 0;
      for (;;) {
        if (this.closed) break;
        const rows = await this.d.store.adoptLostJobs(ADOPT_BATCH);
        if (rows.length === 0) break;
        const r = this.d.engine.adopt(rows);
        taken += rows.length;
        this.d.log(
          `strato platform: adopted ${rows.length} jobs of lost nodes (accepted by ${[...new Set(rows.map((x) => x.id.slice(x.id.lastIndexOf('-') + 1)))].join(', ')}): ` +
            `${r.queued} queued again (${r.rerun} of them were running), ${r.dropped} dropped`,
        );
        if (rows.length < ADOPT_BATCH) break;
      }
      return taken;
    })().finally(() => (this.adopting = null));
    return this.adopting;
  }

  /** Frees the worker slots of lost nodes (where their jobs are adopted), so that live nodes start the workers instead. */
  private async freeLostSlots(): Promise<void> {
    const endpoints = await this.d.store.freeLostSlots();
    if (endpoints.length === 0) return;
    this.d.log(`strato platform: freed the worker slots of lost nodes (endpoints ${endpoints.join(', ')})`);
    for (const id of endpoints) {
      this.onSlotFreed(id);
      await this.notify(`slot ${id} ${this.d.nodeId}`);
    }
  }

  /**
   * Deletes the rows of nodes silent for forgetMs, at most once a minute: `platform status` listed every node that ever
   * ran, and nodes of an elastic group (a new id each start) piled up there as lost for good.
   */
  private async forgetGone(): Promise<void> {
    if (Date.now() < this.forgetAfter) return;
    this.forgetAfter = Date.now() + Math.min(60_000, this.d.forgetMs);
    const gone = await this.d.store.forgetNodes(this.d.forgetMs);
    if (gone.length === 0) return;
    this.nodeCache = null;
    this.d.log(`strato platform: forgot node${gone.length === 1 ? '' : 's'} ${gone.join(', ')}: no heartbeat for ${silence(this.d.forgetMs)}`);
  }

  /** Sends a payload to every node listening on the channel; a failure is not reported (it is a hint). */
  async notify(payload: string): Promise<void> {
    await this.d.driver.query('select pg_notify($1, $2)', [CHANGES_CHANNEL, payload]).catch(() => undefined);
  }

  /** The registered nodes, alive or lost; read at most once per heartbeat period. */
  async nodes(fresh = false): Promise<NodeRow[]> {
    if (!fresh && this.nodeCache && Date.now() - this.nodeCache.at < this.d.heartbeatMs) return this.nodeCache.rows;
    const rows = await this.d.store.listNodes();
    this.nodeCache = { at: Date.now(), rows };
    return rows;
  }

  async views(): Promise<NodeView[]> {
    return (await this.nodes(true)).map((n) => ({
      id: n.id,
      url: n.url,
      startedAt: Number(n.started_at),
      heartbeatAt: Number(n.heartbeat_at),
      state: n.alive ? 'alive' : 'lost',
    }));
  }

  /**
   * A request for a job this node does not hold: answered by forwarding it to the live node that owns the job
   * (true), or here (false) when the job is unknown, this node's, or was just adopted from a lost owner.
   */
  async route(jobId: string, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const via = forwardedVia(req);
    if (via.length >= MAX_HOPS) return false;
    const row = await this.d.store.getJobPlace(jobId);
    if (!row) {
      // No row yet: a `/runsync` answer gives the id before its group commit, and the node that accepted a job (its id's
      // suffix) holds it until then. Any other job without a row does not exist, and that node says so.
      const accepter = (await this.nodes()).find((n) => jobId.endsWith(`-${n.id}`));
      if (!accepter?.alive || accepter.id === this.d.nodeId || via.includes(accepter.id)) return false;
      await this.forwardJob(accepter, req, res, via);
      return true;
    }
    if (row.owner === this.d.nodeId) return false;
    let owner = (await this.nodes()).find((n) => n.id === row.owner);
    if (!owner?.alive) owner = (await this.nodes(true)).find((n) => n.id === row.owner); // a node that just started, or came back
    if (!owner?.alive && this.mayAdopt()) {
      // Its owner is lost: this node takes the job over now rather than wait for the next heartbeat.
      const mine = await this.d.store.adoptJob(jobId);
      if (mine) this.d.engine.adopt([mine]);
      if (mine || !owner) return false;
      // The database still counts the owner alive (its heartbeat is at the bound): ask it.
    }
    if (!owner || via.includes(owner.id)) return false;
    await this.forwardJob(owner, req, res, via);
    return true;
  }

  /** Serves `POST <path>` to the other nodes of the cluster. */
  serve(path: string, route: NodeRoute): void {
    this.routes.set(path, route);
  }

  /** A request under `/_cluster/`: answered when it comes from a node of this database (its secret) for a route served here. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const given = Buffer.from(String(req.headers[SECRET_HEADER] ?? ''));
    if (given.length !== this.secret.length || this.secret.length === 0 || !timingSafeEqual(given, this.secret)) {
      req.resume();
      return sendError(res, 403, 'cluster routes are for the platform nodes that share this database');
    }
    const route = req.method === 'POST' ? this.routes.get(req.url ?? '') : undefined;
    if (!route) {
      req.resume();
      return sendError(res, 404, `no cluster route ${req.method} ${req.url}`);
    }
    const body = JSON.parse((await readBody(req, 65_536, 'a call between nodes')).toString('utf8')) as unknown;
    // A caller that gives up (a follow read that another node answered first) ends a long-poll here too.
    const left = new AbortController();
    res.once('close', () => left.abort());
    const answer = JSON.stringify((await route(body, left.signal)) ?? null);
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
    res.end(answer);
  }

  /**
   * Calls `POST <path>` of another node with a JSON body; its JSON answer. It fails after `timeoutMs` (a long-poll
   * passes its wait on top of NODE_CALL_TIMEOUT_MS) or when `signal` aborts.
   */
  async call<T>(node: NodeRow, path: string, body: unknown, o: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> {
    const timeout = AbortSignal.timeout(o.timeoutMs ?? NODE_CALL_TIMEOUT_MS);
    const r = await fetch(new URL(path, node.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SECRET_HEADER]: this.secret.toString() },
      body: JSON.stringify(body),
      signal: o.signal ? AbortSignal.any([timeout, o.signal]) : timeout,
    });
    if (!r.ok) throw new Error(`${r.status} ${await r.text()}`);
    return (await r.json()) as T;
  }

  /**
   * Calls `POST <path>` of every other live node, for an answer of the whole service; their answers. A node that does
   * not answer and is still alive fails it with a 503 that says so (a lost one is left out: its jobs are adopted).
   */
  async callOthers<T>(path: string, body: unknown): Promise<T[]> {
    const others = (await this.nodes()).filter((n) => n.alive && n.id !== this.d.nodeId);
    const answers = await Promise.all(
      others.map(async (node) => {
        try {
          return { answer: await this.call<T>(node, path, body) };
        } catch (e) {
          if (!(await this.nodes(true)).some((n) => n.id === node.id && n.alive)) return null;
          throw unavailable(
            `node ${node.id} at ${node.url} did not answer for the whole service (${(e as Error).message}); if it stopped, ` +
              'the other nodes take its jobs over within a few seconds: try again in a moment',
          );
        }
      }),
    );
    return answers.filter((a) => a !== null).map((a) => a.answer);
  }

  private async forwardJob(owner: NodeRow, req: IncomingMessage, res: ServerResponse, via: string[]): Promise<void> {
    const end = await this.forward(owner, req, res, via);
    if (end.outcome === 'answered') return;
    if (res.headersSent) return void res.destroy();
    sendError(
      res,
      503,
      `the node that owns this job (${owner.id} at ${owner.url}) did not answer (${end.why}); if it stopped, another node takes its jobs over ` +
        'within a few seconds: try again in a moment',
    );
  }

  /** See Forwarder.forward (clusterForward.ts). */
  forward(node: Pick<NodeRow, 'id' | 'url'>, req: IncomingMessage, res: ServerResponse, via: string[], o: ForwardOptions = {}): Promise<ForwardEnd> {
    return this.forwarder.forward(node, req, res, via, o);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.forwarder.close();
    await this.beating;
    await this.adopting?.catch(() => undefined);
    await this.listener?.close();
    this.agent.destroy();
  }
}

/** A silence for the log: `24 h`, `90 s`. */
const silence = (ms: number): string => (ms >= 3_600_000 && ms % 3_600_000 === 0 ? `${ms / 3_600_000} h` : `${Math.round(ms / 1000)} s`);
