// The few Engine API resources Strato uses: images (inspect, pull, import from a root filesystem tar), networks,
// and containers (create, start, wait, kill, remove, logs), with labels so that whatever is made can be found again.
import type { IncomingMessage } from 'node:http';
import { EngineError, type DockerEngine } from './engine';
import { UserError } from '../util/errors';

export interface ContainerSpec {
  name: string;
  image: string;
  cmd: string[];
  env: Record<string, string>;
  workingDir?: string;
  labels: Record<string, string>;
  /** host path -> container path, read-only. */
  /** Bind mounts, read-only unless `writable` (network volumes). */
  mounts?: Array<{ host: string; container: string; writable?: boolean }>;
  network?: string;
  /** Names the container answers to on its network (besides its own name). */
  aliases?: string[];
  extraHosts?: string[];
  /** GPUs for the NVIDIA runtime (DeviceRequests). */
  gpuCount?: number;
}

export interface NetworkInfo {
  id: string;
  name: string;
  gateway: string;
}

const q = (params: Record<string, string | number | boolean>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');
const labelFilter = (label: string) => encodeURIComponent(JSON.stringify({ label: [label] }));

export async function imageExists(d: DockerEngine, ref: string): Promise<boolean> {
  const r = await d.call('GET', `/images/${encodeURIComponent(ref)}/json`, undefined, [404]);
  return r.status === 200;
}

/** Pulls an image; false when no registry has it or none is reachable (the engine's message is returned). */
export async function pullImage(d: DockerEngine, ref: string): Promise<{ ok: true } | { ok: false; message: string }> {
  const [repo, tag] = splitRef(ref);
  try {
    const r = await d.call('POST', `/images/create?${q({ fromImage: repo, tag })}`);
    // The answer is a stream of JSON progress lines; a failure arrives as an `error` line with status 200.
    const failed = r.body
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { error?: string })
      .find((l) => l.error);
    return failed ? { ok: false, message: failed.error! } : { ok: true };
  } catch (e) {
    if (e instanceof EngineError) return { ok: false, message: e.message };
    throw e;
  }
}

/** `docker import`: an image made from a root filesystem tar stream, with the command and environment given. */
export async function importImage(d: DockerEngine, ref: string, rootfs: NodeJS.ReadableStream, changes: string[]): Promise<void> {
  const [repo, tag] = splitRef(ref);
  const params = `${q({ fromSrc: '-', repo, tag })}${changes.map((c) => `&changes=${encodeURIComponent(c)}`).join('')}`;
  const r = await d.upload(`/images/create?${params}`, rootfs, 'application/x-tar');
  const text = r.body.toString('utf8');
  const err = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { error?: string })
    .find((l) => l.error);
  if (r.status >= 300 || err) throw new EngineError(err?.error ?? `image import answered ${r.status}: ${text.slice(0, 200)}`, r.status);
}

function splitRef(ref: string): [string, string] {
  const at = ref.lastIndexOf(':');
  return at > ref.lastIndexOf('/') ? [ref.slice(0, at), ref.slice(at + 1)] : [ref, 'latest'];
}

export async function createNetwork(d: DockerEngine, name: string, labels: Record<string, string>): Promise<NetworkInfo> {
  let Id: string;
  try {
    ({ Id } = await d.json<{ Id: string }>('POST', '/networks/create', { Name: name, Driver: 'bridge', CheckDuplicate: true, Labels: labels }));
  } catch (e) {
    // Made by something else (a preview's lock keeps previews of one project apart): the user decides what goes.
    if (e instanceof EngineError && e.status === 409)
      throw new UserError(`a Docker network named ${name} already exists: remove it (docker network rm ${name}) and start again.`);
    throw e;
  }
  const info = await d.json<{ IPAM: { Config: Array<{ Gateway?: string }> } }>('GET', `/networks/${Id}`);
  const gateway = info.IPAM.Config.find((c) => c.Gateway)?.Gateway;
  if (!gateway) throw new EngineError(`network ${name} has no gateway address`, 500);
  return { id: Id, name, gateway };
}

export async function removeNetwork(d: DockerEngine, idOrName: string): Promise<void> {
  await d.call('DELETE', `/networks/${encodeURIComponent(idOrName)}`, undefined, [404]);
}

