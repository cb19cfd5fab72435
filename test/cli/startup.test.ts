// Start-up stays small: `strato --version` and `--help` load only the command line itself (commander and the
// commands' registrations), never the platform, the parser, GraphQL, PGlite, the build, the dev server or ts-morph; and
// a command that needs one of them loads it on demand. Checked on the bundle users run (dist/cli.js).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, ensureBuilt, REPO } from '../helpers/cli';

/** Marks of the heavy parts, as they appear in their bundled code. */
const HEAVY: Record<string, RegExp> = {
  'the platform': /strato platform: cannot write worker log/,
  'the tree-sitter parser': /tree-sitter\.wasm/,
  GraphQL: /GraphQLSchema/,
  PGlite: /pglite\.data/,
  'the Swagger UI': /swagger-ui-bundle/,
};
/** Heavy dependencies left out of the bundle, by the path they load from. */
const HEAVY_DEPENDENCIES: Record<string, RegExp> = { 'ts-morph (the TypeScript compiler)': /\/node_modules\/(ts-morph|@ts-morph|typescript)\// };

let dir: string;
before(() => {
  ensureBuilt();
  dir = mkdtempSync(path.join(os.tmpdir(), 'strato-startup-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The files of the CLI a command loaded, with their text; `others` lists every other file it loaded. */
function loaded(args: string[], cwd = dir): Array<{ file: string; text: string }> & { others: string[] } {
  const log = path.join(dir, `load-${Math.random().toString(36).slice(2)}.log`);
  const r = spawnSync(process.execPath, ['--import', path.join(REPO, 'test', 'cli', 'loadLog.mjs'), CLI, ...args], {
    cwd,
    env: { ...process.env, STRATO_LOAD_LOG: log, STRATO_DATA_DIR: path.join(dir, 'data'), STRATO_API_URL: '', NO_COLOR: '1' },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const files = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((u) => fileURLToPath(u));
  const dist = files.filter((f) => f.startsWith(path.join(REPO, 'dist'))).map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  return Object.assign(dist, { others: files.filter((f) => !f.startsWith(path.join(REPO, 'dist'))) });
}

describe('the CLI loads only what a command uses', () => {
  test('each heavy part is found in the bundle by its mark (so that the checks below can see it)', () => {
    // PGlite runs on the database's own thread (dist/pglite-thread.js), which no command's thread loads.
    const chunks = readdirSync(path.join(REPO, 'dist')).filter((f) => /^cli.*\.mjs$|^pglite-thread\.js$/.test(f));
    for (const [part, mark] of Object.entries(HEAVY)) {
      assert.ok(
        chunks.some((c) => mark.test(readFileSync(path.join(REPO, 'dist', c), 'utf8'))),
        `no chunk holds ${part}`,
      );
    }
  });

  for (const args of [['--version'], ['--help'], ['deploy', '--help'], ['client', '--help'], ['logs', '--help']]) {
    test(`strato ${args.join(' ')} loads none of the heavy parts`, () => {
      const files = loaded(args);
      assert.ok(
        files.some((f) => f.file.endsWith('cli.mjs')),
        'the CLI entry was loaded',
      );
      for (const [part, mark] of Object.entries(HEAVY)) {
        const culprit = files.find((f) => mark.test(f.text));
        assert.equal(culprit, undefined, `${part} was loaded by ${path.basename(culprit?.file ?? '')}`);
      }
      for (const [part, mark] of Object.entries(HEAVY_DEPENDENCIES)) {
        assert.equal(
          files.others.find((f) => mark.test(f)),
          undefined,
          `${part} was loaded`,
        );
      }
      const bytes = files.reduce((n, f) => n + f.text.length, 0);
      assert.ok(bytes < 400_000, `start-up read ${bytes} bytes of bundle`);
    });
  }

  /** The Node built-in modules a command loaded (process.moduleLoadList at exit). */
  function builtins(args: string[]): string[] {
    const log = path.join(dir, `builtins-${Math.random().toString(36).slice(2)}.log`);
    const preload =
      'data:text/javascript,' +
      encodeURIComponent(
        `import { writeFileSync } from 'node:fs'; process.on('exit', () => writeFileSync(${JSON.stringify(log)}, process.moduleLoadList.join('\\n')));`,
      );
    const r = spawnSync(process.execPath, ['--import', preload, CLI, ...args], {
      cwd: dir,
      env: { ...process.env, STRATO_DATA_DIR: path.join(dir, 'data'), STRATO_API_URL: '', NO_COLOR: '1' },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    return readFileSync(log, 'utf8').split('\n');
  }

  for (const args of [['--version'], ['--help']]) {
    test(`strato ${args.join(' ')} loads no child_process, crypto or v8 (commander's spawn, the key generator, the WebAssembly tier: on use)`, () => {
      const loadedBuiltins = builtins(args);
      assert.ok(loadedBuiltins.includes('NativeModule fs'), 'the module list was read');
      for (const m of ['child_process', 'crypto', 'v8']) assert.ok(!loadedBuiltins.includes(`NativeModule ${m}`), `${m} was loaded`);
    });
  }

  test('strato build loads the parser, and still not the platform or GraphQL', () => {
    spawnSync(process.execPath, [CLI, 'init', 'tpl'], { cwd: dir, env: { ...process.env, NO_COLOR: '1' } });
    const files = loaded(['build'], path.join(dir, 'tpl'));
    assert.ok(
      files.some((f) => HEAVY['the tree-sitter parser'].test(f.text)),
      'build loaded the parser',
    );
    for (const part of ['the platform', 'GraphQL', 'PGlite']) {
      assert.ok(!files.some((f) => HEAVY[part].test(f.text)), `build loaded ${part}`);
    }
  });
});
