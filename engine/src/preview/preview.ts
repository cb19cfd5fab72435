// `strato deploy --preview`: the same build and deploy as `strato deploy`, to a private embedded platform on
// loopback whose workers are containers (one per endpoint) on a network of their own; stop() removes them all.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Endpoint } from '../api/controlPlane';
import { readDotEnv } from '../api/config';
import type { BuildResult } from '../build';
import { DockerEngine, createNetwork, imageExists, pullImage, runtimes, type NetworkInfo } from '../containers';
import { deployProject, appNameFor } from '../deploy';
import { startPlatform, type RunningPlatform } from '../platform/platform';
import type { Diagnostic } from '../project';
import { UserError } from '../util/errors';
import { dataDirPrefix, LeftoversError, removeLeftovers, takeOver } from './cleanup';
import { forward, type Forwarder } from './forward';
import { ContainerLauncher } from './launcher';
import { buildPackageImage, checkImageName, packageImageTag } from './image';
import { previewStateFile, writePreviewState } from './state';

export type PreviewStep = 'build' | 'images' | 'network' | 'containers' | 'ready';
export const PREVIEW_STEPS: readonly PreviewStep[] = ['build', 'images', 'network', 'containers', 'ready'];

export interface PreviewOptions {
  env?: string;
  exclude?: string[];
  /** Base images instead of the manifest's (`strato/worker-cpu:py3.11`, `strato/worker-gpu:py3.11`). */
  cpuImage?: string;
  gpuImage?: string;
  /** DOCKER_HOST (unix://PATH); default: the environment's, else /var/run/docker.sock. */
  dockerHost?: string;
  onStep?: (step: PreviewStep, phase: 'start' | 'done', detail?: string, ms?: number) => void;
  onProgress?: (message: string) => void;
  onWarning?: (d: Diagnostic) => void;
  readyTimeoutMs?: number;
  /** Asked while the preview waits for its workers: true ends the wait (Ctrl+C during the start). */
  cancelled?: () => boolean;
  log?: (line: string) => void;
}

export interface RunningPreview {
  /** The private platform in front of the containers ({base_url} of every sample call). */
  url: string;
  apiKey: string;
  app: string;
  environment: string;
  endpoints: Endpoint[];
  buildResult: BuildResult;
  /** Image each endpoint runs in. */
  images: Map<string, string>;
  network: string;
  /** Set when GPU endpoints run on the CPU (the engine has no NVIDIA runtime). */
  gpuNote: string | null;
  problems: Array<{ endpoint: string; error: string }>;
  durations: Record<PreviewStep, number>;
  stop(): Promise<void>;
}

/** The label that finds a project's preview resources again (its path, hashed). */
export function previewKey(root: string): string {
  return createHash('sha256').update(fs.realpathSync(root)).digest('hex').slice(0, 12);
}

