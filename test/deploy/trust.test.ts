// Trust of project settings: a STRATO_API_URL from a cloned project's .env never receives the user's own
// STRATO_API_KEY until the user runs `strato trust URL`; a URL from the user's environment, or a key from the
// project's .env, is used as before. The "server" is a real HTTP listener on 127.0.0.1 that records what it got.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';

let tmp: string;
let server: http.Server;
let url: string;
const seen: string[] = [];

before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-trust-'));
  server = http.createServer((req, res) => {
    seen.push(req.headers.authorization ?? '(none)');
    req.resume();
    res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(tmp, { recursive: true, force: true });
});

function project(name: string, dotEnv: string): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'pyproject.toml'), `[project]\nname = "${name}"\n`);
  writeFileSync(path.join(dir, '.env'), dotEnv);
  return dir;
}

test("a project's .env URL does not get the user's key until the user trusts it", async () => {
  const dir = project('cloned', `STRATO_API_URL=${url}\n`);
  const env = { STRATO_API_KEY: 'users-own-secret-key', STRATO_DATA_DIR: path.join(tmp, 'data1'), STRATO_API_URL: '' };
  seen.length = 0;
  const r = await runCli(['env', 'list'], { cwd: dir, env });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    new RegExp(
      `STRATO_API_URL ${url.replace(/\./g, '\\.')} comes from the project \\(\\.env or workspace settings\\), and your STRATO_API_KEY is not sent to ` +
        `a server the project chose: if you trust it, run strato trust ${url.replace(/\./g, '\\.')}`,
    ),
  );
  assert.equal(seen.length, 0, "nothing at all reached the project's server");

  const t = await runCli(['trust', `${url}/some/path`], { cwd: dir, env });
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, new RegExp(`trusted ${url.replace(/\./g, '\\.')}`));
  await runCli(['env', 'list'], { cwd: dir, env });
  assert.ok(seen.includes('Bearer users-own-secret-key'), `after trust the key is sent: ${seen.join(', ')}`);
});

test("a URL from the user's environment, or a key from the project's own .env, is used without asking", async () => {
  const env = { STRATO_DATA_DIR: path.join(tmp, 'data2') };
  seen.length = 0;
  const userUrl = project('mine', '');
  await runCli(['env', 'list'], { cwd: userUrl, env: { ...env, STRATO_API_URL: url, STRATO_API_KEY: 'users-key' } });
  assert.ok(seen.includes('Bearer users-key'), seen.join(', '));
  const both = project('both', `STRATO_API_URL=${url}\nSTRATO_API_KEY=projects-key\n`);
  await runCli(['env', 'list'], { cwd: both, env: { ...env, STRATO_API_URL: '', STRATO_API_KEY: '' } });
  assert.ok(seen.includes('Bearer projects-key'), seen.join(', '));
});