export async function listNetworks(d: DockerEngine, label: string): Promise<Array<{ Id: string; Name: string }>> {
  return d.json('GET', `/networks?filters=${labelFilter(label)}`);
}

export async function listContainers(d: DockerEngine, label: string): Promise<Array<{ Id: string; Names: string[]; State: string }>> {
  return d.json('GET', `/containers/json?all=1&filters=${labelFilter(label)}`);
}

export async function createContainer(d: DockerEngine, s: ContainerSpec): Promise<string> {
  const body = {
    Image: s.image,
    Cmd: s.cmd,
    Env: Object.entries(s.env).map(([k, v]) => `${k}=${v}`),
    WorkingDir: s.workingDir,
    Labels: s.labels,
    HostConfig: {
      // Python as PID 1 would ignore SIGTERM; an init process forwards it.
      Init: true,
      Binds: (s.mounts ?? []).map((m) => `${m.host}:${m.container}:${m.writable ? 'rw' : 'ro'}`),
      ExtraHosts: s.extraHosts,
      NetworkMode: s.network,
      DeviceRequests: s.gpuCount ? [{ Driver: 'nvidia', Count: s.gpuCount, Capabilities: [['gpu']] }] : undefined,
    },
    NetworkingConfig: s.network ? { EndpointsConfig: { [s.network]: { Aliases: s.aliases ?? [] } } } : undefined,
  };
  const { Id } = await d.json<{ Id: string }>('POST', `/containers/create?${q({ name: s.name })}`, body);
  return Id;
}

export async function startContainer(d: DockerEngine, id: string): Promise<void> {
  await d.call('POST', `/containers/${id}/start`, undefined, [304]);
}

/** The container's address on a network (the platform forwards load-balanced requests to it). */
export async function containerAddress(d: DockerEngine, id: string, network: string): Promise<string> {
  const info = await d.json<{ NetworkSettings: { Networks: Record<string, { IPAddress: string }> } }>('GET', `/containers/${id}/json`);
  return info.NetworkSettings.Networks[network]?.IPAddress ?? '';
}

/** Waits for the container to stop; its exit code. */
export async function waitContainer(d: DockerEngine, id: string): Promise<number> {
  const r = await d.json<{ StatusCode: number }>('POST', `/containers/${id}/wait`);
  return r.StatusCode;
}

export async function killContainer(d: DockerEngine, id: string, signal: string): Promise<void> {
  await d.call('POST', `/containers/${id}/kill?${q({ signal })}`, undefined, [404, 409]);
}

export async function removeContainer(d: DockerEngine, id: string): Promise<void> {
  await d.call('DELETE', `/containers/${id}?force=1&v=1`, undefined, [404, 409]);
}

/** Follows a container's output (no TTY: the engine multiplexes stdout and stderr in 8-byte-headed frames). */
export async function followLogs(d: DockerEngine, id: string, onText: (text: string, isErr: boolean) => void): Promise<IncomingMessage> {
  const res = await d.stream(`/containers/${id}/logs?follow=1&stdout=1&stderr=1`);
  let pending: Buffer = Buffer.alloc(0);
  res.on('data', (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      onText(pending.subarray(8, 8 + size).toString('utf8'), pending[0] === 2);
      pending = pending.subarray(8 + size);
    }
  });
  return res;
}

/** Engine runtimes (an `nvidia` one gives containers GPUs). */
export async function runtimes(d: DockerEngine): Promise<string[]> {
  const info = await d.json<{ Runtimes?: Record<string, unknown> }>('GET', '/info');
  return Object.keys(info.Runtimes ?? {});
}

/** `docker build` of a context tar (a Dockerfile at its root), tagged `ref`; the engine's error, if any, is thrown. */
export async function buildImage(d: DockerEngine, ref: string, context: NodeJS.ReadableStream): Promise<void> {
  const r = await d.upload(`/build?${q({ t: ref, q: true, rm: true, forcerm: true })}`, context, 'application/x-tar');
  const text = r.body.toString('utf8');
  const err = text
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l) as { error?: string };
      } catch {
        return {};
      }
    })
    .find((l) => l.error);
  if (r.status >= 300 || err) throw new EngineError(err?.error ?? `image build answered ${r.status}: ${text.slice(0, 200)}`, r.status);
}
