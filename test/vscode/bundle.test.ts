// Activation stays cheap: the extension activates in any Python workspace (onLanguage:python, not on every folder
// holding a .py file), and the bundle it loads then holds the views and commands only. The language client and the
// build (parser, tar) sit in their own bundles, loaded when needed (client/src/extension.ts, heavy.ts). Checked on
// the bundles users run; bench/activation.ts times them.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ensureBuilt, REPO } from '../helpers/cli';

const bundle = (name: string) => readFileSync(path.join(REPO, 'dist', name), 'utf8');
/** Each heavy part by a mark of its bundled code (esbuild names every bundled package file in a comment). */
const PARTS: Record<string, RegExp> = {
  'the language client': /node_modules\/vscode-languageclient\//,
  'the tree-sitter parser': /node_modules\/web-tree-sitter\//,
  tar: /node_modules\/tar\//,
  GraphQL: /node_modules\/graphql\//,
  PGlite: /node_modules\/@electric-sql\/pglite\//,
  'the platform': /strato platform: cannot write worker log/,
};

before(() => ensureBuilt());

test('dist/extension.js, loaded at activation, holds none of the heavy parts', () => {
  const text = bundle('extension.js');
  assert.deepEqual(
    Object.keys(PARTS).filter((p) => PARTS[p].test(text)),
    [],
  );
});

test('the language client and the build are in the bundles loaded later, and the platform in neither', () => {
  assert.match(bundle('extension-lsp.js'), PARTS['the language client']);
  const heavy = bundle('extension-heavy.js');
  assert.match(heavy, PARTS['the tree-sitter parser']);
  assert.match(heavy, PARTS.tar);
  for (const p of ['GraphQL', 'PGlite', 'the platform']) assert.doesNotMatch(`${heavy}\n${bundle('extension-lsp.js')}`, PARTS[p], p);
});

test('the extension activates on Python files, not on every workspace holding one', () => {
  const pkg = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { activationEvents: string[] };
  assert.ok(pkg.activationEvents.includes('onLanguage:python'));
  assert.ok(!pkg.activationEvents.some((e) => /^workspaceContains:.*\*\.py$/.test(e)), pkg.activationEvents.join(', '));
});
