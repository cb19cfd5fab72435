// `strato deploy`, `undeploy` and `env` end to end: the real CLI against a real platform with real Python
// workers. Reconciliation by name, rolling a source-only change, deletion, environments, JSON, and errors.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';
import { startTestPlatform, type TestPlatform } from '../helpers/platform';
import { JobsClient } from '../../engine/src/api/jobs';
import { callRoute } from '../../engine/src/api/loadBalanced';

let tmp: string;
let p: TestPlatform;
let env: NodeJS.ProcessEnv;
before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-deploy-'));
  p = await startTestPlatform();
  env = { STRATO_API_URL: p.url, STRATO_API_KEY: p.key };
});
after(async () => {
  await p?.close();
  rmSync(tmp, { recursive: true, force: true });
});

interface EnvJson {
  app: string;
  environment: string;
  buildId: string | null;
  endpoints: Array<{
    name: string;
    type: string;
    id: string;
    url: string;
    routes: Array<{ method: string; path: string }>;
    workers?: { min: number; max: number; ready: number; starting: number; error: string | null };
  }>;
}

async function envGet(dir: string, name: string): Promise<EnvJson> {
  const r = await runCli(['env', 'get', name, '--json'], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

async function initProject(name: string): Promise<string> {
  const r = await runCli(['init', name], { cwd: tmp });
  assert.equal(r.code, 0, r.stderr);
  return path.join(tmp, name);
}

test('deploy of the template: four timed steps, endpoints grouped by type with URLs, routes and samples; every endpoint answers', async () => {
  const dir = await initProject('shop');
  // torch is the base image's: never installed, and the build step says so (the embedded platform's Python must have it).
  writeFileSync(path.join(dir, 'requirements.txt'), 'torch\n');
  const r = await runCli(['deploy'], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /✓ build +3 endpoints, \d+ KB; not installed \(in the base image or --exclude\): torch/);
  const steps = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('✓'))
    .map((l) => l.split(/\s+/)[1]);
  assert.deepEqual(steps, ['build', 'upload', 'provision', 'configure']);
  assert.match(r.stdout, /✓ upload +app shop, environment production/);
  assert.match(
    r.stdout,
    /Load-balanced endpoints\n {2}lb-api {2}http:\/\/127\.0\.0\.1:\d+\/lb\/\S+\n {4}POST +\/process\n {4}GET +\/health\n {2}sample: curl -X POST \S+\/process -H "Authorization: Bearer \$STRATO_API_KEY"/,
  );
  assert.match(
    r.stdout,
    /Queue-based endpoints\n {2}cpu-stats {2}http:\/\/127\.0\.0\.1:\d+\/v2\/\S+\/runsync\n {2}sample: curl -X POST \S+\/runsync .* -d '\{"input":\{"numbers":\[1\.5,2\.5\]\}\}'/,
  );
  // Every printed sample succeeds when run as printed (with the key exported).
  const samples = [
    ...r.stdout.matchAll(/sample: curl -X (\w+) (\S+) -H "Authorization: Bearer \$STRATO_API_KEY"(?: -H 'Content-Type: application\/json' -d '([^']*)')?/g),
  ];
  assert.equal(samples.length, 3, r.stdout);
  for (const [, method, url, body] of samples) {
    const res = await fetch(url, { method, headers: { authorization: `Bearer ${p.key}`, 'content-type': 'application/json' }, body });
    const out = (await res.json()) as { status?: string; output?: unknown };
    assert.equal(res.status, 200, `${url}: ${JSON.stringify(out)}`);
    if (url.endsWith('/runsync')) {
      assert.equal(out.status, 'COMPLETED', JSON.stringify(out));
      assert.doesNotMatch(JSON.stringify(out.output), /"error"/, `${url}: ${JSON.stringify(out)}`);
    }
  }

  const info = await envGet(dir, 'production');
  assert.deepEqual(
    info.endpoints.map((e) => `${e.name}:${e.type}`),
    ['cpu-stats:QUEUE', 'gpu-hello:QUEUE', 'lb-api:LOAD_BALANCED'],
  );
  const target = { baseUrl: p.url, apiKey: p.key };
  const jobs = new JobsClient(target);
  const byName = Object.fromEntries(info.endpoints.map((e) => [e.name, e]));
  const gpu = await jobs.runsync(byName['gpu-hello'].id, { prompt: 'hi', repeat: 2 });
  assert.equal(gpu.status, 'COMPLETED');
  assert.deepEqual((gpu.output as { text: string }).text, 'hi hi');
  const cpu = await jobs.runsync(byName['cpu-stats'].id, { numbers: [1, 2, 3] });
  assert.deepEqual(cpu.output, { count: 3, mean: 2, min: 1, max: 3 });
  assert.deepEqual(await callRoute(target, byName['lb-api'].id, 'POST', '/process', { text: 'ab', uppercase: true }), { text: 'AB', length: 2 });
  assert.deepEqual(await callRoute(target, byName['lb-api'].id, 'GET', '/health'), { status: 'ok' });
});

test('deploy returns while minimum workers start; env get and deploy --wait report a worker that cannot start', async () => {
  const dir = path.join(tmp, 'broken');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'requirements.txt'), '');
  writeFileSync(
    path.join(dir, 'worker.py'),
    'from strato import Endpoint\nimport not_a_module_that_exists\n\n\n@Endpoint(name="broken", workers=(1, 1))\ndef broken():\n    return 1\n',
  );
  const r = await runCli(['deploy'], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /✓ configure +endpoints discoverable by name, minimum workers starting/);
  assert.match(r.stdout, /Minimum workers of broken start in the background: .*strato env get production shows when they are ready/);
  // env get shows the workers as the platform knows them: starting, then the reason they cannot start.
  let workers: { min: number; max: number; ready: number; starting: number; error: string | null } | undefined;
  for (let i = 0; i < 200 && !workers?.error; i++) {
    workers = (await envGet(dir, 'production')).endpoints[0].workers;
    if (!workers?.error) await new Promise((res) => setTimeout(res, 100));
  }
  assert.equal(workers?.min, 1);
  assert.match(workers?.error ?? '', /No module named 'not_a_module_that_exists'/);
  // Without a name: the only environment, as logs, undeploy and client take it.
  const text = await runCli(['env', 'get'], { cwd: dir, env });
  assert.match(text.stdout, /workers cannot start: .*No module named 'not_a_module_that_exists'/);
  const waited = await runCli(['deploy', '--wait'], { cwd: dir, env });
  assert.equal(waited.code, 1, 'what --wait waited for failed: a CI job sees it');
  assert.match(waited.stderr, /error: workers of broken cannot start: .*No module named 'not_a_module_that_exists'/);
  assert.match(waited.stdout, /Deployed broken to production/);
  // The fix deployed: --wait judges the new revision's workers, not the error of the old one's.
  writeFileSync(path.join(dir, 'worker.py'), 'from strato import Endpoint\n\n\n@Endpoint(name="broken", workers=(1, 1))\ndef broken():\n    return 1\n');
  const fixed = await runCli(['deploy', '--wait'], { cwd: dir, env });
  assert.equal(fixed.code, 0, fixed.stderr);
  assert.match(fixed.stdout, /minimum workers ready/);
  assert.doesNotMatch(fixed.stderr, /cannot start/);
});

