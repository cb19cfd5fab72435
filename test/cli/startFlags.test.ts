// Addresses and the worker interpreter given to a command are judged when it starts, in one sentence naming the
// flag or variable: before, `--public-url notaurl` and a missing `--python` started a platform whose every worker
// or link then failed, and `strato trust file:///x` listed the origin "null".
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt, runCli } from '../helpers/cli';

let dir: string;
let env: NodeJS.ProcessEnv;
before(() => {
  ensureBuilt();
  dir = mkdtempSync(path.join(os.tmpdir(), 'strato-flags-'));
  env = { STRATO_DATA_DIR: path.join(dir, 'data'), STRATO_API_URL: '', STRATO_API_KEY: '', STRATO_PYTHON: '' };
});
after(() => rmSync(dir, { recursive: true, force: true }));

const serve = (...flags: string[]) => ['platform', 'serve', '--port', '0', '--data-dir', path.join(dir, 'platform'), ...flags];

test('platform serve refuses a --public-url or --node-url that is no http(s) URL, and an interpreter that is not there', async () => {
  const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [serve('--public-url', 'notaurl'), {}, /^error: --public-url "notaurl" is not a URL; give an address such as the address clients reach/m],
    [serve('--public-url', 'ftp://proxy'), {}, /^error: --public-url must be an http:\/\/ or https:\/\/ URL such as .*, got "ftp:\/\/proxy"$/m],
    [serve('--python', path.join(dir, 'nope', 'python3')), {}, /^error: --python \S+nope\/python3 is not an executable file: give a Python 3 interpreter/m],
    [serve(), { STRATO_PYTHON: 'python3.nope' }, /^error: STRATO_PYTHON python3\.nope is not found in any folder of PATH/m],
    [['platform', 'start', '--port', '0', '--python', '/nope/python3'], {}, /^error: --python \/nope\/python3 is not an executable file/m],
    [['platform', 'agent', '--join', 'ftp://x', '--key', 'k', '--python', 'python3'], {}, /^error: --join must be an http:\/\/ or https:\/\/ URL such as/m],
    [
      ['platform', 'agent', '--join', 'http://127.0.0.1:9', '--key', 'k', '--python', '/nope/python3'],
      {},
      /^error: --python \/nope\/python3 is not an executable/m,
    ],
  ];
  for (const [args, extra, expected] of cases) {
    const r = await runCli(args, { cwd: dir, env: { ...env, ...extra }, timeoutMs: 30_000 });
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, expected);
    assert.doesNotMatch(r.stdout, /listening on/);
  }
  assert.ok(!existsSync(path.join(dir, 'data', 'platform', 'state.json')), 'no background platform was started');
});

test('a number flag is digits: an empty --port, hex and exponents are refused by every command, not read as 0, 16 or 1000', async () => {
  const cases: Array<[string[], RegExp]> = [
    [
      ['platform', 'serve', '--port', '', '--data-dir', path.join(dir, 'platform')],
      /^error: --port must be a port number \(1-65535, or 0 for any free port\), got ""$/m,
    ],
    [['platform', 'serve', '--port', '1e3', '--data-dir', path.join(dir, 'platform')], /^error: --port must be a port number .*, got "1e3"$/m],
    [['platform', 'start', '--port', '0x10'], /^error: --port must be a port number .*, got "0x10"$/m],
    [['platform', 'serve', '--port', '70000', '--data-dir', path.join(dir, 'platform')], /^error: --port must be a port number .*, got "70000"$/m],
    [['dev', '--port', ''], /^error: --port must be a port number .*, got ""$/m],
    [['dev', '--port', '0x10'], /^error: --port must be a port number .*, got "0x10"$/m],
    [serve('--node-lost-ms', '1e4'), /^error: --node-lost-ms must be a whole number of 20 or more, got "1e4"$/m],
  ];
  for (const [args, expected] of cases) {
    const r = await runCli(args, { cwd: dir, env, timeoutMs: 30_000 });
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, expected, args.join(' '));
    assert.doesNotMatch(r.stdout, /listening on|http:\/\/localhost/);
  }
});

test('an agent given a server that is no platform (a web server answering HTML) says so, without the page', async () => {
  const page = '<!DOCTYPE HTML>\n<html lang="en">\n<head><title>Error response</title></head>\n<body>Unsupported method</body>\n</html>\n';
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(req.method === 'GET' ? 200 : 501, { 'content-type': 'text/html' }).end(page);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await runCli(['platform', 'agent', '--join', url, '--key', 'k', '--python', 'python3', '--data-dir', path.join(dir, 'agent')], {
      cwd: dir,
      env,
      timeoutMs: 30_000,
    });
    assert.equal(r.code, 1, r.stdout);
    assert.match(
      r.stderr,
      /^error: http:\/\/127\.0\.0\.1:\d+ does not answer as a Strato platform \(POST \/_agent\/register answered HTTP 501 with an HTML page\): --join must be a platform's base URL/m,
    );
    assert.doesNotMatch(r.stderr, /DOCTYPE/);
  } finally {
    server.close();
  }
});

test('preview image refuses an interpreter that is not there and a tag that is no image name, before asking Docker', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['--python', '/nope/python3'], /^error: --python \/nope\/python3 is not an executable file: give a Python 3 interpreter/m],
    [['--tag', 'UPPER:x'], /^error: --tag "UPPER:x" is not an image name: use lowercase repository names/m],
    [['--tag', 'ok:1', '--tag', 'a@@b'], /^error: --tag "a@@b" is not an image name/m],
  ];
  for (const [args, expected] of cases) {
    // No engine answers at DOCKER_HOST: a refusal that named Docker would mean the flags were not judged first.
    const r = await runCli(['preview', 'image', ...args], { cwd: dir, env: { ...env, DOCKER_HOST: `unix://${path.join(dir, 'no.sock')}` } });
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, expected);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('trust takes only an http(s) URL; STRATO_API_URL that is not one is named', async () => {
  for (const url of ['file:///etc/passwd', 'ftp://x', 'notaurl']) {
    const r = await runCli(['trust', url], { cwd: dir, env });
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /^error: the URL (must be an http:\/\/ or https:\/\/ URL|"notaurl" is not a URL)/m);
  }
  const ok = await runCli(['trust', 'https://strato.example.com/some/path'], { cwd: dir, env });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /trusted https:\/\/strato\.example\.com: /);
  const r = await runCli(['env', 'list'], { cwd: dir, env: { ...env, STRATO_API_URL: 'http://a b', STRATO_API_KEY: 'k', STRATO_APP: 'a' } });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^error: STRATO_API_URL "http:\/\/a b" is not a URL; give an address such as http:\/\/127\.0\.0\.1:7450/m);
});
