// The `/_agent/...` routes of protocol/agents.ts: worker hosts register (admin key), long-poll for commands, report
// their workers' output and exits, and download builds; a watchdog declares a host lost when it falls silent for
// `lostAfterMs`, and the platform then runs its workers' jobs again elsewhere.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { refusal } from './auth';
import type { KeyRing } from './controlPlane/keys';
import { conflict, PlatformError } from './errors';
import { pathOf, readBody, sendError, sendJson } from './http';
import type { HostPool } from './workers/hosts';
import { RemoteHost } from './workers/remoteHost';
import { checkDatacenters } from '../catalog/parameterRules';
import { quoted } from '../util/errors';
import type { AgentEvent, HostRegistered, HostRegistration, HostView } from '../protocol/agents';

export interface AgentApiDeps {
  keys: KeyRing;
  hosts: HostPool;
  /** The service's hosts for `GET /_agent/hosts`: every node's in a cluster (serviceHosts.ts). */
  listHosts(): Promise<HostView[]>;
  lostAfterMs: number;
  /** The build's archive on this machine and its content id, or null for an unknown build. */
  build(buildId: string): { file: string; sha256: string } | null;
  /** A host was lost or replaced: its workers' jobs run again elsewhere. */
  onHostLost(workerIds: string[], reason: string): void;
  log(line: string): void;
}

