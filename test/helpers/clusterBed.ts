// What the multi-node tests share: a PostgreSQL server of the file's own (their suites skip where the package is
// missing), a temporary folder, and the nodes they start, stopped after each test (each node holds up to eleven of
// the server's connections: a file's worth of nodes left running would exhaust them); and how they address one node
// and count the workers alive on this machine.
import { after, afterEach, before } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnPlatformProcess, type PlatformProcess, type TestPlatform } from './platform';
import { postgresMissing, startPostgres, type TestPostgres } from './postgres';

export interface ClusterBed {
  /** Why the suites skip (no PostgreSQL here), else null. */
  skip: string | null;
  tmp: string;
  /** In-process nodes to close, and node processes to kill, after each test. */
  platforms: TestPlatform[];
  processes: PlatformProcess[];
  /** The file's PostgreSQL server (started before its tests). */
  postgres(): TestPostgres;
  /**
   * `n` node processes on a new database of the server, lost after 3 s without a heartbeat, whose workers are plain
   * processes (no templates: /proc shows each one's worker id); killed after the test.
   */
  nodeProcesses(n: number): Promise<{ database: string; nodes: PlatformProcess[] }>;
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
    async nodeProcesses(n) {
      const database = await bed.postgres().createDatabase();
      const nodes: PlatformProcess[] = [];
      const templates = process.env.STRATO_WORKER_TEMPLATES;
      process.env.STRATO_WORKER_TEMPLATES = '0';
      try {
        for (let i = 0; i < n; i++) {
          nodes.push(await spawnPlatformProcess(path.join(bed.tmp, `node-${nodes.length}-${Date.now()}`), ['--database', database, '--node-lost-ms', '3000']));
          bed.processes.push(nodes[i]);
        }
      } finally {
        if (templates === undefined) delete process.env.STRATO_WORKER_TEMPLATES;
        else process.env.STRATO_WORKER_TEMPLATES = templates;
      }
      return { database, nodes };
    },
  };
  before(async () => {
    if (!skip) server = await startPostgres();
  });
  afterEach(async () => {
    for (const p of bed.processes.splice(0)) p.killGroup();
    for (const p of bed.platforms.splice(0)) await p.close().catch(() => undefined);
  });
  after(() => {
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
