// Issue #16, defect 12: one key reached every app and could delete any app. Now an admin creates keys per person with
// a scope (admin, deploy to named apps, invoke only), keys are stored as SHA-256 hashes, a revoked key is refused at
// once, and every control-plane change is in the audit log with the key that made it. Real platform, real workers.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { ControlPlaneClient, ControlPlaneError, type Endpoint } from '../../engine/src/api/controlPlane';
import { openPglite } from '../../engine/src/platform/store/pglite';
import { SqlStore } from '../../engine/src/platform/store/sqlStore';
import { buildTestArtifact, type TestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, TEMPLATE_DIR, type TestPlatform } from '../helpers/platform';
import { queueSpec, LB_PY, WORKER_PY } from '../helpers/testWorkers';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-keys-'));
let tp: TestPlatform;
let art: TestArtifact;
/** shop is deployed with alice's deploy key, blog with the platform key. */
let shop: Record<string, Endpoint>;
let blog: Record<string, Endpoint>;
const secrets: Record<string, string> = {};
const client = (name: string) => new ControlPlaneClient({ baseUrl: tp.url, apiKey: secrets[name] });
const forbidden = (e: unknown) => e instanceof ControlPlaneError && e.code === 'FORBIDDEN';

before(async () => {
  tp = await startTestPlatform({ dataDir });
  art = await buildTestArtifact({ 'worker.py': WORKER_PY, 'lb_worker.py': LB_PY }, [
    queueSpec('echo', 'echo', { env: { MY_VAR: 'shop-value' } }),
    { name: 'api', file: 'lb_worker.py', fn: 'process', routes: { 'POST /process': 'process' } },
  ]);
  for (const [name, scope, apps] of [
    ['alice', 'deploy', ['shop']],
    ['bob', 'invoke', ['shop']],
    ['eve', 'invoke', []],
  ] as const) {
    secrets[name] = (await tp.cp.createKey(name, scope, [...apps])).secret;
  }
  shop = await deploy(client('alice'), art, { app: 'shop' });
  blog = await deploy(tp.cp, art, { app: 'blog' });
});
after(async () => {
  await tp?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const graphql = (key: string, query: string, variables: Record<string, unknown> = {}) => call('POST', `${tp.url}/graphql`, { key, body: { query, variables } });
const firstError = (json: unknown) => (json as { errors: Array<{ message: string; extensions: { code: string } }> }).errors[0];

describe('a deploy key reaches only its apps', () => {
  test('it deployed shop, and lists and reads shop only', async () => {
    assert.deepEqual(
      (await client('alice').listApps()).map((a) => a.name),
      ['shop'],
    );
    assert.equal((await client('alice').findEndpoint('shop', 'production', 'echo'))?.id, shop.echo.id);
    await assert.rejects(client('alice').findApp('blog'), forbidden);
    await assert.rejects(client('alice').getEndpoint(blog.echo.id), forbidden);
    const listed = await client('alice').listEndpoints();
    assert.deepEqual(
      listed.map((e) => e.appId).filter((id) => id !== shop.echo.appId),
      [],
    );
  });

  test('it can neither change nor delete another app: 403 with a sentence saying why and what to ask for', async () => {
    const r = await graphql(secrets.alice, 'mutation($id: ID!) { deleteApp(id: $id) }', { id: blog.echo.appId });
    assert.equal(r.status, 403);
    const err = firstError(r.json);
    assert.equal(err.extensions.code, 'FORBIDDEN');
    assert.equal(
      err.message,
      'the key "alice" (deploy: shop) may not delete app "blog"; ask an admin for a key with access to app "blog" (strato keys create --scope deploy --app blog)',
    );
    const alice = client('alice');
    await assert.rejects(alice.createEnvironment(blog.echo.appId, 'staging'), forbidden);
    await assert.rejects(alice.saveEndpoint({ environmentId: blog.echo.environmentId, name: 'echo', workersMax: 5 }), forbidden);
    await assert.rejects(alice.deleteEndpoint(blog.echo.id), forbidden);
    await assert.rejects(alice.uploadBuild(blog.echo.appId, art.artifactPath, art.manifest), forbidden);
    await assert.rejects(alice.createApp('another'), forbidden);
    await assert.rejects(alice.createKey('mallory', 'admin'), forbidden);
    await assert.rejects(alice.listKeys(), forbidden);
    await assert.rejects(alice.audit(), forbidden);
    // blog is untouched.
    const still = await tp.cp.getEndpoint(blog.echo.id);
    assert.equal(still?.workersMax, 1);
    assert.equal((await tp.cp.findApp('blog'))?.environments.length, 1);
  });

  test('it calls its own endpoints but not those of another app (403 on the jobs API and load-balanced routes)', async () => {
    const own = await call('POST', `${shop.echo.url}/runsync`, { key: secrets.alice, body: { input: { n: 1 } } });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual((own.json as { output: unknown }).output, { echo: { n: 1 } });
    const other = await call('POST', `${blog.echo.url}/run`, { key: secrets.alice, body: { input: {} } });
    assert.equal(other.status, 403);
    assert.match((other.json as { error: string }).error, /^the key "alice" \(deploy: shop\) may not call endpoint \w+ of app "blog"/);
    const lb = await call('GET', `${blog.api.url}/ping`, { key: secrets.alice });
    assert.equal(lb.status, 403);
    assert.equal((lb.json as { error: string }).error, 'forbidden');
  });
});

describe('an invoke key calls endpoints and changes nothing', () => {
  test('it runs jobs of its app; other apps are 403', async () => {
    const r = await call('POST', `${shop.echo.url}/runsync`, { key: secrets.bob, body: { input: { from: 'bob' } } });
    assert.equal(r.status, 200, r.text);
    assert.equal((r.json as { status: string }).status, 'COMPLETED');
    assert.equal((await call('GET', `${shop.api.url}/ping`, { key: secrets.bob })).status, 200);
    assert.equal((await call('POST', `${blog.echo.url}/runsync`, { key: secrets.bob, body: { input: {} } })).status, 403);
    assert.equal((await call('GET', `${blog.api.url}/ping`, { key: secrets.bob })).status, 403);
  });

  test('it may not deploy: every change is 403 and names what the key is', async () => {
    const bob = client('bob');
    const r = await graphql(secrets.bob, 'mutation($e: ID!) { saveEndpoint(input: {environmentId: $e, name: "echo"}) { id } }', {
      e: shop.echo.environmentId,
    });
    assert.equal(r.status, 403);
    assert.match(firstError(r.json).message, /^the key "bob" \(invoke: shop\) may only call endpoints, not save endpoints in app "shop"/);
    await assert.rejects(bob.deleteApp(shop.echo.appId), forbidden);
    await assert.rejects(bob.uploadBuild(shop.echo.appId, art.artifactPath, art.manifest), forbidden);
    await assert.rejects(bob.deleteEndpoint(shop.echo.id), forbidden);
  });

  test('it finds endpoints by name (as the Python package does) but reads no values of environment variables nor manifests', async () => {
    const lookup = await graphql(
      secrets.bob,
      'query($a: String!, $e: String!, $n: String!) { endpointByName(app: $a, environment: $e, name: $n) { id url type declaredExecutionTimeoutMs } }',
      { a: 'shop', e: 'production', n: 'echo' },
    );
    assert.equal(lookup.status, 200, lookup.text);
    assert.equal((lookup.json as { data: { endpointByName: { id: string } } }).data.endpointByName.id, shop.echo.id);
    const envVars = await client('bob').listEndpoints(shop.echo.environmentId);
    assert.deepEqual(envVars[0].env, { MY_VAR: '(hidden: reading values needs a deploy or admin key)' });
    assert.equal((await client('alice').getEndpoint(shop.echo.id))?.env.MY_VAR, 'shop-value');
    const manifest = await graphql(secrets.bob, 'query($id: ID!) { build(id: $id) { manifest } }', { id: shop.echo.buildId });
    assert.equal(manifest.status, 403);
    assert.match(
      firstError(manifest.json).message,
      /^the key "bob" \(invoke: shop\) may only call endpoints; reading build manifests needs a deploy or admin key$/,
    );
  });

  test('an invoke key created without apps reaches every app', async () => {
    for (const ep of [shop.echo, blog.echo]) {
      const r = await call('POST', `${ep.url}/runsync`, { key: secrets.eve, body: { input: {} } });
      assert.equal(r.status, 200, r.text);
    }
    assert.deepEqual((await client('eve').listApps()).map((a) => a.name).sort(), ['blog', 'shop']);
  });
});

describe('key management', () => {
  test('keys are listed with scope, apps, prefix and last use, never with the key', async () => {
    const keys = await tp.cp.listKeys();
    assert.deepEqual(
      keys.map((k) => [k.name, k.scope, k.apps, k.builtin]),
      [
        ['platform', 'admin', [], true],
        ['alice', 'deploy', ['shop'], false],
        ['bob', 'invoke', ['shop'], false],
        ['eve', 'invoke', [], false],
      ],
    );
    const alice = keys.find((k) => k.name === 'alice')!;
    assert.equal(alice.prefix, secrets.alice.slice(0, 12));
    assert.equal(alice.createdBy, 'platform');
    assert.ok(alice.lastUsedAt !== null && alice.lastUsedAt >= alice.createdAt!, 'alice used her key');
    assert.ok(!JSON.stringify(keys).includes(secrets.alice));
  });

  test('bad requests say what is wrong: a deploy key needs apps, an admin key takes none, names are unique among active keys', async () => {
    const bad = (p: Promise<unknown>, re: RegExp) => assert.rejects(p, (e: unknown) => e instanceof ControlPlaneError && re.test(e.message));
    await bad(tp.cp.createKey('frank', 'deploy'), /a deploy key needs the apps it may deploy to/);
    await bad(tp.cp.createKey('frank', 'admin', ['shop']), /an admin key reaches every app; create it without apps/);
    await bad(tp.cp.createKey('alice', 'invoke'), /an active key is already named "alice"/);
    await bad(tp.cp.createKey('platform', 'invoke'), /the name of the platform key/);
    await bad(tp.cp.createKey('bad name!', 'invoke'), /key name "bad name!" is not valid/);
    await bad(tp.cp.createKey('frank', 'invoke', ['no such!']), /app name "no such!" is not valid/);
    // A huge name is quoted cut short: the refusal stays small.
    const huge = await tp.cp.createApp('x'.repeat(1_000_000)).catch((e: Error) => e);
    assert.ok(huge instanceof ControlPlaneError && huge.message.length < 400, String(huge).slice(0, 300));
    assert.match(huge.message, /: app name "x{100}"\.\.\. \(1000000 characters\) is not valid: use 1-63 letters/);
    await bad(tp.cp.revokeKey('platform'), /replace it there and restart the platform/);
    await bad(tp.cp.revokeKey('nobody'), /no key has the id or name "nobody"/);
  });

  test('a revoked key is refused with 401 at once, saying it was revoked; an admin key made by an admin can revoke', async () => {
    secrets.root = (await tp.cp.createKey('root', 'admin')).secret;
    const carol = await tp.cp.createKey('carol', 'invoke', ['shop']);
    assert.equal((await call('GET', `${shop.echo.url}/health`, { key: carol.secret })).status, 200);
    const revoked = await client('root').revokeKey('carol');
    assert.equal(revoked.revokedBy, 'root');
    const r = await call('GET', `${shop.echo.url}/health`, { key: carol.secret });
    assert.equal(r.status, 401);
    assert.match((r.json as { error: string }).error, /^the API key "carol" was revoked at \d{4}-\d\d-\d\dT/);
    assert.equal((await graphql(carol.secret, '{ apps { id } }')).status, 401);
    await assert.rejects(tp.cp.revokeKey(carol.key.id), /already revoked/);
    // The name is free again once revoked (a new key for the same person).
    const again = await tp.cp.createKey('carol', 'invoke', ['shop']);
    assert.notEqual(again.key.id, carol.key.id);
    assert.equal((await call('GET', `${shop.echo.url}/health`, { key: again.secret })).status, 200);
  });
});

describe('one connection that carries several keys (a proxy in front of the platform)', () => {
  test('each request is authenticated by its own key, and a key revoked meanwhile is refused on that connection', async () => {
    const pool = new Pool(tp.url, { connections: 1 });
    try {
      const health = async (key: string, endpointId: string) => {
        const r = await pool.request({ method: 'GET', path: `/v2/${endpointId}/health`, headers: { authorization: `Bearer ${key}` } });
        await r.body.text();
        return r.statusCode;
      };
      const dave = await tp.cp.createKey('dave', 'invoke', ['shop']);
      // The same length as dave's key, one character apart: compared with the key this connection presented before.
      const forged = dave.secret.slice(0, -1) + (dave.secret.endsWith('A') ? 'B' : 'A');
      const calls: Array<[string, string, string, number]> = [
        ['dave on shop', dave.secret, shop.echo.id, 200],
        ['dave again', dave.secret, shop.echo.id, 200],
        ['a forged dave', forged, shop.echo.id, 401],
        ['dave after it', dave.secret, shop.echo.id, 200],
        ['dave on blog', dave.secret, blog.echo.id, 403],
        ['the platform key on blog', tp.key, blog.echo.id, 200],
        ['bob on blog', secrets.bob, blog.echo.id, 403],
        ['bob on shop', secrets.bob, shop.echo.id, 200],
        ['dave once more', dave.secret, shop.echo.id, 200],
      ];
      for (const [what, key, id, status] of calls) assert.equal(await health(key, id), status, what);
      await tp.cp.revokeKey(dave.key.id);
      assert.equal(await health(dave.secret, shop.echo.id), 401, 'dave, revoked after this connection presented it');
    } finally {
      await pool.close();
    }
  });
});

describe('audit log', () => {
  test('every change is recorded with the key that made it; refused changes too; values of variables never', async () => {
    await tp.cp.saveEndpoint({ environmentId: blog.echo.environmentId, name: 'echo', env: { SECRET_TOKEN: 'hunter2' } });
    const all = await tp.cp.audit({ limit: 10_000 });
    const seen = all.map((e) => `${e.keyName} ${e.operation} ${e.outcome} ${e.app ?? '-'} ${e.targetType}`);
    for (const expected of [
      'platform createKey ok - key',
      'alice createApp ok shop app',
      'alice createEnvironment ok shop environment',
      'alice finalizeBuild ok shop build',
      'alice deployBuild ok shop environment',
      'alice saveEndpoint ok shop endpoint',
      'platform createApp ok blog app',
      'alice deleteApp denied blog app',
      'alice createEnvironment denied blog app',
      'alice saveEndpoint denied blog environment',
      'alice deleteEndpoint denied blog endpoint',
      'alice requestBuildUpload denied blog app',
      'bob saveEndpoint denied shop environment',
      'root revokeKey ok - key',
      'platform saveEndpoint ok blog endpoint',
    ])
      assert.ok(seen.includes(expected), `no "${expected}" in the audit log:\n${seen.join('\n')}`);
    assert.ok(
      all.every((e, i) => i === 0 || all[i - 1].seq > e.seq),
      'newest first',
    );
    const save = all[0];
    assert.equal(save.operation, 'saveEndpoint');
    assert.equal(save.targetName, 'production/echo');
    assert.deepEqual(JSON.parse(save.detail!), { change: 'updated', build: blog.echo.buildId, env: { added: ['SECRET_TOKEN'] } });
    assert.ok(!JSON.stringify(all).includes('hunter2'), 'a variable value reached the audit log');
    const denied = all.find((e) => e.keyName === 'alice' && e.operation === 'deleteApp')!;
    assert.match(JSON.parse(denied.detail!).reason, /may not delete app "blog"/);

    const blogOnly = await tp.cp.audit({ app: 'blog' });
    assert.ok(blogOnly.length > 0 && blogOnly.every((e) => e.app === 'blog'));
    const aliceOnly = await tp.cp.audit({ key: 'alice', limit: 3 });
    assert.equal(aliceOnly.length, 3);
    assert.ok(aliceOnly.every((e) => e.keyName === 'alice'));
  });

  test("an artifact upload refused to a key outside its app is recorded as denied, as the change's other refusals are", async () => {
    // The upload URL came from a key that may deploy to blog; alice's key may not put the artifact there.
    const requested = await graphql(tp.key, 'mutation($a: ID!) { requestBuildUpload(appId: $a, size: 3) { uploadId } }', {
      a: blog.echo.appId,
    });
    const uploadId = (requested.json as { data: { requestBuildUpload: { uploadId: string } } }).data.requestBuildUpload.uploadId;
    const put = await fetch(`${tp.url}/_uploads/${uploadId}`, { method: 'PUT', headers: { authorization: `Bearer ${secrets.alice}` }, body: 'abc' });
    assert.equal(put.status, 403);
    assert.match(((await put.json()) as { error: string }).error, /^the key "alice" \(deploy: shop\) may not upload builds to app "blog"/);
    const [entry] = await tp.cp.audit({ key: 'alice', limit: 1 });
    assert.deepEqual([entry.operation, entry.outcome, entry.app, entry.targetType, entry.targetId], ['uploadBuild', 'denied', 'blog', 'app', blog.echo.appId]);
    assert.match(JSON.parse(entry.detail!).reason, /may not upload builds to app "blog"/);
  });

  test("an endpoint's STRATO_API_KEY (the deployer's key, for calls to other endpoints) is never answered", async () => {
    // (A key given to an endpoint is stored with its configuration, like any env value: a key of its own here.)
    const own = (await tp.cp.createKey('shop-caller', 'invoke', ['shop'])).secret;
    const saved = await tp.cp.saveEndpoint({ environmentId: shop.echo.environmentId, name: 'echo', env: { STRATO_API_KEY: own } });
    assert.equal(saved.env.STRATO_API_KEY, '(hidden: an API key is never shown)');
    assert.ok(!JSON.stringify(await client('alice').listEndpoints()).includes(own));
  });
});

describe('storage', () => {
  test('keys are stored only as SHA-256 hashes: no key is anywhere in the data dir; they work after a restart', async () => {
    await tp.close();
    const store = await SqlStore.open(await openPglite(path.join(dataDir, 'db'), { templateDir: TEMPLATE_DIR }));
    const rows = await store.listKeys();
    await store.close();
    const alice = rows.find((r) => r.name === 'alice')!;
    assert.equal(alice.hash, createHash('sha256').update(secrets.alice).digest('hex'));
    assert.ok(alice.last_used_at !== null, 'the last use was written at shutdown');
    const files = fs.readdirSync(dataDir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    for (const [name, secret] of Object.entries(secrets)) {
      const needle = Buffer.from(secret.slice('strato_'.length));
      for (const f of files) {
        const file = path.join(f.parentPath, f.name);
        assert.equal(fs.readFileSync(file).indexOf(needle), -1, `the key of ${name} is in ${path.relative(dataDir, file)}`);
      }
    }
    tp = await startTestPlatform({ dataDir });
    assert.equal((await call('GET', `${shop.echo.url.replace(/^http:\/\/[^/]+/, tp.url)}/health`, { key: secrets.bob })).status, 200);
    assert.equal((await call('GET', `${shop.echo.url.replace(/^http:\/\/[^/]+/, tp.url)}/health`, { key: secrets.root })).status, 200);
  });
});
