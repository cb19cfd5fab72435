// What the extension weighs: the .vsix `npm run package` makes (with .vscodeignore), next to the .vsix vsce makes of
// the same tree without it (its defaults: every file, every production dependency), both packaged in this run; then
// the bundles (raw and gzip) and the largest groups of packaged files.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

const repo = path.resolve(__dirname, '..');
const vsce = path.join(repo, 'node_modules', '@vscode', 'vsce', 'vsce');
const MB = (n: number) => `${(n / 1024 / 1024).toFixed(2)} MB`;
const KB = (n: number) => `${(n / 1024).toFixed(0)} KB`;

/** Packages the tree; returns the .vsix size, its file count and how long vsce took. */
function pack(out: string, extra: string[]): { bytes: number; files: number; ms: number } {
  const t = Date.now();
  const r = spawnSync(process.execPath, [vsce, 'package', '--no-yarn', '--out', out, ...extra], { cwd: repo, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`vsce package failed:\n${r.stdout}\n${r.stderr}`);
  const files = Number(/Packaged: .*\((\d+) files/.exec(r.stdout)?.[1] ?? NaN);
  return { bytes: statSync(out).size, files, ms: Date.now() - t };
}

function main(): void {
  execFileSync(process.execPath, ['esbuild.mjs'], { cwd: repo, stdio: 'ignore' });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-bench-package-'));
  try {
    const ours = pack(path.join(tmp, 'strato.vsix'), ['--readme-path', 'client/README.md']);
    const empty = path.join(tmp, 'empty-ignore');
    writeFileSync(empty, '');
    const base = pack(path.join(tmp, 'default.vsix'), ['--ignoreFile', empty]);
    console.log('the .vsix                              size        files   packaged in');
    console.log(`  npm run package (.vscodeignore)     ${MB(ours.bytes).padStart(9)}  ${String(ours.files).padStart(6)}   ${ours.ms} ms`);
    console.log(`  vsce defaults, same tree (baseline) ${MB(base.bytes).padStart(9)}  ${String(base.files).padStart(6)}   ${base.ms} ms`);
    console.log(`  ratio                               ${(ours.bytes / base.bytes).toFixed(2)}x`);

    const dist = path.join(repo, 'dist');
    const size = (files: string[]) => files.reduce((n, f) => n + statSync(path.join(dist, f)).size, 0);
    const gz = (files: string[]) => files.reduce((n, f) => n + gzipSync(readFileSync(path.join(dist, f))).length, 0);
    const chunks = readdirSync(dist).filter((f) => /^cli.*\.mjs$/.test(f));
    const bundles: Array<[string, string[]]> = [
      ['dist/extension.js (the extension host loads it)', ['extension.js']],
      ['dist/server.js (language server)', ['server.js']],
      [`dist/cli.mjs + ${chunks.length - 1} chunks (strato CLI)`, chunks],
      ['dist/unpack-worker.js', ['unpack-worker.js']],
    ];
    console.log('\nbundles                                             raw        gzip');
    for (const [what, files] of bundles) console.log(`  ${what.padEnd(48)} ${KB(size(files)).padStart(8)}  ${KB(gz(files)).padStart(8)}`);

    const listed = spawnSync(process.execPath, [vsce, 'ls', '--no-yarn'], { cwd: repo, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    const groups: Array<[string, RegExp]> = [
      ['PGlite (wasm + data)', /^dist\/pglite\./],
      ['ts-morph and its dependencies', /^node_modules\//],
      ['JavaScript bundles', /^dist\/[^/]+\.m?js$/],
      ['Swagger UI (/docs)', /^dist\/swagger-ui\//],
      ['tree-sitter parsers', /^dist\/tree-sitter/],
      ['Python package strato', /^dist\/python\//],
      ['grammar, schemas, media, manifest', /^(syntaxes|client)\/|^package\.json$|^LICENSE$/],
    ];
    console.log('\npackaged files by group (uncompressed)');
    for (const [what, re] of groups) {
      const files = listed.filter((f) => re.test(f));
      const bytes = files.reduce((n, f) => n + statSync(path.join(repo, f)).size, 0);
      console.log(`  ${what.padEnd(36)} ${MB(bytes).padStart(9)}  ${String(files.length).padStart(4)} files`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main();
