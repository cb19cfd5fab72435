// Bundles benches (bench/<name>.ts) into dist/bench-<name>.cjs, so that they run where only Node and dist/ are: a lent
// GPU machine has no npm registry, so no node_modules and no tsx (scripts/device/pack.sh). Run them with --bundle, so
// that the platform they start is dist/cli.js too.
//
// In the bundle every module's __dirname is dist/: right for the engine (its threads, .wasm files and Python package
// sit there) and for a bench's REPO (dist/..). The test helpers locate files from their own folder (the Python package
// from test/helpers/../../engine/python): there __dirname is rewritten to test/helpers of the repository.
import * as esbuild from 'esbuild';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('usage: node scripts/device/bundle-bench.mjs <bench name>... (e.g. multinode platform-jobs)');
  process.exit(2);
}

const helpersDirname = {
  name: 'test-helpers-dirname',
  setup(build) {
    build.onLoad({ filter: /[\\/]test[\\/]helpers[\\/][^\\/]+\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      return { contents: text.replace(/\b__dirname\b/g, "require('path').join(__dirname, '..', 'test', 'helpers')"), loader: 'ts' };
    });
  },
};

for (const name of names) {
  await esbuild.build({
    entryPoints: [path.join('bench', `${name}.ts`)],
    outfile: path.join('dist', `bench-${name}.cjs`),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'warning',
    // The same as esbuild.mjs: .wasm files are dist's own, ESM dependencies find them from the bundle's URL.
    external: ['vscode', 'ts-morph', 'pg-native'],
    loader: { '.wasm': 'file' },
    define: { 'import.meta.url': '__strato_import_meta_url' },
    banner: { js: "var __strato_import_meta_url = require('url').pathToFileURL(__filename).href;" },
    logOverride: { 'require-resolve-not-external': 'silent' },
    plugins: [helpersDirname],
  });
  console.log(`built dist/bench-${name}.cjs (run: node dist/bench-${name}.cjs --bundle)`);
}
