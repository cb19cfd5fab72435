// Bundles the three entry points (CLI, language server, VS Code extension) and the platform's threads (unpacking, database) into
// dist/ and copies the files they load at run time: the tree-sitter WebAssembly parsers and the Python package `strato`.
import * as esbuild from 'esbuild';
import { mkdirSync, rmSync, chmodSync, existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const watch = process.argv.includes('--watch');
const dist = path.resolve('dist');
mkdirSync(dist, { recursive: true });

// The language server and the extension are CommonJS bundles (what VS Code loads). The CLI is split: ESM chunks
// (dist/cli.mjs + dist/cli-*.mjs) that each command loads when it needs them, so `strato --version` reads a few KB
// instead of the whole engine; dist/cli.js is the CommonJS launcher that `bin` points at.
const entries = [
  { in: 'server/src/main.ts', out: 'server' },
  // The extension is three bundles, so that activating it reads little: the views and commands; the language client,
  // loaded when the workspace uses Strato; and the build, deploy and client generator, loaded by the commands that use
  // them (client/src/heavy.ts). Their own modules are marked free of side effects, so an import of an engine entry
  // point brings only what is used, not the whole folder behind it.
  { in: 'client/src/extension.ts', out: 'extension', pure: true },
  { in: 'client/src/languageClient.ts', out: 'extension-lsp', pure: true },
  { in: 'client/src/heavyEntry.ts', out: 'extension-heavy', pure: true },
  // The platform's worker threads (engine/src/platform/threads.ts): unpacking build artifacts (controlPlane/unpack.ts).
  { in: 'engine/src/platform/controlPlane/unpackWorker.ts', out: 'unpack-worker' },
  // The embedded database runs on a thread of its own (engine/src/platform/store/pglite.ts).
  { in: 'engine/src/platform/store/pgliteThread.ts', out: 'pglite-thread' },
].filter((e) => existsSync(e.in));

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  logLevel: 'warning',
  // ts-morph carries the whole TypeScript compiler (14 MB): it stays a dependency that `strato client` and the
  // extension's "Generate TypeScript Client" load on demand, instead of a copy in each bundle.
  external: ['vscode', 'ts-morph'],
  loader: { '.wasm': 'file' },
  // Fallbacks for running from source (tsx, node_modules); the bundle finds its files beside itself first.
  logOverride: { 'require-resolve-not-external': 'silent' },
  // ESM dependencies (web-tree-sitter, PGlite) locate their .wasm files from import.meta.url: in the CommonJS
  // bundle that is the bundle's own file, beside which the .wasm files are copied.
  define: { 'import.meta.url': '__strato_import_meta_url' },
  banner: { js: "var __strato_import_meta_url = require('url').pathToFileURL(__filename).href;" },
};

/**
 * commander requires node:child_process at load for its stand-alone executable subcommands, which strato has none of;
 * child_process brings net, dgram and streams with it (3 ms of every `strato --version`). The plugin defers that require
 * to the first spawn, and fails the build if a new commander no longer has the line, so that the saving is not lost unseen.
 */
const lazyChildProcessInCommander = {
  name: 'lazy-child-process-in-commander',
  setup(build) {
    build.onLoad({ filter: /[\\/]commander[\\/]lib[\\/]command\.js$/ }, (args) => {
      const line = "const childProcess = require('node:child_process');";
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(line)) throw new Error(`${args.path} no longer has the line ${line}: update esbuild.mjs`);
      const lazy = "const childProcess = { spawn: (...a) => require('node:child_process').spawn(...a) };";
      return { contents: text.replace(line, lazy), loader: 'js' };
    });
  },
};

/** Marks the repository's own modules as free of side effects (none is imported only for its effects). */
const ownModulesArePure = {
  name: 'own-modules-are-pure',
  setup(build) {
    build.onResolve({ filter: /^\.\.?\// }, async (args) => {
      if (args.pluginData?.resolving) return undefined;
      const r = await build.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: { resolving: true } });
      if (r.errors.length || r.path.includes(`${path.sep}node_modules${path.sep}`)) return r;
      return { ...r, sideEffects: false };
    });
  },
};

