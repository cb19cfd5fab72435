// Platform tests' shared pieces: a real platform on 127.0.0.1 (in-process, or as a `strato platform serve`
// child process for crash tests; with STRATO_TEST_NODES=3, three nodes over one database behind a round-robin
// front: the conformance run of test/platform/postgres.test.ts), deployment of a test artifact through the real control plane client, raw
// HTTP calls that keep status and body exactly, and bounded waiting.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ControlPlaneClient, type Endpoint, type EndpointInput } from '../../engine/src/api/controlPlane';
import { JobsClient } from '../../engine/src/api/jobs';
import { startPlatform, type RunningPlatform } from '../../engine/src/platform/platform';
import type { PlatformOptions } from '../../engine/src/platform/options';
import type { TestArtifact } from './artifact';
import { startBalancer } from './balancer';
import { testDatabase } from './postgres';

export const REPO = path.resolve(__dirname, '..', '..');
export const PYTHON = process.env.STRATO_PYTHON || 'python3';
/** One pre-initialised database for every test platform of this machine (initdb once). */
export const TEMPLATE_DIR = path.join(os.tmpdir(), 'strato-test-pglite-template');
export const TEST_KEY = 'test-key-0123456789abcdef';

export interface TestPlatform {
  platform: RunningPlatform;
  /** The instance id of every node (one, unless the platform is a test cluster). */
  nodeIds: string[];
  url: string;
  key: string;
  dataDir: string;
  cp: ControlPlaneClient;
  jobs: JobsClient;
  logs: string[];
  close(): Promise<void>;
}

/** Nodes of every test platform: STRATO_TEST_NODES (with STRATO_TEST_DATABASE), else 1. */
export const TEST_NODES = Number(process.env.STRATO_TEST_NODES ?? 1);

export async function startTestPlatform(opts: Partial<PlatformOptions> = {}): Promise<TestPlatform> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'strato-platform-'));
  const logs: string[] = [];
  const options = async (more: Partial<PlatformOptions>) =>
    ({
      // The conformance run (test/platform/postgres.test.ts) points every test platform at a PostgreSQL server.
      database: await testDatabase(dataDir),
      port: 0,
      apiKey: TEST_KEY,
      python: PYTHON,
      heartbeatMs: 250,
      writeStateFile: false,
      workerStopGraceMs: 2000,
      log: (l: string) => {
        logs.push(l);
        if (process.env.STRATO_TEST_VERBOSE) process.stderr.write(`${l}\n`);
      },
      pgliteTemplateDir: TEMPLATE_DIR,
      ...opts,
      dataDir,
      ...more,
    }) as PlatformOptions;
  let platform: RunningPlatform;
  let nodeIds: string[];
  if (TEST_NODES > 1 && process.env.STRATO_TEST_DATABASE && !opts.database) {
    // Nodes over one database, each with a data dir of its own (the same ones again after a restart), behind one URL
    // that sends each request to the next node: every URL the platform gives out is the front's.
    const front = await startBalancer();
    const nodes: RunningPlatform[] = [];
    try {
      for (let i = 0; i < TEST_NODES; i++) nodes.push(await startPlatform(await options({ dataDir: path.join(dataDir, `node${i}`), publicUrl: front.url })));
    } catch (e) {
      await Promise.all(nodes.map((n) => n.close()));
      await front.close();
      throw e;
    }
    front.targets.push(...nodes.map((n) => `http://127.0.0.1:${n.port}`)); // each node's own address (its url is the front's)
    nodeIds = nodes.map((n) => n.instanceId);
    platform = {
      url: front.url,
      port: Number(new URL(front.url).port),
      apiKey: TEST_KEY,
      dataDir,
      instanceId: nodeIds[0],
      stats: () => nodes[0].stats(),
      close: async () => {
        await Promise.all(nodes.map((n) => n.close()));
        await front.close();
      },
    };
  } else {
    platform = await startPlatform(await options({}));
    nodeIds = [platform.instanceId];
  }
  const target = { baseUrl: platform.url, apiKey: platform.apiKey };
  return {
    platform,
    nodeIds,
    url: platform.url,
    key: platform.apiKey,
    dataDir,
    cp: new ControlPlaneClient(target),
    jobs: new JobsClient(target),
    logs,
    close: async () => {
      await platform.close();
      if (!opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates app and environment, uploads the artifact, deploys it and saves the named endpoints. */
export async function deploy(
  cp: ControlPlaneClient,
  artifact: TestArtifact,
  o: { app?: string; env?: string; endpoints?: string[]; overrides?: Partial<EndpointInput> } = {},
): Promise<Record<string, Endpoint>> {
  const appName = o.app ?? `app${Math.random().toString(36).slice(2, 8)}`;
  const app = (await cp.findApp(appName)) ?? (await cp.createApp(appName));
  const envName = o.env ?? 'production';
  const env = app.environments.find((e) => e.name === envName) ?? (await cp.createEnvironment(app.id, envName));
  const build = await cp.uploadBuild(app.id, artifact.artifactPath, artifact.manifest);
  await cp.deployBuild(env.id, build.id);
  const out: Record<string, Endpoint> = {};
  for (const name of o.endpoints ?? Object.keys(artifact.manifest.resources)) {
    out[name] = await cp.saveEndpoint({ environmentId: env.id, name, ...o.overrides });
  }
  return out;
}

export interface RawResponse {
  status: number;
  text: string;
  json: unknown;
  headers: Headers;
}

/** One HTTP call with the exact status and body (no client-side interpretation). */
export async function call(
  method: string,
  url: string,
  o: { key?: string | null; auth?: string; body?: unknown; raw?: string | Buffer; timeoutMs?: number } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = {};
  if (o.auth !== undefined) headers.authorization = o.auth;
  else if (o.key !== null) headers.authorization = `Bearer ${o.key ?? TEST_KEY}`;
  let body: string | Buffer | undefined = o.raw;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] = 'application/json';
  }
  const r = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(o.timeoutMs ?? 30_000) });
  const text = await r.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: r.status, text, json, headers: r.headers };
}

