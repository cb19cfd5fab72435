// Issue #16, defect 12, from the command line: `strato keys create|list|revoke` and `strato audit` with the platform
// key, a person's deploy key used by `strato deploy` (its app only), and the sentences a refused key gets.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ApiKeyInfo, AuditEntry } from '../../engine/src/api/controlPlane';
import { runCli } from '../helpers/cli';
import { startTestPlatform, type TestPlatform } from '../helpers/platform';

let tp: TestPlatform;
let tmp: string;
let admin: NodeJS.ProcessEnv;

const WORKER = `from strato import CpuInstanceType, Endpoint


@Endpoint(name="hello", cpu=CpuInstanceType.CPU3C_1_2, workers=(0, 1))
def hello(name: str = "you") -> dict:
    return {"hello": name}
`;

/** A one-endpoint project in a folder named after its app. */
function project(app: string): string {
  const dir = path.join(tmp, app);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'pyproject.toml'), `[project]\nname = "${app}"\nversion = "0.1.0"\n`);
  fs.writeFileSync(path.join(dir, 'worker.py'), WORKER);
  return dir;
}

before(async () => {
  tp = await startTestPlatform();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-keys-cli-'));
  admin = { STRATO_API_URL: tp.url, STRATO_API_KEY: tp.key };
});
after(async () => {
  await tp?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('keys create prints the key once; list shows it without the key; the key deploys its app only; revoke refuses it; audit says who did what', async () => {
  const created = await runCli(['keys', 'create', '--name', 'dave', '--scope', 'deploy', '--app', 'wiki', '--app', 'docs,notes'], { cwd: tmp, env: admin });
  assert.equal(created.code, 0, created.stderr);
  const secret = created.stdout.trim();
  assert.match(secret, /^strato_[A-Za-z0-9_-]{43}$/, 'the key alone on stdout');
  assert.match(created.stderr, /^created key dave \(key_[0-9a-f]{16}, deploy: wiki, docs, notes\)\n/);
  assert.match(created.stderr, /only time the key is shown: the platform keeps only its SHA-256 hash/);

  const list = await runCli(['keys', 'list'], { cwd: tmp, env: admin });
  assert.equal(list.code, 0, list.stderr);
  const lines = list.stdout.trimEnd().split('\n');
  assert.match(lines[0], /^NAME +ID +PREFIX +SCOPE +APPS +CREATED +LAST USED +STATUS$/);
  assert.match(lines[1], /^platform +platform +- +admin +every app +- +never +platform key \(key file or --api-key\)$/);
  const dave = lines.find((l) => l.startsWith('dave '))!;
  assert.ok(dave.includes(`${secret.slice(0, 12)}…`), dave);
  assert.match(dave, / deploy +wiki, docs, notes +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +never +active$/);
  assert.ok(!list.stdout.includes(secret));

  // dave deploys the app his key names; another project's app is refused before anything is built into it.
  const asDave = { STRATO_API_URL: tp.url, STRATO_API_KEY: secret };
  const deployed = await runCli(['deploy'], { cwd: project('wiki'), env: asDave });
  assert.equal(deployed.code, 0, deployed.stderr);
  assert.match(deployed.stdout, /Deployed wiki to production/);
  const refused = await runCli(['deploy'], { cwd: project('shop'), env: asDave });
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /error: the control plane refused the request: the key "dave" \(deploy: wiki, docs, notes\) may not read app "shop"; ask an admin for a key with access to it \(strato keys create --scope deploy --app shop\)/,
  );
  const notAdmin = await runCli(['audit'], { cwd: tmp, env: asDave });
  assert.equal(notAdmin.code, 1);
  assert.match(notAdmin.stderr, /reading the audit log needs an admin key; the key "dave" \(deploy: wiki, docs, notes\) is not one/);

  const json = JSON.parse((await runCli(['keys', 'list', '--json'], { cwd: tmp, env: admin })).stdout) as ApiKeyInfo[];
  assert.ok(json.find((k) => k.name === 'dave')!.lastUsedAt !== null, 'last use recorded');

  const revoked = await runCli(['keys', 'revoke', 'dave'], { cwd: tmp, env: admin });
  assert.equal(revoked.code, 0, revoked.stderr);
  assert.match(revoked.stdout, /^revoked key dave \(key_[0-9a-f]{16}\); requests with it are refused from now on\n$/);
  const after = await runCli(['env', 'get', 'production'], { cwd: project('wiki'), env: asDave });
  assert.equal(after.code, 1);
  assert.match(after.stderr, /refused the API key \(401\); check STRATO_API_KEY .*The platform says: the API key "dave" was revoked at /);

  const audit = await runCli(['audit', '--app', 'wiki', '--json'], { cwd: tmp, env: admin });
  assert.equal(audit.code, 0, audit.stderr);
  const entries = JSON.parse(audit.stdout) as AuditEntry[];
  assert.deepEqual(entries.map((e) => `${e.keyName} ${e.operation}`).reverse(), [
    'dave createApp',
    'dave createEnvironment',
    'dave finalizeBuild',
    'dave deployBuild',
    'dave saveEndpoint',
  ]);
  const table = await runCli(['audit', '--limit', '2'], { cwd: tmp, env: admin });
  assert.equal(table.code, 0, table.stderr);
  const rows = table.stdout.trimEnd().split('\n');
  assert.equal(rows.length, 3, table.stdout);
  assert.match(rows[0], /^TIME +KEY +OPERATION +OUTCOME +TARGET +DETAIL$/);
  assert.match(rows[1], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +platform +revokeKey +ok +key dave$/);
  assert.match(rows[2], /^\S+ \S+ +dave +saveEndpoint +ok +endpoint production\/hello \(app wiki\) +\{"change":"created","build":"bld_\w+"\}$/);
});

test('bad input gets a sentence: an unknown scope, a deploy key without apps, a limit that is not a number', async () => {
  const scope = await runCli(['keys', 'create', '--name', 'x', '--scope', 'root'], { cwd: tmp, env: admin });
  assert.notEqual(scope.code, 0);
  assert.match(scope.stderr, /Allowed choices are admin, deploy, invoke/);
  const apps = await runCli(['keys', 'create', '--name', 'x', '--scope', 'deploy'], { cwd: tmp, env: admin });
  assert.equal(apps.code, 1);
  assert.match(apps.stderr, /a deploy key needs the apps it may deploy to \(--app NAME, one or more\)/);
  const limit = await runCli(['audit', '--limit', 'ten'], { cwd: tmp, env: admin });
  assert.equal(limit.code, 1);
  assert.match(limit.stderr, /--limit must be a whole number of 1 or more, got "ten"/);
  const tooMany = await runCli(['audit', '--limit', '20000'], { cwd: tmp, env: admin });
  assert.equal(tooMany.code, 1);
  assert.match(tooMany.stderr, /limit must be an integer from 1 to 10000, got 20000/);
});
