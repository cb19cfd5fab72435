// `strato check` as CI runs it: a good project exits 0; a bad one (Python and YAML errors) exits 1 and lists
// every problem, as text and as --json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/cli';

const GOOD = path.resolve(__dirname, '../fixtures/dstack/good');

test('strato check passes on a good project', async () => {
  const r = await runCli(['check'], { cwd: GOOD });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /1 Python and 7 YAML files checked: 0 errors, 0 warnings/);
});

test('strato check fails on a bad project and reports Python and YAML problems, also as JSON', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'strato-check-'));
  try {
    cpSync(GOOD, root, { recursive: true });
    writeFileSync(path.join(root, 'worker.py'), 'from strato import Endpoint\n\n@Endpoint(name="hello", gpu="ADA_42")\ndef hello(job):\n    return {}\n');
    writeFileSync(path.join(root, 'infra/data.dstack.yml'), 'type: volume\nname: data\nbackend: strato\nregion: US-KS-2\nsize: 100GB\n');
    writeFileSync(
      path.join(root, '.dstack/server/config.yml'),
      'projects:\n  - name: main\n    backends:\n      - type: strato\n        creds:\n          type: api_key\n          api_key: sk-123\n',
    );
    const r = await runCli(['check'], { cwd: root });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /worker\.py:3:\d+: error: unknown GPU "ADA_42"/);
    assert.match(r.stdout, /\.dstack\.yml:22:3: error: the task mounts volumes in different regions \(US-KS-2, EU-RO-1\)/);
    assert.match(r.stdout, /\.dstack\/server\/config\.yml:7:20: warning: the API key is written in clear text/);
    const j = await runCli(['check', '--json'], { cwd: root });
    assert.equal(j.code, 1);
    const out = JSON.parse(j.stdout) as { errors: number; warnings: number; diagnostics: Array<{ code: string; file: string }> };
    assert.deepEqual(out.diagnostics.map((d) => `${d.file} ${d.code}`).sort(), [
      '.dstack.yml region-conflict',
      '.dstack/server/config.yml clear-text-key',
      'worker.py unknown-gpu',
    ]);
    assert.equal(out.errors, 2);
    assert.equal(out.warnings, 1);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