test('redeploy (--wait): a source-only change is served, ids stay, an endpoint removed from the code is deleted', async () => {
  const dir = await initProject('roll');
  assert.equal((await runCli(['deploy'], { cwd: dir, env })).code, 0);
  const before1 = await envGet(dir, 'production');
  // Deployed again unchanged: the same build (the artifact is byte for byte the same), every endpoint left as it is,
  // its warm workers too.
  const saved = await p.cp.findEndpoint('roll', 'production', 'cpu-stats');
  const same = await runCli(['deploy'], { cwd: dir, env });
  assert.equal(same.code, 0, same.stderr);
  assert.match(same.stdout, /✓ provision +0 created, 0 updated, 0 deleted, 3 unchanged/);
  assert.equal((await envGet(dir, 'production')).buildId, before1.buildId);
  assert.equal((await p.cp.findEndpoint('roll', 'production', 'cpu-stats'))?.updatedAt, saved?.updatedAt);
  const cpuFile = path.join(dir, 'cpu_worker.py');
  writeFileSync(cpuFile, readFileSync(cpuFile, 'utf8').replace('"count": len(numbers),', '"count": len(numbers),\n        "version": 2,'));
  unlinkSync(path.join(dir, 'gpu_worker.py'));
  const r = await runCli(['deploy', '--wait'], { cwd: dir, env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /✓ provision +0 created, 2 updated, 1 deleted/);
  assert.match(r.stdout, /✓ configure +endpoints discoverable by name, minimum workers ready/);
  assert.doesNotMatch(r.stdout, /start in the background/);
  assert.match(r.stdout, /removed: gpu-hello/);
  const after1 = await envGet(dir, 'production');
  assert.deepEqual(
    after1.endpoints.map((e) => e.name),
    ['cpu-stats', 'lb-api'],
  );
  assert.equal(after1.endpoints[0].id, before1.endpoints.find((e) => e.name === 'cpu-stats')!.id, 'updated in place');
  const job = await new JobsClient({ baseUrl: p.url, apiKey: p.key }).runsync(after1.endpoints[0].id, { numbers: [4] });
  assert.equal((job.output as { version: number }).version, 2);
});

test('environments: --env staging beside production, env list, ambiguity without --env, undeploy', async () => {
  const dir = await initProject('multi');
  assert.equal((await runCli(['deploy'], { cwd: dir, env })).code, 0);
  const st = await runCli(['deploy', '--env', 'staging'], { cwd: dir, env });
  assert.equal(st.code, 0, st.stderr);
  assert.match(st.stdout, /environment staging/);
  const list = await runCli(['env', 'list', '--json'], { cwd: dir, env });
  assert.deepEqual(
    JSON.parse(list.stdout).map((e: { environment: string; endpoints: number }) => `${e.environment}:${e.endpoints}`),
    ['production:3', 'staging:3'],
  );
  const prodIds = (await envGet(dir, 'production')).endpoints.map((e) => e.id);
  const stagingIds = (await envGet(dir, 'staging')).endpoints.map((e) => e.id);
  assert.equal(prodIds.filter((id) => stagingIds.includes(id)).length, 0, 'separate endpoints per environment');

  const ambiguous = await runCli(['deploy'], { cwd: dir, env });
  assert.equal(ambiguous.code, 1);
  assert.match(ambiguous.stderr, /app "multi" has 2 environments \(production, staging\): choose one with --env NAME/);
  // env get names its environment without a flag; asked for JSON, the error is JSON on stdout too.
  const which = await runCli(['env', 'get', '--json'], { cwd: dir, env });
  assert.equal(which.code, 1);
  assert.match(which.stderr, /has 2 environments \(production, staging\): choose one with strato env get NAME\./);
  assert.match(JSON.parse(which.stdout).error, /choose one with strato env get NAME/);
  const usage = await runCli(['env', 'get', '--env', 'staging', '--json'], { cwd: dir, env });
  assert.equal(usage.code, 1);
  assert.deepEqual(JSON.parse(usage.stdout), { error: "unknown option '--env'" });
  const live = await runCli(['env', 'get', 'live'], { cwd: dir, env });
  assert.match(live.stderr, /no environment "live" \(it has production, staging\): it holds the endpoints of a running strato dev, and none runs/);

  const noTty = await runCli(['undeploy', '--env', 'staging'], { cwd: dir, env });
  assert.equal(noTty.code, 1);
  assert.match(noTty.stderr, /pass --yes/);
  const un = await runCli(['undeploy', '--env', 'staging', '--yes'], { cwd: dir, env });
  assert.equal(un.code, 0, un.stderr);
  assert.match(un.stdout, /removed 3 endpoint\(s\) from multi\/staging: cpu-stats, gpu-hello, lb-api/);
  const after = await runCli(['env', 'list', '--json'], { cwd: dir, env });
  assert.deepEqual(
    JSON.parse(after.stdout).map((e: { environment: string }) => e.environment),
    ['production'],
    'the emptied environment is gone from env list',
  );
  const missing = await runCli(['env', 'get', 'staging'], { cwd: dir, env });
  assert.equal(missing.code, 1);
  assert.match(
    missing.stderr,
    /app "multi" has no environment "staging" \(it has production\): nothing is deployed there \(strato deploy --env staging makes it\)/,
  );
  // A short or mistyped name is most likely the one that exists.
  for (const typed of ['prod', 'prodution']) {
    const near = await runCli(['env', 'get', typed], { cwd: dir, env });
    assert.match(near.stderr, new RegExp(`has no environment "${typed}" \\(it has production\\): did you mean "production"\\?`));
  }
  // Every environment undeployed: env list says so rather than print nothing.
  assert.equal((await runCli(['undeploy', '--env', 'production', '--yes'], { cwd: dir, env })).code, 0);
  const none = await runCli(['env', 'list'], { cwd: dir, env });
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, 'app multi has no environments (all were undeployed): strato deploy makes production\n');
});

