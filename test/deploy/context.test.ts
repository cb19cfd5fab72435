// The project context (platform URL, key, app) resolved the same way by the CLI and the extension
// (resolveProjectContext / resolveApiConfig) and by the Python package's conventions (strato/_remote.py), on the
// same projects: environment variables, .env files with every syntax the parser allows, the local platform.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { resolveApiConfig } from '../../engine/src/api/config';
import { trustUrl } from '../../engine/src/api/trust';
import { appNameFor } from '../../engine/src/deploy/context';
import { defaultPlatformDir, platformLayout, writeState } from '../../engine/src/protocol/layout';
import { runPython } from '../python/helpers';

let server: http.Server;
let localUrl: string;
const dirs: string[] = [];
const CLEAN = { STRATO_API_URL: '', STRATO_API_KEY: '', STRATO_APP: '', STRATO_ENV: '', STRATO_PLATFORM_URL: '' };

before(async () => {
  // A stand-in for a running local platform: the state file names it and it answers /healthz.
  server = http.createServer((_req, res) => res.end('{"version":"test"}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  localUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

interface Case {
  what: string;
  env?: Record<string, string>;
  dotEnv?: string;
  /** A local platform (state file and key file) in the data dir. */
  local?: { key: string };
  /** An origin the user confirmed with `strato trust`. */
  trusted?: string;
}

function project(c: Case): { root: string; env: NodeJS.ProcessEnv } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-context-'));
  dirs.push(base);
  const root = path.join(base, 'shop-app');
  fs.mkdirSync(root);
  fs.writeFileSync(path.join(root, 'pyproject.toml'), '[project]\nname = "shop"\n');
  if (c.dotEnv !== undefined) fs.writeFileSync(path.join(root, '.env'), c.dotEnv);
  const env: NodeJS.ProcessEnv = { ...process.env, ...CLEAN, STRATO_DATA_DIR: path.join(base, 'data'), ...c.env };
  if (c.trusted) trustUrl(c.trusted, env);
  if (c.local) {
    const l = platformLayout(defaultPlatformDir(env));
    fs.mkdirSync(l.root, { recursive: true });
    fs.writeFileSync(l.keyFile, `${c.local.key}\n`);
    writeState(l.stateFile, { pid: process.pid, url: localUrl, host: '127.0.0.1', port: 0, startedAt: Date.now(), version: 'test', dataDir: l.root });
  }
  return { root, env };
}

async function fromPython(root: string, env: NodeJS.ProcessEnv): Promise<{ url: string; key: string; app: string } | string> {
  const code = `
import json, sys
from strato import _context
try:
    url, key = _context.target("x", sys.argv[1])
    print(json.dumps({"url": url, "key": key, "app": _context.app_name(sys.argv[1])}))
except Exception as e:
    print(json.dumps(type(e).__name__))
`;
  const r = await runPython(['-c', code, root], { env: env as Record<string, string>, cwd: root });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

const CASES: Case[] = [
  {
    what: 'quoted values with a comment after them in .env',
    dotEnv: 'STRATO_API_URL="http://127.0.0.1:9"  # the team platform\nSTRATO_API_KEY=\'dot-key\' # mine\n',
  },
  { what: 'URL and key from the environment', env: { STRATO_API_URL: 'http://127.0.0.1:9/', STRATO_API_KEY: 'env-key' } },
  {
    what: 'URL and key from .env, with export, quotes and comments',
    dotEnv: '# team platform\nexport STRATO_API_URL="http://127.0.0.1:9"\nSTRATO_API_KEY=dot-key   # mine\n',
  },
  {
    what: 'the environment wins over .env',
    env: { STRATO_API_URL: 'http://127.0.0.1:9', STRATO_API_KEY: 'env-key' },
    dotEnv: "STRATO_API_URL='http://127.0.0.1:8'\nSTRATO_API_KEY=dot-key\n",
  },
  {
    what: "the user's key goes to a .env URL the user trusted",
    env: { STRATO_API_KEY: 'env-key' },
    dotEnv: 'STRATO_API_URL=http://127.0.0.1:9\n',
    trusted: 'http://127.0.0.1:9',
  },
  { what: 'the local platform and its key file', local: { key: 'file-key' } },
  { what: 'the local platform with a key from .env', local: { key: 'file-key' }, dotEnv: 'STRATO_API_KEY=dot-key\n' },
  { what: 'STRATO_APP names the app', env: { STRATO_APP: ' billing ' }, local: { key: 'file-key' } },
];

describe('one project context for the CLI, the extension and the Python package', () => {
  for (const c of CASES) {
    test(c.what, async () => {
      const { root, env } = project(c);
      const ts = await resolveApiConfig({ projectDir: root, env, start: false });
      assert.ok(ts, 'the CLI resolves a platform');
      const py = await fromPython(root, env);
      assert.deepEqual(py, { url: ts.baseUrl, key: ts.apiKey, app: appNameFor(root, env) });
    });
  }

  test("neither side sends the user's key to a URL from the project's .env that the user has not trusted", async () => {
    const { root, env } = project({ what: 'untrusted', env: { STRATO_API_KEY: 'env-key' }, dotEnv: 'STRATO_API_URL=http://127.0.0.1:9\n' });
    await assert.rejects(resolveApiConfig({ projectDir: root, env }), /strato trust http:\/\/127\.0\.0\.1:9/);
    // The extension's views (which start nothing) say the same, rather than "no platform running".
    await assert.rejects(resolveApiConfig({ projectDir: root, env, start: false }), /strato trust http:\/\/127\.0\.0\.1:9/);
    assert.equal(await fromPython(root, env), 'StratoContextError');
  });

  test('a key that can never be sent is refused by both sides in one sentence, which never shows the key', async () => {
    const cases: Array<[Case, RegExp]> = [
      [{ what: 'space', env: { STRATO_API_URL: 'http://127.0.0.1:9', STRATO_API_KEY: 'abc def' } }, /^STRATO_API_KEY holds a space at character 4,/],
      [
        { what: 'line end', env: { STRATO_API_URL: 'http://127.0.0.1:9', STRATO_API_KEY: 'secretkey\n' } },
        /^STRATO_API_KEY holds a line break at character 10,/,
      ],
      [
        { what: 'not ASCII', dotEnv: 'STRATO_API_URL=http://127.0.0.1:9\nSTRATO_API_KEY=ключ\n' },
        /^STRATO_API_KEY in the project's \.env holds "к" \(not ASCII\) at character 1,/,
      ],
    ];
    for (const [c, sentence] of cases) {
      const { root, env } = project(c);
      const cli = await resolveApiConfig({ projectDir: root, env }).then(
        () => 'accepted',
        (e: Error) => e.message,
      );
      assert.match(cli, sentence, c.what);
      const code = `
import sys
from strato import _context
try:
    _context.target("x", sys.argv[1])
    print("accepted")
except Exception as e:
    print(type(e).__name__, str(e))
`;
      const py = (await runPython(['-c', code, root], { env: env as Record<string, string>, cwd: root })).stdout.trim();
      assert.equal(py, `StratoContextError calling endpoint 'x': ${cli}`, c.what);
      assert.doesNotMatch(py, /abc def|secretkey|ключ/, 'the key itself is never said');
    }
  });

  test('with no platform at all, neither side invents one', async () => {
    const { root, env } = project({ what: 'nothing' });
    assert.equal(await resolveApiConfig({ projectDir: root, env, start: false }), undefined);
    assert.equal(await fromPython(root, env), 'StratoContextError');
  });
});
