// The control plane (GraphQL at {base_url}/graphql) through the typed client: apps, environments, build
// upload and finalize, deploy, endpoints (create or update, delete, list, look up by name), their URLs and
// environment, errors with codes, the key, and state kept across a restart of the platform.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { ControlPlaneError } from '../../engine/src/api/controlPlane';
import { buildProject } from '../../engine/src/build';
import { templateFiles } from '../../engine/src/init/template';
import { buildTestArtifact, type TestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';
import { queueSpec, WORKER_PY } from '../helpers/testWorkers';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-cp-'));
let tp: TestPlatform;
let art: TestArtifact;

before(async () => {
  tp = await startTestPlatform({ dataDir });
  art = await buildTestArtifact({ 'worker.py': WORKER_PY }, [
    queueSpec('env-info', 'env_info', { env: { MY_VAR: 'from-manifest' } }),
    queueSpec('echo', 'echo'),
  ]);
});
after(async () => {
  await tp?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const code = (c: string) => (e: unknown) => e instanceof ControlPlaneError && e.code === c;

/** The files of a build on every node's disk (archive and unpacked tree), relative to the data dir. */
function filesOf(buildId: string): string[] {
  return (fs.readdirSync(dataDir, { recursive: true }) as string[]).filter((f) => path.basename(f).startsWith(buildId));
}

describe('apps and environments', () => {
  test('create, find, list; duplicates are CONFLICT and bad names BAD_REQUEST', async () => {
    const app = await tp.cp.createApp('shop');
    assert.match(app.id, /^app_/);
    assert.equal((await tp.cp.findApp('shop'))?.id, app.id);
    assert.equal(await tp.cp.findApp('nope'), null);
    await assert.rejects(tp.cp.createApp('shop'), code('CONFLICT'));
    await assert.rejects(tp.cp.createApp('bad name!'), code('BAD_REQUEST'));
    const env = await tp.cp.createEnvironment(app.id, 'staging');
    await assert.rejects(tp.cp.createEnvironment(app.id, 'staging'), code('CONFLICT'));
    const apps = await tp.cp.listApps();
    assert.deepEqual(
      apps.find((a) => a.id === app.id)?.environments.map((e) => e.id),
      [env.id],
    );
  });

  test('every operation needs the key', async () => {
    const r = await call('POST', `${tp.url}/graphql`, { key: null, body: { query: '{ apps { id } }' } });
    assert.equal(r.status, 401);
    assert.equal((r.json as { errors: Array<{ extensions: { code: string } }> }).errors[0].extensions.code, 'UNAUTHENTICATED');
    const ok = await call('POST', `${tp.url}/graphql`, { auth: tp.key, body: { query: '{ platform { instanceId } }' } });
    // `u1` on the embedded database; a node of its own on a PostgreSQL server (the conformance run): the one that answered.
    const answered = (ok.json as { data: { platform: { instanceId: string } } }).data.platform.instanceId;
    assert.ok(tp.nodeIds.includes(answered), `${answered} is one of ${tp.nodeIds.join(', ')}`);
    assert.match(answered, process.env.STRATO_TEST_DATABASE ? /^n[0-9a-z]{10}$/ : /^u1$/);
  });
});

describe('builds and endpoints', () => {
  test('a build is uploaded, finalized with its sha256 and manifest, and deployed', async () => {
    const app = await tp.cp.createApp('builds');
    const env = await tp.cp.createEnvironment(app.id, 'production');
    const build = await tp.cp.uploadBuild(app.id, art.artifactPath, art.manifest);
    assert.equal(build.sha256, createHash('sha256').update(fs.readFileSync(art.artifactPath)).digest('hex'));
    assert.equal(build.size, fs.statSync(art.artifactPath).size);
    assert.equal(build.projectName, 'testapp');
    const deployed = await tp.cp.deployBuild(env.id, build.id);
    assert.equal(deployed.activeBuildId, build.id);
  });

  test('an upload without the key is 401; one of the wrong size is refused', async () => {
    const app = await tp.cp.createApp('uploads');
    const q = await tp.cp.query<{ requestBuildUpload: { url: string; uploadId: string } }>(
      'mutation($a: ID!) { requestBuildUpload(appId: $a, size: 10) { url uploadId } }',
      { a: app.id },
    );
    const url = q.requestBuildUpload.url;
    assert.equal((await call('PUT', url, { key: null, raw: '0123456789' })).status, 401);
    assert.equal((await call('PUT', url, { raw: '0123' })).status, 400);
    await assert.rejects(
      tp.cp.query('mutation($a: ID!, $u: ID!) { finalizeBuild(appId: $a, uploadId: $u) { id } }', { a: app.id, u: 'upl_nope' }),
      code('NOT_FOUND'),
    );
  });

  test('saveEndpoint creates, then updates in place; lookups by name and id; env reaches the worker', async () => {
    const eps = await deploy(tp.cp, art, { app: 'ctx', env: 'staging', endpoints: ['env-info'] });
    const ep = eps['env-info'];
    assert.equal(ep.type, 'QUEUE');
    assert.equal(ep.url, `${tp.url}/v2/${ep.id}`);
    assert.match(ep.id, /^[a-z0-9]{14}$/);
    assert.equal(ep.env.MY_VAR, 'from-manifest');
    const found = await tp.cp.findEndpoint('ctx', 'staging', 'env-info');
    assert.equal(found?.id, ep.id);
    assert.equal(await tp.cp.findEndpoint('ctx', 'staging', 'nope'), null);
    const first = (await call('POST', `${ep.url}/runsync`, { body: { input: {} } })).json as { output: { env: Record<string, string>; pid: number } };
    assert.deepEqual(first.output.env, {
      STRATO_APP: 'ctx',
      STRATO_ENV: 'staging',
      STRATO_ENDPOINT_NAME: 'env-info',
      STRATO_ENDPOINT_ID: ep.id,
      MY_VAR: 'from-manifest',
      STRATO_API_KEY: null,
    });
    // Update: same id, env merged over the manifest's, workers rolled to the new revision.
    const updated = await tp.cp.saveEndpoint({ environmentId: ep.environmentId, name: 'env-info', env: { MY_VAR: 'override' }, workersMax: 3 });
    assert.equal(updated.id, ep.id);
    assert.equal(updated.workersMax, 3);
    const second = await waitUntil('the rolled worker', async () => {
      const j = (await call('POST', `${ep.url}/runsync`, { body: { input: {} } })).json as typeof first;
      return j.output.env.MY_VAR === 'override' ? j : null;
    });
    assert.notEqual(second.output.pid, first.output.pid);
    assert.equal((await tp.cp.listEndpoints(ep.environmentId)).length, 1);
    assert.equal((await tp.cp.getEndpoint(ep.id))?.name, 'env-info');
  });

  test('saving a name the build does not declare is BAD_REQUEST naming what it declares', async () => {
    const app = await tp.cp.findApp('ctx');
    const env = app!.environments[0];
    await assert.rejects(
      tp.cp.saveEndpoint({ environmentId: env.id, name: 'ghost' }),
      (e: unknown) => code('BAD_REQUEST')(e) && /env-info, echo/.test((e as Error).message),
    );
  });

  test('env that no process environment can hold is refused at save, in the words of the catalog; the endpoint keeps its env', async () => {
    const app = await tp.cp.findApp('ctx');
    const env = app!.environments[0];
    const save = (vars: Record<string, string>) => tp.cp.saveEndpoint({ environmentId: env.id, name: 'echo', env: vars });
    // A NUL in a name made the platform itself exit when it started the worker, and again at every restart.
    for (const [vars, said] of [
      [{ 'A\0B': 'x' }, /^env name "A\\u0000B" cannot be a variable name: use a non-empty name without '=' or NUL characters\.$/],
      [{ 'A=B': 'x' }, /^env name "A=B" cannot be a variable name/],
      [{ A: 'x\0y' }, /^env value of "A" holds a NUL character/],
      [{ BIG: 'x'.repeat(200_000) }, /^env value of "BIG" is 200000 bytes, over the limit of 65536: put large data in a file or a volume/],
    ] as const)
      await assert.rejects(save(vars), (e: unknown) => code('BAD_REQUEST')(e) && said.test((e as Error).message.replace(/^.*?: env/, 'env')));
    // An execution timeout out of bounds is refused as given (-5 became the 600 s default without a word).
    await assert.rejects(
      tp.cp.saveEndpoint({ environmentId: env.id, name: 'echo', executionTimeoutMs: -5 }),
      (e: unknown) => code('BAD_REQUEST')(e) && /execution_timeout_ms must be between 0 and 86400000, got -5/.test((e as Error).message),
    );
    const saved = await save({ FINE: 'y' });
    const r = (await call('POST', `${saved.url}/runsync`, { body: { input: { n: 1 } } })).json as { status: string };
    assert.equal(r.status, 'COMPLETED', 'its workers still start');
  });

  test('a second PUT to an upload whose body is still arriving is refused (409), on any node; the first completes with its own bytes', async () => {
    const app = await tp.cp.createApp('two-puts');
    const size = 1000;
    const d = await tp.cp.query<{ requestBuildUpload: { uploadId: string } }>(
      'mutation($a: ID!, $s: Float!) { requestBuildUpload(appId: $a, size: $s) { uploadId } }',
      {
        a: app.id,
        s: size,
      },
    );
    const url = `${tp.url}/_uploads/${d.requestBuildUpload.uploadId}`;
    const headers = { authorization: `Bearer ${tp.key}`, 'content-length': String(size) };
    const first = http.request(url, { method: 'PUT', headers });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      first.on('response', (r) => {
        let body = '';
        r.on('data', (c) => (body += c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      });
      first.on('error', reject);
    });
    const bytes = Buffer.alloc(size, 'a');
    first.write(bytes.subarray(0, 500));
    await new Promise((r) => setTimeout(r, 300)); // half of it is in
    const second = await fetch(url, { method: 'PUT', headers, body: Buffer.alloc(size, 'b') });
    // Behind the conformance run's round-robin front of three nodes the second reaches another node: refused as well.
    assert.equal(second.status, 409);
    assert.match(((await second.json()) as { error: string }).error, /another PUT to upload .* is in progress/);
    first.end(bytes.subarray(500));
    const done = await answered;
    assert.equal(done.status, 200, done.body);
    assert.equal((JSON.parse(done.body) as { sha256: string }).sha256, createHash('sha256').update(bytes).digest('hex'));
  });

  test('an upload PUT again is the later body, wherever the finalize lands (in a cluster, the database holds its pieces)', async () => {
    const app = await tp.cp.createApp('put-again');
    const env = await tp.cp.createEnvironment(app.id, 'production');
    const bytes = fs.readFileSync(art.artifactPath);
    const d = await tp.cp.query<{ requestBuildUpload: { uploadId: string } }>(
      'mutation($a: ID!, $s: Float!) { requestBuildUpload(appId: $a, size: $s) { uploadId } }',
      { a: app.id, s: bytes.length },
    );
    const uploadId = d.requestBuildUpload.uploadId;
    const put = (body: Buffer) =>
      fetch(`${tp.url}/_uploads/${uploadId}`, { method: 'PUT', headers: { authorization: `Bearer ${tp.key}`, 'content-length': String(body.length) }, body });
    assert.equal((await put(Buffer.alloc(bytes.length, 'x'))).status, 200, 'a first body of the right size, not an archive');
    assert.equal((await put(bytes)).status, 200);
    const f = await tp.cp.query<{ finalizeBuild: { id: string; sha256: string } }>(
      'mutation($a: ID!, $u: ID!, $m: String) { finalizeBuild(appId: $a, uploadId: $u, manifest: $m) { id sha256 } }',
      { a: app.id, u: uploadId, m: JSON.stringify(art.manifest) },
    );
    assert.equal(f.finalizeBuild.sha256, createHash('sha256').update(bytes).digest('hex'));
    await tp.cp.deployBuild(env.id, f.finalizeBuild.id);
    const ep = await tp.cp.saveEndpoint({ environmentId: env.id, name: 'echo' });
    const r = await call('POST', `${ep.url}/runsync`, { body: { input: { again: 1 } } });
    assert.match(r.text, /"output":\{"echo":\{"again":1\}\}/);
  });

  test('a /runsync waiting when its endpoint is deleted is answered 404 saying so, not as a job still running', async () => {
    const art2 = await buildTestArtifact({ 'worker.py': WORKER_PY }, [queueSpec('doomed', 'sleep', { workers: [0, 1] })]);
    const eps = await deploy(tp.cp, art2, { app: 'doomed' });
    const waiting = call('POST', `${eps.doomed.url}/runsync?wait=30000`, { body: { input: { seconds: 10 } } });
    await new Promise((r) => setTimeout(r, 1500));
    await tp.cp.deleteEndpoint(eps.doomed.id);
    const r = await waiting;
    assert.equal(r.status, 404, r.text);
    assert.match(
      (r.json as { error: string }).error,
      /^job sync-\S+ was removed while this request waited for it \(its endpoint was deleted, or its queue purged\)$/,
    );
  });

  test('a build refused at finalize (its manifest is not JSON, or absent) leaves no files behind', async () => {
    const app = await tp.cp.createApp('refused-builds');
    const builds = () => (fs.readdirSync(dataDir, { recursive: true }) as string[]).filter((f) => path.basename(f).startsWith('bld_')).sort();
    const before = builds();
    await assert.rejects(tp.cp.uploadBuild(app.id, art.artifactPath, '{not json'), (e: unknown) => code('BAD_REQUEST')(e) && /not valid JSON/.test(String(e)));
    assert.deepEqual(builds(), before, 'the refused build left its archive or unpacked tree');
  });

  test('builds beyond the newest five that nothing deploys are deleted with their files; deployed ones stay', async () => {
    const app = await tp.cp.createApp('many-builds');
    const env = await tp.cp.createEnvironment(app.id, 'production');
    const first = await tp.cp.uploadBuild(app.id, art.artifactPath, art.manifest);
    await tp.cp.deployBuild(env.id, first.id);
    const ep = await tp.cp.saveEndpoint({ environmentId: env.id, name: 'echo' });
    assert.equal((await call('POST', `${ep.url}/runsync`, { body: { input: { n: 1 } } })).status, 200); // a worker runs from it
    // The same bytes and manifest again are that build (what a deploy of unchanged code uploads).
    assert.equal((await tp.cp.uploadBuild(app.id, art.artifactPath, art.manifest)).id, first.id);
    const later = [];
    // Each of these differs from the others (its manifest's text): a build each.
    for (let i = 0; i < 6; i++) later.push(await tp.cp.uploadBuild(app.id, art.artifactPath, `${JSON.stringify(art.manifest)}${' '.repeat(i + 1)}`));
    const builds = async () =>
      (await tp.cp.query<{ app: { builds: Array<{ id: string }> } }>('query($a: ID!) { app(id: $a) { builds { id } } }', { a: app.id })).app.builds
        .map((b) => b.id)
        .sort();
    // Seven builds: the five newest stay, and the first one, which the environment deploys and the endpoint runs.
    assert.deepEqual(await builds(), [first.id, ...later.slice(1).map((b) => b.id)].sort());
    const pruned = later[0].id;
    assert.deepEqual(filesOf(pruned), [], 'the pruned build left files');
    assert.ok(filesOf(first.id).length > 0, 'the deployed build lost its files');
    await assert.rejects(
      tp.cp.deployBuild(env.id, pruned),
      (e: unknown) => code('NOT_FOUND')(e) && /newest 5 builds and those deployed are kept.*upload it again/.test((e as Error).message),
    );
    const entry = (await tp.cp.audit({ app: 'many-builds' })).find((a) => a.operation === 'pruneBuilds');
    assert.deepEqual(JSON.parse(String(entry?.detail)), { builds: [pruned], kept: 5 });
    // Deployed no more, the first build goes too: from the store at once, from disk once its worker has stopped.
    await tp.cp.deployBuild(env.id, later[5].id);
    await tp.cp.saveEndpoint({ environmentId: env.id, name: 'echo' });
    assert.deepEqual(
      await builds(),
      later
        .slice(1)
        .map((b) => b.id)
        .sort(),
    );
    await waitUntil("the first build's files gone", async () => filesOf(first.id).length === 0, 30_000);
    assert.equal((await call('POST', `${ep.url}/runsync`, { body: { input: { n: 2 } } })).status, 200);
  });

  test('deleteEndpoint stops serving it; deleteApp removes everything', async () => {
    const eps = await deploy(tp.cp, art, { app: 'gone', endpoints: ['echo'] });
    const { id } = (await call('POST', `${eps.echo.url}/run`, { body: { input: {} } })).json as { id: string };
    await tp.cp.deleteEndpoint(eps.echo.id);
    assert.equal((await call('GET', `${eps.echo.url}/status/${id}`)).status, 404);
    assert.equal(await tp.cp.getEndpoint(eps.echo.id), null);
    const app = await tp.cp.findApp('gone');
    await tp.cp.deleteApp(app!.id);
    assert.equal(await tp.cp.findApp('gone'), null);
  });
});

describe('a project built by strato build', () => {
  test('the init template deploys and serves its queue and load-balanced endpoints', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-proj-'));
    try {
      for (const [rel, text] of Object.entries(templateFiles('demo'))) fs.writeFileSync(path.join(dir, rel), text);
      const built = await buildProject(dir);
      const eps = await deploy(tp.cp, { artifactPath: built.artifactPath, manifest: built.manifest, dir }, { app: 'demo' });
      const hello = (await call('POST', `${eps['gpu-hello'].url}/runsync`, { body: { input: { prompt: 'hi', repeat: 2 } } })).json as {
        status: string;
        output: { text: string };
      };
      assert.equal(hello.status, 'COMPLETED');
      assert.equal(hello.output.text, 'hi hi');
      const stats = (await call('POST', `${eps['cpu-stats'].url}/runsync`, { body: { input: { numbers: [1, 2, 3] } } })).json as { output: { mean: number } };
      assert.equal(stats.output.mean, 2);
      assert.equal(eps['lb-api'].type, 'LOAD_BALANCED');
      assert.deepEqual(eps['lb-api'].routes.map((r) => `${r.method} ${r.path}`).sort(), ['GET /health', 'POST /process']);
      const lb = await call('POST', `${eps['lb-api'].url}/process`, { body: { text: 'hey', uppercase: true } });
      assert.deepEqual(lb.json, { text: 'HEY', length: 3 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('restart', () => {
  test('apps, endpoints and jobs survive a restart of the platform', async () => {
    const eps = await deploy(tp.cp, art, { app: 'durable', endpoints: ['echo'] });
    const job = (await call('POST', `${eps.echo.url}/runsync`, { body: { input: { keep: 1 } } })).json as { id: string };
    await tp.platform.close();
    tp = await startTestPlatform({ dataDir });
    const again = await tp.cp.findEndpoint('durable', 'production', 'echo');
    assert.equal(again?.id, eps.echo.id);
    const status = (await call('GET', `${tp.url}/v2/${eps.echo.id}/status/${job.id}`)).json as { status: string; output: unknown };
    assert.equal(status.status, 'COMPLETED');
    assert.deepEqual(status.output, { echo: { keep: 1 } });
    // Ended jobs stay in the store, not in memory: their counts and their unread stream come back from it.
    const health = (await call('GET', `${tp.url}/v2/${eps.echo.id}/health`)).json as { jobs: { completed: number } };
    assert.equal(health.jobs.completed, 1);
    const stream = await call('GET', `${tp.url}/v2/${eps.echo.id}/stream/${job.id}`);
    assert.deepEqual(stream.json, [{ output: { echo: { keep: 1 } }, metrics: { stream_index: 0 } }]);
    assert.equal(((await call('POST', `${tp.url}/v2/${eps.echo.id}/runsync`, { body: { input: {} } })).json as { status: string }).status, 'COMPLETED');
  });
});
