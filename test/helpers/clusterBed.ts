// What the multi-node tests share: a PostgreSQL server of the file's own (their suites skip where the package is
// missing), a temporary folder, and the nodes they start, all stopped and removed after the file's tests; and how they
// address one node and count the workers alive on this machine.
import { after, before } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PlatformProcess, TestPlatform } from './platform';
import { postgresMissing, startPostgres, type TestPostgres } from './postgres';

export interface ClusterBed {
  /** Why the suites skip (no PostgreSQL here), else null. */
  skip: string | null;
  tmp: string;
  /** In-process nodes to close, and node processes to kill, after the file's tests. */
  platforms: TestPlatform[];
  processes: PlatformProcess[];
  /** The file's PostgreSQL server (started before its tests). */
  postgres(): TestPostgres;
}

export function clusterBed(prefix: string): ClusterBed {
  const skip = postgresMissing();
  let server: TestPostgres | undefined;
  const bed: ClusterBed = {
    skip,
    tmp: fs.mkdtempSync(path.join(os.tmpdir(), prefix)),
    platforms: [],
    processes: [],
    postgres: () => {
      if (!server) throw new Error(`no PostgreSQL server: ${skip ?? 'it did not start'}`);
      return server;
    },
  };
  before(async () => {
    if (!skip) server = await startPostgres();
  });
  after(async () => {
    for (const p of bed.processes) p.killGroup();
    for (const p of bed.platforms) await p.close().catch(() => undefined);
    server?.stop();
    fs.rmSync(bed.tmp, { recursive: true, force: true });
  });
  return bed;
}

/** The same endpoint URL on another node. */
export const on = (node: { url: string }, endpointUrl: string) => endpointUrl.replace(/^https?:\/\/[^/]+/, node.url);

/**
 * Workers of the endpoint alive on this machine: the distinct worker ids in the environments of its processes (workers
 * started without templates; one worker may be several processes, as behind an interpreter shim).
 */
export function liveWorkers(endpointId: string): Set<string> {
  const ids = new Set<string>();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      const id = env.find((e) => e.startsWith('STRATO_WORKER_ID='));
      if (id && env.includes(`STRATO_ENDPOINT_ID=${endpointId}`)) ids.add(id);
    } catch {
      /* gone meanwhile, or not ours */
    }
  }
  return ids;
}