test('STRATO_APP overrides the app name taken from the directory', async () => {
  const dir = await initProject('dirname');
  const r = await runCli(['deploy'], { cwd: dir, env: { ...env, STRATO_APP: 'renamed' } });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Deployed renamed to production/);
});

test('failures name what failed and what to do: wrong key, unreachable platform, build error', async () => {
  const dir = await initProject('errs');
  const wrong = await runCli(['deploy'], { cwd: dir, env: { ...env, STRATO_API_KEY: 'nope' } });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /refused the API key \(401\); check STRATO_API_KEY/);
  // A key no header can carry is the key's fault, not the platform's being out of reach.
  for (const [key, what] of [
    [`${p.key}\n`, 'a line break at character \\d+'],
    ['ключ', '"к" \\(not ASCII\\) at character 1'],
  ]) {
    const r = await runCli(['env', 'list'], { cwd: dir, env: { ...env, STRATO_API_KEY: key } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`^error: STRATO_API_KEY holds ${what}, which an API key never has: copy the key again`, 'm'));
  }
  const down = await runCli(['env', 'list'], { cwd: dir, env: { ...env, STRATO_API_URL: 'http://127.0.0.1:9' } });
  assert.equal(down.code, 1);
  assert.match(down.stderr, /could not reach the Strato platform at http:\/\/127\.0\.0\.1:9/);
  // A URL that is not a platform's base URL: said so, with what a base URL looks like (not the server's whole page).
  const withPath = await runCli(['env', 'list'], { cwd: dir, env: { ...env, STRATO_API_URL: `${p.url}/graphql` } });
  assert.equal(withPath.code, 1);
  assert.match(
    withPath.stderr,
    /does not answer as a Strato platform \(POST \/graphql answered HTTP 404 .*\): STRATO_API_URL must be a platform's base URL, such as http:\/\/127\.0\.0\.1:7450 \(without \/graphql\)/,
  );
  const html = http.createServer((_req, res) =>
    res.writeHead(501, { 'content-type': 'text/html' }).end('<!DOCTYPE HTML><html><body>Unsupported method</body></html>'),
  );
  await new Promise<void>((r) => html.listen(0, '127.0.0.1', r));
  try {
    const other = await runCli(['env', 'list'], { cwd: dir, env: { ...env, STRATO_API_URL: `http://127.0.0.1:${(html.address() as AddressInfo).port}` } });
    assert.equal(other.code, 1);
    assert.match(other.stderr, /does not answer as a Strato platform \(POST \/graphql answered HTTP 501 with an HTML page\)/);
    assert.doesNotMatch(other.stderr, /DOCTYPE/);
  } finally {
    html.close();
  }
  writeFileSync(path.join(dir, 'cpu_worker.py'), 'from strato import Endpoint\n\n@Endpoint(name="c", workers=(2, 1))\ndef c():\n    return 1\n');
  const bad = await runCli(['deploy'], { cwd: dir, env });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /cpu_worker\.py:3:\d+: error: workers min \(2\) cannot exceed max \(1\)/);
  const badEnv = await runCli(['deploy', '--env', 'bad name!'], { cwd: dir, env });
  assert.equal(badEnv.code, 1);
  assert.match(badEnv.stderr, /--env "bad name!" is not a valid environment name/);
  assert.doesNotMatch(badEnv.stderr, /build/, 'refused before building');
  const image = await runCli(['deploy', '--cpu-image', 'python:3.12-slim'], { cwd: dir, env });
  assert.equal(image.code, 1);
  assert.match(image.stderr, /--cpu-image is for --preview \(the base images of its containers\): add --preview, or leave it out/);
  const live = await runCli(['deploy', '--env', 'live'], { cwd: dir, env });
  assert.equal(live.code, 1);
  assert.match(live.stderr, /--env live is strato dev's environment/);
  const badApp = await runCli(['deploy'], { cwd: dir, env: { ...env, STRATO_APP: 'my app' } });
  assert.match(badApp.stderr, /"my app" cannot be an app name .* set STRATO_APP to .* e\.g\. STRATO_APP=my-app/);
  const noKey = await runCli(['env', 'list'], { cwd: dir, env: { STRATO_API_URL: p.url, STRATO_API_KEY: '' } });
  assert.equal(noKey.code, 1);
  assert.match(noKey.stderr, /STRATO_API_KEY/);
});

