// A worker host given several nodes of a cluster (issue 11; multinode.test.ts has the rest of the service): it joins
// the first, runs the workers that node places on it, and when that node dies (SIGKILL) it joins the next, which
// places its workers there. Real PostgreSQL, real node processes, a real agent and real Python workers; the nodes
// serve another datacenter than the endpoint's, so its workers can only run on the host.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ControlPlaneClient } from '../../engine/src/api/controlPlane';
import { startAgent, type RunningAgent } from '../../engine/src/platform/agent/agent';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, PYTHON, spawnPlatformProcess, TEST_KEY, waitUntil, type PlatformProcess } from '../helpers/platform';
import { clusterBed } from '../helpers/clusterBed';
import { queueSpec } from '../helpers/testWorkers';

const { skip, tmp, processes, postgres } = clusterBed('strato-multinode-agents-');

const WHERE_PY = `
import os


def where():
    return {"host": os.environ.get("STRATO_WORKER_HOST", "platform"), "platform": os.environ["STRATO_PLATFORM_URL"]}
`;

let agent: RunningAgent | undefined;

// The agent leaves before the bed's nodes are killed (registered first, its after hook would run first).
const closeAgent = () => agent?.close().catch(() => undefined);

type JobJson = { status: string; output?: { host: string; platform: string }; error?: string };

describe('a worker host given several nodes', { skip: skip ?? false }, () => {
  test('joins the first; when that node is SIGKILLed it joins the next, whose jobs run on it', async () => {
    const database = await postgres().createDatabase();
    const args = ['--database', database, '--node-lost-ms', '3000', '--datacenter', 'EU-RO-1'];
    const a = await spawnPlatformProcess(path.join(tmp, 'a'), args);
    processes.push(a);
    const b = await spawnPlatformProcess(path.join(tmp, 'b'), args);
    processes.push(b);
    const logs: string[] = [];
    agent = await startAgent({
      url: `${a.url},${b.url}`,
      key: TEST_KEY,
      name: 'h1',
      datacenter: 'US-KS-2',
      gpus: [],
      dataDir: path.join(tmp, 'agent'),
      python: PYTHON,
      log: (l) => logs.push(l),
    });
    try {
      assert.ok(
        logs.some((l) => l.startsWith(`joined ${a.url} as worker host h1`)),
        logs.join('\n'),
      );
      // Deployed once a host serves its datacenter (the nodes serve another one).
      const cp = new ControlPlaneClient({ baseUrl: a.url, apiKey: TEST_KEY });
      const spec = queueSpec('pinned', 'where', { file: 'where.py', workers: [0, 1], resource: { datacenters: ['US-KS-2'] } });
      const eps = await deploy(cp, await buildTestArtifact({ 'where.py': WHERE_PY }, [spec]));
      const runsync = async (node: PlatformProcess) => {
        const r = await call('POST', `${eps.pinned.url.replace(/^https?:\/\/[^/]+/, node.url)}/runsync?wait=60000`, { body: { input: {} } });
        assert.equal(r.status, 200, r.text);
        return r.json as JobJson;
      };
      const first = await runsync(a);
      assert.equal(first.status, 'COMPLETED', JSON.stringify(first));
      assert.deepEqual(first.output, { host: 'h1', platform: a.url });

      await a.crash();
      const moved = await waitUntil('the host to join the other node', () => logs.find((l) => l.includes(`joined ${b.url} as worker host h1`)), 30_000);
      assert.match(moved, new RegExp(`^${a.url.replace(/[.]/g, '\\.')} was out of reach for 5 s`));
      const second = await runsync(b);
      assert.equal(second.status, 'COMPLETED', JSON.stringify(second));
      assert.deepEqual(second.output, { host: 'h1', platform: b.url });
    } finally {
      await closeAgent();
    }
  });
});