export async function startPreview(root: string, o: PreviewOptions = {}): Promise<RunningPreview> {
  const log = o.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const dotEnv = readDotEnv(path.join(root, '.env'));
  // Flags first, then the environment, then the project's .env; a name that is none is refused before the build.
  const cpuImage = baseImageChoice('cpu', o.cpuImage, dotEnv);
  const gpuImage = baseImageChoice('gpu', o.gpuImage, dotEnv);
  const engine = await new DockerEngine(o.dockerHost).connect();
  const app = appNameFor(root);
  const key = previewKey(root);
  const labels = { 'strato.preview': key, 'strato.app': app };
  const stateFile = previewStateFile(root);
  // Held until stop() ends: nothing of this project's preview is made, or removed, by two processes at once.
  const lock = await takeOver(engine, root, key, o.onProgress);

  const durations = {} as Record<PreviewStep, number>;
  const begin = (s: PreviewStep) => {
    o.onStep?.(s, 'start');
    return performance.now();
  };
  const end = (s: PreviewStep, t: number, detail: string) => {
    durations[s] = performance.now() - t;
    o.onStep?.(s, 'done', detail, durations[s]);
  };

  const images = new Map<string, string>();
  const secrets = Object.fromEntries(Object.entries(dotEnv).filter(([k]) => !k.startsWith('STRATO_')));
  // The user's key, when they have one, so that sample calls and scripts work unchanged.
  const apiKey = process.env.STRATO_API_KEY || dotEnv.STRATO_API_KEY || undefined;
  let network: NetworkInfo | null = null;
  let forwarder: Forwarder | null = null;
  let platform: RunningPlatform | null = null;
  let gpus = false;
  const launcher = new ContainerLauncher({
    engine,
    network: () => ({ name: network!.name, gateway: network!.gateway, platformPort: forwarder!.port }),
    images,
    gpus: () => gpus,
    labels,
    prefix: `strato-${app}`.toLowerCase().replace(/[^a-z0-9_.-]/g, '-'),
    secrets,
    log,
  });
  let dataDir = '';
  let stopping: Promise<void> | null = null;
  let platformStarting: Promise<RunningPlatform> | null = null;
  /** Removes everything; rejects with a LeftoversError naming what the engine would not remove. */
  const stop = () =>
    (stopping ??= (async () => {
      let left: LeftoversError | null = null;
      try {
        // The platform may still be starting (a failure during the build): wait for it, then close it.
        const running = platform ?? (await platformStarting?.catch(() => null));
        await running?.close().catch((e: Error) => log(`strato preview: ${e.message}`));
        // Workers the platform killed without waiting: their containers still hold the network, their exits the log.
        await launcher.settled(15_000);
        await forwarder?.close();
        // The engine may be gone (stopped mid-preview): what this machine holds is removed all the same.
        await removeLeftovers(engine, `strato.preview=${key}`, log).catch((e: Error) => {
          if (e instanceof LeftoversError) left = e;
          else log(`strato preview: the Docker engine did not answer (${e.message}); its containers and network go with it, or with the next preview`);
        });
        if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
        const state = readState(stateFile);
        if (state?.pid === process.pid) fs.rmSync(stateFile, { force: true });
      } finally {
        lock.release();
      }
      if (left) throw left;
    })());

  try {
    dataDir = fs.mkdtempSync(dataDirPrefix(key));
    platformStarting = startPlatform({ dataDir, apiKey, port: 0, writeStateFile: false, workerLauncher: launcher, workerStopGraceMs: 3000, log });
    platformStarting.catch(() => {});
    let deployStarted = 0;
    let count = 0;
    // Filled in once the platform is up (after the build): the client reads it at each call.
    const target = { baseUrl: '', apiKey: '' };
    const r = await deployProject(root, {
      target,
      env: o.env,
      exclude: o.exclude,
      workers: { min: 1, max: 1 },
      readyTimeoutMs: o.readyTimeoutMs ?? 60_000,
      cancelled: o.cancelled,
      onProgress: o.onProgress,
      onWarning: o.onWarning,
      onStep: (step, phase, detail, ms) => {
        if (step === 'build') {
          if (phase === 'start') o.onStep?.('build', 'start');
          else {
            durations.build = ms ?? 0;
            o.onStep?.('build', 'done', detail, ms);
          }
        } else if (step === 'upload' && phase === 'start') deployStarted = begin('containers');
        else if (step === 'provision' && phase === 'done') end('containers', deployStarted, `${count} container(s) on ${network?.name}`);
        else if (step === 'configure' && phase === 'start') deployStarted = begin('ready');
        else if (step === 'configure' && phase === 'done') end('ready', deployStarted, detail ?? '');
      },
      afterBuild: async (b) => {
        count = Object.keys(b.manifest.resources).length;
        let t = begin('images');
        gpus = (await runtimes(engine)).includes('nvidia');
        await checkImages(engine, b, images, { ...o, cpuImage, gpuImage });
        await addPackages(engine, b, images, o.onProgress);
        end('images', t, [...new Set(images.values())].join(', '));
        t = begin('network');
        network = await createNetwork(engine, `strato-preview-${app}-${key.slice(0, 6)}`.toLowerCase(), labels);
        platform = await platformStarting!;
        forwarder = await forward(network.gateway, platform.port);
        target.baseUrl = platform.url;
        target.apiKey = platform.apiKey;
        end('network', t, `${network.name} (${network.gateway}), platform in front at ${platform.url}`);
        writePreviewState(root, { pid: process.pid, network: network.name, url: platform.url, startedAt: Date.now() });
      },
    });
    writePreviewState(root, {
      pid: process.pid,
      network: network!.name,
      url: platform!.url,
      startedAt: Date.now(),
      environment: r.environment.name,
      endpoints: r.endpoints.map((e) => ({ name: e.name, type: e.type, url: e.url, routes: e.routes })),
    });
    const gpuEndpoints = Object.values(r.buildResult.manifest.resources).filter((res) => !res.cpu).length;
    return {
      url: platform!.url,
      apiKey: platform!.apiKey,
      app: r.app.name,
      environment: r.environment.name,
      endpoints: r.endpoints,
      buildResult: r.buildResult,
      images,
      network: network!.name,
      gpuNote: gpuEndpoints && !gpus ? 'this Docker engine has no NVIDIA runtime: GPU endpoints run on the CPU' : null,
      // `strato logs <name>` alone reads the background platform: this one is named, so that the log is found.
      problems: r.problems.map((p) => ({
        ...p,
        error: `${p.error} (its log: STRATO_API_URL=${platform!.url} STRATO_API_KEY=${platform!.apiKey} strato logs ${p.endpoint})`,
      })),
      durations,
      stop,
    };
  } catch (e) {
    const left = await stop().then(
      () => null,
      (l: Error) => (l instanceof LeftoversError ? l : (log(`strato preview: ${l.message}`), null)),
    );
    if (!left) throw e;
    const what = `${left.message}: remove ${left.left.length === 1 ? 'it' : 'them'} with docker rm -f / docker network rm, or start the preview again, which removes ${left.left.length === 1 ? 'it' : 'them'}`;
    // Stopped by a signal (exit 130): what is left is the news. Another failure keeps its own message, and says it too.
    if (e instanceof UserError && e.exitCode === 130) throw new UserError(`the preview was stopped before it was up, but ${what}.`, 130);
    log(`strato preview: ${what}`);
    throw e;
  }
}