/** Polls `fn` until it returns a truthy value; fails after `timeoutMs` naming what was awaited. */
export async function waitUntil<T>(what: string, fn: () => Promise<T> | T, timeoutMs = 20_000, everyMs = 50): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Resident memory of a process in bytes (Linux /proc, else ps): what a platform process holds, for the benches. */
export function residentBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    /* not Linux */
  }
  return Number(spawnSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim()) * 1024;
}

export interface PlatformProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** SIGKILL, no cleanup: a crash. */
  crash(): Promise<void>;
  /** SIGTERM and wait. */
  stop(): Promise<void>;
  /** Kills the process group (the platform and the workers it started). */
  killGroup(): void;
}

/** `strato platform serve` from the sources, in its own process group, on a free port. */
export async function spawnPlatformProcess(dataDir: string, extraArgs: string[] = [], port = 0, env: NodeJS.ProcessEnv = {}): Promise<PlatformProcess> {
  const args = [
    '--import',
    'tsx',
    path.join(REPO, 'engine/src/cli/main.ts'),
    'platform',
    'serve',
    '--data-dir',
    dataDir,
    '--port',
    String(port),
    '--api-key',
    TEST_KEY,
    '--python',
    PYTHON,
    '--heartbeat-ms',
    '250',
    ...extraArgs,
  ];
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, STRATO_PGLITE_TEMPLATE: TEMPLATE_DIR, STRATO_DATA_DIR: path.join(dataDir, 'user'), ...env },
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const url = (await waitUntil('the platform to listen', () => /listening on (http:\/\/\S+)/.exec(out)?.[1], 60_000)) as string;
  const pid = child.pid!;
  const killGroup = () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  };
  return {
    child,
    url,
    output: () => out,
    crash: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
    },
    killGroup,
  };
}
