// An upload's three steps (the location, the PUT, the finalize) may each reach another node of a cluster, in any
// order: the database's row is the truth. Before, the node that gave the location kept its own view of it and
// answered a finalize sent back to it "nothing was uploaded" after a PUT to another node, and a node that had received
// an earlier body finalized that one after another node received a later PUT. Real PostgreSQL, two real nodes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { buildTestArtifact } from '../helpers/artifact';
import { call, startTestPlatform, type TestPlatform } from '../helpers/platform';
import { clusterBed } from '../helpers/clusterBed';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';

const { skip, platforms, postgres } = clusterBed('strato-multinode-uploads-');

async function location(n: TestPlatform, appId: string, size: number): Promise<string> {
  const d = await n.cp.query<{ requestBuildUpload: { uploadId: string } }>(
    'mutation($a: ID!, $s: Float!) { requestBuildUpload(appId: $a, size: $s) { uploadId } }',
    {
      a: appId,
      s: size,
    },
  );
  return d.requestBuildUpload.uploadId;
}

async function put(n: TestPlatform, uploadId: string, body: Buffer): Promise<void> {
  const r = await fetch(`${n.url}/_uploads/${uploadId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${n.key}`, 'content-length': String(body.length) },
    body,
  });
  assert.equal(r.status, 200, await r.text());
}

async function finalize(n: TestPlatform, appId: string, uploadId: string, manifest: unknown): Promise<{ id: string; sha256: string }> {
  const d = await n.cp.query<{ finalizeBuild: { id: string; sha256: string } }>(
    'mutation($a: ID!, $u: ID!, $m: String) { finalizeBuild(appId: $a, uploadId: $u, manifest: $m) { id sha256 } }',
    { a: appId, u: uploadId, m: JSON.stringify(manifest) },
  );
  return d.finalizeBuild;
}

describe('uploads across two nodes', { skip: skip ?? false }, () => {
  test('a location from A, the PUT to B, the finalize back on A; and a body A received replaced by a later PUT to B', async () => {
    const database = await postgres().createDatabase();
    const [a, b] = await Promise.all([0, 1].map(() => startTestPlatform({ database })));
    platforms.push(a, b);
    const art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('echo', 'echo')]);
    const bytes = fs.readFileSync(art.artifactPath);
    const sha = createHash('sha256').update(bytes).digest('hex');
    const app = await a.cp.createApp('uploads');
    const env = await a.cp.createEnvironment(app.id, 'production');

    const first = await location(a, app.id, bytes.length);
    await put(b, first, bytes);
    const built = await finalize(a, app.id, first, art.manifest);
    assert.equal(built.sha256, sha);

    const second = await location(a, app.id, bytes.length);
    await put(a, second, Buffer.alloc(bytes.length, 'x')); // A holds this body...
    await put(b, second, bytes); // ...which B's later PUT replaces
    const again = await finalize(a, app.id, second, art.manifest);
    assert.equal(again.sha256, sha);
    await a.cp.deployBuild(env.id, again.id);
    const ep = await a.cp.saveEndpoint({ environmentId: env.id, name: 'echo' });
    const r = await call('POST', `${ep.url}/runsync`, { body: { input: { n: 1 } } });
    assert.match(r.text, /"output":\{"echo":\{"n":1\}\}/, 'the build A unpacked is the later body');
  });
});