/** The base image for a kind of hardware the user named (flag, environment or .env), checked; undefined: the manifest's. */
function baseImageChoice(kind: 'cpu' | 'gpu', flag: string | undefined, dotEnv: Record<string, string>): string | undefined {
  const variable = `STRATO_PREVIEW_${kind.toUpperCase()}_IMAGE`;
  if (flag !== undefined) return checkImageName(flag, `--${kind}-image`);
  if (process.env[variable]) return checkImageName(process.env[variable]!, `${variable} in the environment`);
  if (dotEnv[variable]) return checkImageName(dotEnv[variable], `${variable} in .env`);
  return undefined;
}

/** Every endpoint's image is present, or pulled; otherwise say which one and the command that makes it. */
async function checkImages(engine: DockerEngine, b: BuildResult, images: Map<string, string>, o: PreviewOptions): Promise<void> {
  // An endpoint's own image (image=) wins; then the flags; then its hardware's base image.
  for (const [name, r] of Object.entries(b.manifest.resources)) images.set(name, r.image ?? (r.cpu ? o.cpuImage : o.gpuImage) ?? r.imageName);
  // Every missing image is named at once: building only the first named would stop the next run at the second.
  const missing: string[] = [];
  let why = '';
  for (const image of new Set(images.values())) {
    if (await imageExists(engine, image)) continue;
    o.onProgress?.(`pulling ${image}`);
    const pulled = await pullImage(engine, image);
    if (pulled.ok && (await imageExists(engine, image))) continue;
    const users = [...images].filter(([, i]) => i === image).map(([n]) => n);
    missing.push(`${image} (for ${users.join(', ')})`);
    why = pulled.ok ? 'pulled, but not found' : pulled.message;
  }
  if (!missing.length) return;
  const tags = missing.map((m) => m.slice(0, m.indexOf(' (')));
  throw new UserError(
    `${missing.length === 1 ? 'image' : 'images'} ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not in the Docker engine and ` +
      `cannot be pulled (${why}): run strato preview image --tag ${tags.join(' ')} to build ${missing.length === 1 ? 'it' : 'them'} from this machine's Python.`,
  );
}

/** Endpoints with system_dependencies run in their image plus those packages (built once per image and package set). */
async function addPackages(engine: DockerEngine, b: BuildResult, images: Map<string, string>, onProgress?: (m: string) => void): Promise<void> {
  for (const [name, r] of Object.entries(b.manifest.resources)) {
    const packages = r.system_dependencies ?? [];
    const base = images.get(name);
    if (!packages.length || !base) continue;
    const tag = packageImageTag(base, packages);
    if (!(await imageExists(engine, tag))) {
      onProgress?.(`adding ${packages.join(', ')} to ${base}`);
      await buildPackageImage({ engine, base, tag, packages, endpoint: name });
    }
    images.set(name, tag);
  }
}

function readState(file: string): { pid: number } | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as { pid: number };
  } catch {
    return null;
  }
}