const BODY_LIMIT = 16 * 1024 * 1024;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export class AgentApi {
  private readonly watchdog: NodeJS.Timeout;

  constructor(private readonly d: AgentApiDeps) {
    this.watchdog = setInterval(() => this.check(), Math.max(100, Math.min(1000, d.lostAfterMs / 4)));
    this.watchdog.unref();
  }

  /** How long an agent may hold a poll: short enough that a live host is never taken for lost. */
  get pollWaitMs(): number {
    return Math.max(100, Math.floor(this.d.lostAfterMs / 3));
  }

  readonly handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const auth = this.d.keys.authenticate(req);
    if ('refused' in auth) {
      req.resume();
      return sendError(res, 401, auth.refused);
    }
    const parts = pathOf(req.url ?? '/').split('/'); // ['', '_agent', a, b]
    if (auth.principal.scope !== 'admin') {
      req.resume();
      const what = req.method === 'GET' && parts[2] === 'hosts' ? 'listing the worker hosts' : 'joining as a worker host (strato platform agent)';
      return sendError(res, 403, refusal.admin(auth.principal, what));
    }
    const [a, b] = [decodeURIComponent(parts[2] ?? ''), parts[3]];
    try {
      if (req.method === 'GET' && a === 'hosts' && b === undefined) return sendJson(res, 200, { hosts: await this.d.listHosts() });
      if (req.method === 'GET' && a === 'builds' && b) return this.sendBuild(decodeURIComponent(b), res);
      if (req.method !== 'POST') return sendError(res, 404, `no agent route ${req.method} ${pathOf(req.url ?? '')}`);
      const body = await readJson(req);
      if (a === 'register' && b === undefined) return sendJson(res, 200, this.register(body, req));
      const host = this.d.hosts.get(a);
      if (!(host instanceof RemoteHost) || host.lost)
        return sendError(res, 404, `worker host ${a} is not registered (it was lost, or the platform restarted); register again`);
      if (b === 'poll') {
        const waitMs = Math.min(this.pollWaitMs, typeof body.waitMs === 'number' && body.waitMs >= 0 ? body.waitMs : 0);
        const commands = await host.poll(waitMs, (cb) => res.on('close', cb));
        if (res.destroyed) return host.requeue(commands);
        return sendJson(res, 200, { commands });
      }
      if (b === 'events') {
        host.lastSeen = Date.now();
        for (const e of Array.isArray(body.events) ? (body.events as AgentEvent[]) : []) host.event(e);
        return sendJson(res, 200, {});
      }
      if (b === 'leave') {
        this.lose(host, `worker host ${host.name} left (its agent stopped)`);
        return sendJson(res, 200, {});
      }
      return sendError(res, 404, `unknown agent operation "${b ?? ''}"`);
    } catch (e) {
      if (e instanceof PlatformError) return sendError(res, e.status, e.message);
      throw e;
    }
  };

  close(): void {
    clearInterval(this.watchdog);
    for (const h of this.d.hosts.all()) if (h instanceof RemoteHost) h.lose();
  }

  private register(body: Record<string, unknown>, req: IncomingMessage): HostRegistered {
    const bad = (m: string) => new PlatformError('BAD_REQUEST', m);
    if (typeof body.name !== 'string' || !NAME.test(body.name))
      throw bad(
        `the host name ${typeof body.name === 'string' ? quoted(body.name) : `(${body.name === null ? 'null' : typeof body.name})`} is not valid: letters, digits, '.', '_' and '-', up to 100; pass another with --name`,
      );
    let datacenter: string | undefined;
    if (body.datacenter !== undefined && body.datacenter !== null) {
      const dc = checkDatacenters(body.datacenter);
      if (!dc.ok || dc.value.length !== 1) throw bad(`--datacenter: ${dc.ok ? 'give one datacenter' : dc.message}`);
      datacenter = dc.value[0];
    }
    const gpus = body.gpus;
    if (!Array.isArray(gpus) || gpus.some((g) => typeof g !== 'string' || !g)) throw bad('gpus must be a list of GPU names');
    if (body.cudaVersion !== undefined && body.cudaVersion !== null && (typeof body.cudaVersion !== 'string' || !/^\d+\.\d+$/.test(body.cudaVersion)))
      throw bad(`the CUDA version ${JSON.stringify(body.cudaVersion)} is not a version like 12.4; set STRATO_CUDA_VERSION to the driver's`);
    const cpus = typeof body.cpus === 'number' && Number.isInteger(body.cpus) && body.cpus > 0 ? body.cpus : 1;
    if (body.agent !== undefined && (typeof body.agent !== 'string' || !NAME.test(body.agent)))
      throw bad('agent must be the id of the agent, letters and digits');
    const reg: HostRegistration = {
      name: body.name,
      agent: body.agent as string | undefined,
      datacenter,
      cpus,
      gpus: gpus as string[],
      cudaVersion: (body.cudaVersion as string) || undefined,
      version: String(body.version ?? ''),
    };
    // The same name again: the host came back (its agent restarted); what ran under the old registration is gone. The
    // name of a live host is not another agent's to take: each would replace the other, over and over.
    const from = req.socket.remoteAddress ?? 'an unknown address';
    for (const h of this.d.hosts.all()) {
      if (!(h instanceof RemoteHost) || h.name !== reg.name) continue;
      if (h.agent && reg.agent && h.agent !== reg.agent)
        throw conflict(
          `a worker host named ${quoted(reg.name)} is already joined, from ${h.address || 'an unknown address'} (another agent, heard from ` +
            `${Math.round((Date.now() - h.lastSeen) / 1000)} s ago); give this machine a name of its own with --name (the default is its hostname), or stop that agent`,
        );
      this.lose(h, `worker host ${h.name} registered again`);
    }
    const host = new RemoteHost(`h-${randomBytes(6).toString('hex')}`, reg, (id) => this.d.build(id)?.sha256 ?? id, from);
    this.d.hosts.add(host);
    this.d.log(
      `strato platform: worker host ${reg.name} joined from ${from} (${reg.datacenter ?? 'every datacenter'}, ${cpus} CPUs, ` +
        `${reg.gpus.length ? `GPUs ${reg.gpus.join(', ')}` : 'no GPU'})`,
    );
    return { hostId: host.id, pollWaitMs: this.pollWaitMs, lostAfterMs: this.d.lostAfterMs };
  }

  private sendBuild(buildId: string, res: ServerResponse): void {
    const b = this.d.build(buildId);
    if (!b || !fs.existsSync(b.file)) return sendError(res, 404, `build ${buildId} is unknown or its archive is gone; deploy it again`);
    const size = fs.statSync(b.file).size;
    res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': size, 'x-strato-sha256': b.sha256 });
    fs.createReadStream(b.file).pipe(res);
  }

  private check(): void {
    const now = Date.now();
    for (const h of this.d.hosts.all())
      if (h instanceof RemoteHost && !h.lost && now - h.lastSeen > this.d.lostAfterMs)
        this.lose(h, `worker host ${h.name} was lost (nothing from its agent for ${Math.round((now - h.lastSeen) / 100) / 10} s)`);
  }

  private lose(h: RemoteHost, reason: string): void {
    this.d.log(`strato platform: ${reason}; its workers' jobs run again elsewhere and its GPUs leave the pool`);
    this.d.hosts.remove(h.id);
    h.lose();
    this.d.onHostLost(h.workerIds(), reason);
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse((await readBody(req, BODY_LIMIT, 'an agent request')).toString('utf8') || '{}');
  } catch (e) {
    if (e instanceof PlatformError) throw e;
    throw new PlatformError('BAD_REQUEST', `the agent request is not valid JSON: ${(e as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new PlatformError('BAD_REQUEST', 'the agent request must be a JSON object');
  return parsed as Record<string, unknown>;
}
