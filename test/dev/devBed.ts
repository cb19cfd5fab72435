// What the `strato dev` test files share: a test platform, projects made by `strato init` in a folder of their own, dev
// servers started on it (stopped at the end), and calls to their routes.
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';
import { startServing, type DevProcess } from '../helpers/devServer';
import { startTestPlatform, type TestPlatform } from '../helpers/platform';

export interface DevBed {
  /** The folder the projects are made in. */
  readonly tmp: string;
  readonly platform: TestPlatform;
  /** STRATO_API_URL and STRATO_API_KEY of the test platform. */
  readonly env: NodeJS.ProcessEnv;
  /** Dev servers to stop when the file's tests end. */
  readonly running: DevProcess[];
}

/** Registers the file's before and after hooks; the bed's fields are set once `before` ran. */
export function useDevBed(): DevBed {
  const bed = { running: [] as DevProcess[] } as { tmp: string; platform: TestPlatform; env: NodeJS.ProcessEnv; running: DevProcess[] };
  before(async () => {
    bed.tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-dev-'));
    bed.platform = await startTestPlatform();
    bed.env = { STRATO_API_URL: bed.platform.url, STRATO_API_KEY: bed.platform.key };
  });
  after(async () => {
    for (const d of bed.running) await d.stop();
    await bed.platform?.close();
    rmSync(bed.tmp, { recursive: true, force: true });
  });
  return bed;
}

/** `strato init NAME` in the bed's folder: the template project's folder. */
export async function project(bed: DevBed, name: string): Promise<string> {
  const r = await runCli(['init', name], { cwd: bed.tmp });
  assert.equal(r.code, 0, r.stderr);
  return path.join(bed.tmp, name);
}

/** A dev server (or `run`) of the project on a random port of 127.0.0.1, stopped when the file's tests end. */
export async function serve(bed: DevBed, dir: string, args: string[] = [], command: 'dev' | 'run' = 'dev'): Promise<DevProcess> {
  const d = await startServing(['--host', '127.0.0.1', '--port', String(20000 + Math.floor(Math.random() * 20000)), ...args], {
    cwd: dir,
    env: bed.env,
    command,
  });
  bed.running.push(d);
  return d;
}

/** The names of the live endpoints the app's `live` environment holds, sorted. */
export async function liveEndpoints(bed: DevBed, app: string): Promise<string[]> {
  const a = await bed.platform.cp.findApp(app);
  const live = a?.environments.find((e) => e.name === 'live');
  return live ? (await bed.platform.cp.listEndpoints(live.id)).map((e) => e.name).sort() : [];
}

/** A JSON call to a route of a dev server: its status and parsed body (null when empty). */
export async function call(port: number, method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