test('a command outside any project is refused rather than act on the app its folder is named after; a subfolder acts on its project', async () => {
  const dir = await initProject('shelf');
  assert.equal((await runCli(['deploy'], { cwd: dir, env })).code, 0);
  const stranger = path.join(tmp, 'elsewhere', 'shelf'); // the app's name, in no project
  mkdirSync(stranger, { recursive: true });
  const r = await runCli(['undeploy', '--yes'], { cwd: stranger, env });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /elsewhere\/shelf is not in a Strato project \(none of pyproject\.toml, requirements\.txt, \.strato\/ is here or in a folder above\)/);
  assert.ok((await envGet(dir, 'production')).endpoints.length > 0, 'nothing was removed');
  // A deploy packages sources: it says so, and does not offer STRATO_APP (which names the app of the other commands).
  const deployed = await runCli(['deploy'], { cwd: stranger, env });
  assert.equal(deployed.code, 1);
  assert.match(deployed.stderr, /elsewhere\/shelf is not a Strato project .*, so nothing was packaged: run strato deploy in the project folder/);
  assert.doesNotMatch(deployed.stderr, /STRATO_APP/);
  const sub = path.join(dir, 'notebooks');
  mkdirSync(sub);
  const listed = await runCli(['env', 'get', 'production', '--json'], { cwd: sub, env });
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal((JSON.parse(listed.stdout) as EnvJson).app, 'shelf', 'the project of the subfolder');
  // So do check and build (and dev and preview): the whole project, not the subfolder taken for a project of its own.
  const checkedHere = await runCli(['check', '--json'], { cwd: sub, env });
  const checkedAtRoot = await runCli(['check', '--json'], { cwd: dir, env });
  assert.equal(checkedHere.code, 0, checkedHere.stderr);
  assert.deepEqual(JSON.parse(checkedHere.stdout), JSON.parse(checkedAtRoot.stdout));
  assert.ok((JSON.parse(checkedHere.stdout) as { files: number }).files > 0);
  const built = await runCli(['build'], { cwd: sub, env });
  assert.equal(built.code, 0, built.stderr);
  assert.match(built.stdout, /built shelf .*-> \.\.\/\.strato\/artifact\.tar\.gz/);
  assert.equal(existsSync(path.join(sub, '.strato')), false, 'the subfolder did not become a project');
});