const builds = entries.map((e) => ({
  ...common,
  entryPoints: [e.in],
  outfile: path.join(dist, `${e.out}.js`),
  plugins: e.pure ? [ownModulesArePure] : [],
}));
// Every chunk sits in dist/ itself, so __dirname-relative lookups (python/, the .wasm files, swagger-ui/) hold in all.
builds.push({
  ...common,
  format: 'esm',
  splitting: true,
  entryPoints: { cli: 'engine/src/cli/main.ts' },
  outdir: dist,
  outExtension: { '.js': '.mjs' },
  chunkNames: 'cli-[hash]',
  metafile: true,
  plugins: [lazyChildProcessInCommander],
  // Whitespace and syntax only (names are kept, for stack traces and error names): V8 reads a third less at each start.
  minifyWhitespace: true,
  minifySyntax: true,
  define: {},
  banner: {
    js: [
      "import { createRequire as __stratoRequire } from 'node:module';",
      "import { fileURLToPath as __stratoPath } from 'node:url';",
      'const require = __stratoRequire(import.meta.url);',
      'const __filename = __stratoPath(import.meta.url);',
      "const __dirname = __filename.slice(0, __filename.lastIndexOf('/'));",
    ].join(' '),
  },
});

/**
 * Writes an output only when its bytes changed, through a rename: tests rebuild while other tests run the CLI, and a
 * reader must never see a half-written chunk.
 */
function writeIfChanged(file, contents) {
  if (existsSync(file) && Buffer.compare(readFileSync(file), Buffer.from(contents)) === 0) return;
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, file);
}

for (const opts of builds) {
  if (watch) await (await esbuild.context(opts)).watch();
  else {
    const r = await esbuild.build({ ...opts, write: false });
    for (const o of r.outputFiles) {
      mkdirSync(path.dirname(o.path), { recursive: true });
      writeIfChanged(o.path, o.contents);
    }
    if (!r.metafile) continue;
    writeIfChanged(path.join(dist, 'cli-meta.json'), JSON.stringify(r.metafile));
    // Chunks of earlier builds have other hashes: drop them.
    const current = new Set(Object.keys(r.metafile.outputs).map((o) => path.basename(o)));
    for (const f of readdirSync(dist)) if (/^cli-\w+\.mjs(\.map)?$/.test(f) && !current.has(f)) rmSync(path.join(dist, f));
  }
}
writeIfChanged(
  path.join(dist, 'cli.js'),
  "#!/usr/bin/env node\n// The `strato` command: loads the ESM entry beside this file (its chunks load as commands need them).\nimport('./cli.mjs');\n",
);
if (existsSync(path.join(dist, 'cli.js'))) chmodSync(path.join(dist, 'cli.js'), 0o755);

// Files loaded from disk at run time, next to the bundles (copied only when they changed: see writeIfChanged).
const copyFile = (from, to) => {
  mkdirSync(path.dirname(to), { recursive: true });
  writeIfChanged(to, readFileSync(from));
};
/** dst becomes a copy of src (byte-code caches left out): changed files rewritten, files gone from src removed. */
function syncDir(src, dst) {
  const wanted = new Set();
  const walk = (rel) => {
    for (const e of readdirSync(path.join(src, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.name === '__pycache__' || e.name.endsWith('.pyc')) continue;
      if (e.isDirectory()) walk(r);
      else {
        wanted.add(r);
        copyFile(path.join(src, r), path.join(dst, r));
      }
    }
  };
  walk('');
  const prune = (rel) => {
    for (const e of readdirSync(path.join(dst, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) prune(r);
      else if (!wanted.has(r)) rmSync(path.join(dst, r));
    }
  };
  prune('');
}
copyFile(require.resolve('web-tree-sitter/tree-sitter.wasm'), path.join(dist, 'tree-sitter.wasm'));
copyFile(require.resolve('tree-sitter-python/tree-sitter-python.wasm'), path.join(dist, 'tree-sitter-python.wasm'));
syncDir('engine/python', path.join(dist, 'python'));
// The runtime every generated TypeScript client carries (engine/src/clientgen/runtime.ts), read as text.
copyFile('engine/src/clientgen/runtime.ts', path.join(dist, 'clientgen', 'runtime.ts'));
// Swagger UI for the dev server's /docs.
const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
for (const f of ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png']) {
  copyFile(path.join(swaggerDir, f), path.join(dist, 'swagger-ui', f));
}
// PGlite loads its WebAssembly and data bundle from beside its own module.
const pgliteDir = path.dirname(require.resolve('@electric-sql/pglite'));
for (const f of ['pglite.wasm', 'pglite.data']) {
  if (existsSync(path.join(pgliteDir, f))) copyFile(path.join(pgliteDir, f), path.join(dist, f));
}
if (!watch) console.log(`built dist/cli.js (+ cli.mjs and its chunks), ${entries.map((e) => `dist/${e.out}.js`).join(', ')}`);
