// The build's dependency rules without pip: how requirements files are read and merged, what a base-image package
// pulled in takes with it when it is removed, and the artifact's size limit. (build.test.ts runs real builds.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkArtifactSize } from '../../engine/src/build/artifact';
import { mergeRequirements, readRequirementsFile, removeExcludedPackages } from '../../engine/src/build/dependencies';

let tmp: string;
before(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-dependencies-'));
});
after(() => rmSync(tmp, { recursive: true, force: true }));

test('what only a base-image package required goes; extras asked for along the way, and shared namespace folders, stay', () => {
  const target = mkdtempSync(path.join(tmp, 'deps-'));
  // Installed distributions as pip leaves them: dist-info with METADATA and RECORD, and their files.
  const dist = (name: string, requires: string[], files: string[]) => {
    const info = `${name}-1.0.dist-info`;
    mkdirSync(path.join(target, info), { recursive: true });
    writeFileSync(
      path.join(target, info, 'METADATA'),
      `Metadata-Version: 2.1\nName: ${name}\nVersion: 1.0\n${requires.map((r) => `Requires-Dist: ${r}\n`).join('')}`,
    );
    for (const f of files) {
      mkdirSync(path.dirname(path.join(target, f)), { recursive: true });
      writeFileSync(path.join(target, f), '');
    }
    writeFileSync(path.join(target, info, 'RECORD'), [...files, `${info}/METADATA`, `${info}/RECORD`].map((f) => `${f},,`).join('\n'));
  };
  dist('app', ['web[standard]>=1', 'torch'], ['app/__init__.py']);
  dist('web', ['fast', 'uvloop ; extra == "standard"', 'pytest ; extra == "test"'], ['web/__init__.py']);
  dist('torch', ['sympy', 'nsb', 'fast'], ['torch/__init__.py']);
  for (const name of ['fast', 'uvloop', 'pytest', 'sympy']) dist(name, [], [`${name}/__init__.py`]);
  dist('nsa', [], ['ns/a/__init__.py']);
  dist('nsb', [], ['ns/b/__init__.py']);
  dist('ns-user', ['nsa'], ['nsuser.py']);
  const removed = removeExcludedPackages(target, new Set(['torch']), ['app', 'ns-user']);
  assert.deepEqual(removed, ['nsb', 'pytest', 'sympy', 'torch']);
  for (const kept of ['app', 'web', 'fast', 'uvloop', 'ns/a']) assert.ok(existsSync(path.join(target, kept, '__init__.py')), kept);
  assert.ok(!existsSync(path.join(target, 'ns', 'b')), "nsb's files left");
  // A requirement by URL names no package: only the excluded ones themselves go then.
  dist('torch', ['sympy'], ['torch/__init__.py']);
  dist('sympy', [], ['sympy/__init__.py']);
  assert.deepEqual(removeExcludedPackages(target, new Set(['torch']), ['app', 'https://host/pkg.whl']), ['torch']);
});

test('the deployment size limit is 1500 MB and its error suggests --exclude', () => {
  assert.doesNotThrow(() => checkArtifactSize(1500 * 1024 * 1024));
  assert.throws(() => checkArtifactSize(1600 * 1024 * 1024), /Archive exceeds limit \(1600 MB \/ 1500 MB\).*--exclude/);
});

test('requirements merge keeps first-seen order, drops duplicates, comments and the base image packages', () => {
  const file = (requirements: string[]) => ({ requirements, options: [] });
  const m = mergeRequirements(file(['a==1', 'Torch', 'b']), ['b', 'c>=2', 'numpy==1.26', 'Triton'], ['C']);
  assert.deepEqual(m.install, ['a==1', 'b']);
  assert.deepEqual(m.excluded, ['torch', 'c', 'numpy', 'triton']);
  // A URL requirement has no name before its URL: `--exclude git` or `https` does not drop it.
  const urls = mergeRequirements(file(['git+https://github.com/org/repo.git']), ['https://host/pkg.whl'], ['git', 'https']);
  assert.deepEqual([urls.install, urls.excluded], [['git+https://github.com/org/repo.git', 'https://host/pkg.whl'], []]);
});

test('a requirements file is read as pip reads it: continuations, -r files, constraints, index options, -e and local paths', () => {
  const dir = mkdtempSync(path.join(tmp, 'reqs-'));
  mkdirSync(path.join(dir, 'reqs'));
  writeFileSync(
    path.join(dir, 'requirements.txt'),
    [
      '--index-url https://pypi.example/simple  # a mirror',
      '-f ./wheels',
      '-c constraints.txt',
      'torch \\',
      '    ==2.1',
      '-r reqs/base.txt',
      '-e ./mylib',
      './vendor/tool-1.0-py3-none-any.whl',
      'requests>=2',
    ].join('\n'),
  );
  writeFileSync(path.join(dir, 'reqs', 'base.txt'), '--pre\nfastapi\n-r ../requirements.txt\n');
  const r = readRequirementsFile(path.join(dir, 'requirements.txt'));
  assert.deepEqual(r.requirements, [
    'torch      ==2.1',
    'fastapi',
    path.join(dir, 'mylib'),
    path.join(dir, 'vendor', 'tool-1.0-py3-none-any.whl'),
    'requests>=2',
  ]);
  assert.deepEqual(r.options, [
    '--index-url https://pypi.example/simple',
    `-f ${path.join(dir, 'wheels')}`,
    `-c ${path.join(dir, 'constraints.txt')}`,
    '--pre',
  ]);
  writeFileSync(path.join(dir, 'requirements.txt'), 'a\n-r missing.txt\n');
  assert.throws(() => readRequirementsFile(path.join(dir, 'requirements.txt')), /-r .*missing\.txt names a file that is not there; fix the path/);
  writeFileSync(path.join(dir, 'requirements.txt'), 'a\n--target /elsewhere\n');
  assert.throws(() => readRequirementsFile(path.join(dir, 'requirements.txt')), /requirements\.txt line 2: the pip option --target is not taken/);
});
