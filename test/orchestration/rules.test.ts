// Every orchestration YAML rule on real files: the valid set (every key) is clean, each rule fires with its
// code, message and the `yaml` package's position, and the region rules point at the volume file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { analyzeDstack, loadOrchestration } from '../../engine/src/orchestration';

const GOOD = path.resolve(__dirname, '../fixtures/dstack/good');

function diagnose(text: string, file = 'a.dstack.yml') {
  return analyzeDstack(file, text).sink.items;
}
const codes = (d: Array<{ code: string }>) => d.map((x) => x.code);

function project(files: Record<string, string>): { root: string; done: () => void } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'strato-dstack-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  return { root, done: () => rmSync(root, { recursive: true, force: true }) };
}

test('the valid set, which uses every key, has no diagnostics', () => {
  const r = loadOrchestration(GOOD);
  assert.deepEqual(r.diagnostics, []);
  assert.deepEqual(r.files.map((f) => `${f.file}:${f.kind}`).sort(), [
    '.dstack.yml:task',
    '.dstack/server/config.yml:server',
    'infra/aws.dstack.yml:volume',
    'infra/cheap.dstack.yml:task',
    'infra/data.dstack.yml:volume',
    'infra/models.dstack.yml:volume',
    'infra/other.dstack.yml:task',
  ]);
  const task = r.files.find((f) => f.file === '.dstack.yml');
  assert.deepEqual(
    task?.mounts.map((m) => `${m.name}:${m.path}`),
    ['data:/data', 'models:/models'],
  );
});

test('an unknown key gets a did-you-mean and a rename fix at the key position', () => {
  const d = diagnose('type: task\ncomands: [ls]\n');
  assert.deepEqual(codes(d), ['unknown-key']);
  assert.match(d[0].message, /'comands' is not a key of a task: did you mean 'commands'\?/);
  assert.deepEqual(d[0].range, { start: { line: 1, character: 0 }, end: { line: 1, character: 7 } });
  assert.equal(d[0].fix?.kind === 'replace-value' && d[0].fix.replacement, 'commands');
  assert.deepEqual(codes(diagnose('type: task\nresources:\n  gpus: 24GB\n')), ['unknown-key']);
});

test('wrong types are reported on the value', () => {
  const d = diagnose('type: task\ncommands: python x.py\nresources: big\nmax_price: cheap\n');
  assert.deepEqual(codes(d), ['invalid-type', 'invalid-type', 'invalid-type']);
  assert.match(d[0].message, /commands must be a list/);
  assert.equal(d[0].range.start.line, 1);
  assert.deepEqual(codes(diagnose('- a\n- b\n')), ['invalid-type']);
});

test('spot policy, type, python version and ports are checked', () => {
  const d = diagnose('type: task\nspot_policy: spto\n');
  assert.deepEqual(codes(d), ['invalid-value']);
  assert.match(d[0].message, /did you mean "spot"\?/);
  assert.deepEqual(codes(diagnose('type: tsak\n')), ['invalid-value']);
  assert.deepEqual(codes(diagnose('name: x\n')), ['missing-key']);
  assert.deepEqual(codes(diagnose('type: task\npython: 3.10\n')), ['invalid-value']);
  assert.deepEqual(codes(diagnose('type: task\nports: ["80:x"]\n')), ['invalid-value']);
});

test('malformed ranges and sizes', () => {
  assert.deepEqual(codes(diagnose('type: task\nresources:\n  cpu: 8..2\n')), ['invalid-range']);
  assert.match(diagnose('type: task\nresources:\n  cpu: 8..2\n')[0].message, /did you mean 2\.\.8\?/);
  assert.deepEqual(codes(diagnose('type: task\nresources:\n  cpu: two\n')), ['invalid-range']);
  assert.deepEqual(codes(diagnose('type: task\nresources:\n  memory: 16 gigs\n')), ['invalid-size']);
  assert.deepEqual(codes(diagnose('type: volume\nname: v\nbackend: strato\nregion: EU-RO-1\nsize: 100\n')), ['invalid-size']);
  assert.deepEqual(codes(diagnose('type: task\nresources:\n  gpu: H100:80GB..40GB\n')), ['invalid-range']);
});

test('GPU names come from the catalog, with a did-you-mean', () => {
  const d = diagnose('type: task\nresources:\n  gpu: H1000:1\n');
  assert.deepEqual(codes(d), ['unknown-gpu']);
  assert.match(d[0].message, /unknown GPU "H1000": did you mean "H100"\?/);
  assert.deepEqual(d[0].range.start, { line: 2, character: 7 });
  const mem = diagnose('type: task\nresources:\n  gpu: H100:24GB\n');
  assert.deepEqual(codes(mem), ['invalid-value']);
  assert.match(mem[0].message, /no GPU of that name has 24GB of memory in the catalog \(it has 80GB, 94GB\)/);
  for (const ok of ['H100:80GB..', 'A100:40GB..80GB', 'H200', 'RTX4090:2', 'A100:80GB', 'ADA_24', 'NVIDIA L40S', 'L4,L40S:1..2', '24GB'])
    assert.deepEqual(codes(diagnose(`type: task\nresources:\n  gpu: ${ok}\n`)), [], ok);
});

test('a volume names a known backend, and a strato volume a datacenter of the catalog', () => {
  assert.deepEqual(codes(diagnose('type: volume\nname: v\nbackend: strat\nregion: EU-RO-1\n')), ['invalid-value']);
  const d = diagnose('type: volume\nname: v\nbackend: strato\nregion: EU-RO-9\n');
  assert.deepEqual(codes(d), ['unknown-region']);
  assert.match(d[0].message, /did you mean "EU-RO-1"\?/);
  assert.deepEqual(codes(diagnose('type: volume\nname: v\nbackend: aws\nregion: us-east-1\n')), []);
  assert.deepEqual(codes(diagnose('type: volume\nbackend: aws\nregion: us-east-1\n')), ['missing-key']);
});

test('a strato backend key in clear text is a warning with a fix to an environment reference', () => {
  const text = 'projects:\n  - name: main\n    backends:\n      - type: strato\n        creds:\n          type: api_key\n          api_key: sk-live-123\n';
  const d = diagnose(text, '.dstack/server/config.yml');
  assert.deepEqual(codes(d), ['clear-text-key']);
  assert.equal(d[0].severity, 'warning');
  assert.deepEqual(d[0].range, { start: { line: 6, character: 19 }, end: { line: 6, character: 30 } });
  assert.equal(d[0].fix?.kind === 'replace-value' && d[0].fix.replacement, '"${{ env.STRATO_API_KEY }}"');
  // Other backend types are the tool's business; a wrong creds type on strato is not.
  assert.deepEqual(codes(diagnose(text.replace('strato', 'aws').replace('api_key\n', 'whatever\n'), '.dstack/server/config.yml')), []);
  assert.deepEqual(codes(diagnose(text.replace('type: api_key', 'type: apikey').replace('sk-live-123', '${{ env.K }}'), '.dstack/server/config.yml')), [
    'invalid-value',
  ]);
});

test('a YAML syntax error is reported at the parser position', () => {
  const d = diagnose('type: task\ncommands: [a, b\n');
  assert.equal(d[0].code, 'syntax-error');
  assert.match(d[0].message, /^YAML syntax error/);
  // Errors the user makes most get their own sentence, never the parser library's advice.
  const [dup] = diagnose('type: task\nname: a\nname: b\n');
  assert.equal(dup.message, 'the key name is set twice in this mapping (the tool refuses the file): keep one.');
  assert.deepEqual(dup.range.start, { line: 2, character: 0 });
  const [docs] = diagnose('type: task\nname: a\n---\ntype: task\nname: b\n');
  assert.match(docs.message, /^the file holds several YAML documents \(separated by ---\): .* put each in a file of its own\.$/);
  assert.doesNotMatch(docs.message, /parseAllDocuments/);
  assert.match(diagnose('type: task\nenv:\n\tA: 1\n')[0].message, /^a tab indents this line/);
});

test('ports: a number or local:remote, 1 to 65535; an unquoted pair YAML 1.1 reads in base 60 must be quoted', () => {
  const ports = (list: string) => diagnose(`type: task\ncommands: [python a.py]\nports: [${list}]\n`);
  assert.deepEqual(codes(ports('8000, "8080:30", 8080:80, 22')), []);
  const [sexagesimal] = ports('8080:30');
  assert.equal(
    sexagesimal.message,
    'unquoted, 8080:30 is read by the tool as the number 484830 (YAML 1.1 reads it in base 60): write it in quotes, "8080:30".',
  );
  assert.equal(ports('99999')[0].message, 'port 99999 is out of range: a port is 1 to 65535.');
  assert.equal(ports('"0:80"')[0].message, 'port 0 is out of range: a port is 1 to 65535.');
});

test('two volume files of one name are an error at each, and each declaration is held to the region rule', () => {
  const p = project({
    'vol.dstack.yml': 'type: volume\nname: data\nbackend: strato\nregion: EU-RO-1\n',
    'vol2.dstack.yml': 'type: volume\nname: data\nbackend: strato\nregion: US-KS-2\n',
    'train.dstack.yml': 'type: task\ncommands: [python t.py]\nvolumes: [data:/data]\nregions: [US-KS-2]\n',
  });
  try {
    const d = loadOrchestration(p.root).diagnostics;
    const dup = d.filter((x) => x.code === 'duplicate-volume');
    assert.deepEqual(dup.map((x) => x.file).sort(), ['vol.dstack.yml', 'vol2.dstack.yml']);
    assert.match(dup[0].message, /^volume "data" is declared in 2 files \(vol\.dstack\.yml, vol2\.dstack\.yml\): /);
    assert.equal(dup[0].related?.length, 1);
    assert.ok(
      d.some((x) => x.code === 'region-conflict' && x.file === 'train.dstack.yml'),
      'the EU-RO-1 one still conflicts with regions: [US-KS-2]',
    );
  } finally {
    p.done();
  }
});

test('a mounted volume with no volume file is an error with a did-you-mean', () => {
  const p = project({
    'a.dstack.yml': 'type: task\nvolumes:\n  - dta:/data\n',
    'v.dstack.yml': 'type: volume\nname: data\nbackend: strato\nregion: EU-RO-1\n',
  });
  try {
    const d = loadOrchestration(p.root).diagnostics;
    assert.deepEqual(codes(d), ['unknown-volume']);
    assert.match(d[0].message, /no volume named "dta" in the workspace: did you mean "data"\?/);
    assert.deepEqual(d[0].range.start, { line: 2, character: 4 });
  } finally {
    p.done();
  }
});

test('regions compare as regions, not as spellings: eu-ro-1 and EU-RO-1 are one region', () => {
  const p = project({
    'a.dstack.yml': 'type: task\nvolumes:\n  - data:/data\n  - more:/more\nregions: [eu-ro-1]\n',
    'v/data.dstack.yml': 'type: volume\nname: data\nbackend: strato\nregion: EU-RO-1\n',
    'v/more.dstack.yml': 'type: volume\nname: more\nbackend: strato\nregion: eu-ro-1\n',
  });
  try {
    assert.deepEqual(codes(loadOrchestration(p.root).diagnostics), []);
  } finally {
    p.done();
  }
});

test("regions that exclude the volume's region, and volumes in two regions, are errors pointing at the volume files", () => {
  const p = project({
    'a.dstack.yml': 'type: task\nvolumes:\n  - data:/data\n  - more:/more\nregions: [US-KS-2]\n',
    'v/data.dstack.yml': 'type: volume\nname: data\nbackend: strato\nregion: EU-RO-1\n',
    'v/more.dstack.yml': 'type: volume\nname: more\nbackend: strato\nregion: US-KS-2\n',
  });
  try {
    const d = loadOrchestration(p.root).diagnostics;
    assert.deepEqual(codes(d), ['region-conflict', 'region-conflict']);
    assert.match(d[0].message, /volume "data" is in region EU-RO-1.*regions excludes it/);
    assert.deepEqual(d[0].related?.[0], {
      file: 'v/data.dstack.yml',
      range: { start: { line: 3, character: 8 }, end: { line: 3, character: 15 } },
      message: 'volume "data" is in EU-RO-1',
    });
    assert.match(d[1].message, /different regions \(EU-RO-1, US-KS-2\)/);
    assert.deepEqual(
      d[1].related?.map((r) => r.file),
      ['v/data.dstack.yml', 'v/more.dstack.yml'],
    );
  } finally {
    p.done();
  }
});

test('aliases are read as the values they name, and problems inside them are reported at the alias', () => {
  assert.deepEqual(codes(diagnose('type: task\nname: &n trainer\ncommands: [echo hi]\nworking_dir: *n\n')), []);
  // The root-level reads go through aliases too: the type, and the name the model keeps.
  const r = analyzeDstack('a.dstack.yml', 'type: &t volume\nname: &n data\nbackend: strato\nregion: EU-RO-1\nvolume_id: *n\n');
  assert.deepEqual(codes(r.sink.items), []);
  assert.equal(r.model.kind, 'volume');
  const d = diagnose('type: task\nname: &n trainer\nresources:\n  cpu: 2\nnodes: *n\n');
  assert.deepEqual(codes(d), ['invalid-type']);
  assert.match(d[0].message, /nodes must be an integer/);
  assert.deepEqual(d[0].range, { start: { line: 4, character: 7 }, end: { line: 4, character: 9 } });
  // The parser accepts an alias with no anchor; the tool does not.
  const missing = diagnose('type: task\nworking_dir: *nope\n');
  assert.deepEqual(codes(missing), ['syntax-error']);
  assert.match(missing[0].message, /alias \*nope has no anchor/);
  // An alias cycle ends.
  assert.deepEqual(codes(diagnose('type: task\nretry: &x\n  <<: *x\nresources: *x\n')), []);
});

test('merge keys are accepted, and the merged keys are checked where the merge is written', () => {
  const ok = 'type: task\nenv: &common\n  gpu: H100:1\n  cpu: 2\nresources:\n  <<: *common\n  gpu: H100:2\n';
  assert.deepEqual(codes(diagnose(ok)), []);
  assert.deepEqual(codes(diagnose('type: task\nenv: &a {gpu: H100}\nresources:\n  <<: [*a, {memory: 16GB}]\n')), []);
  const bad = diagnose('type: task\nenv: &common\n  gpu: H1000:1\n  gpus: 2\nresources:\n  <<: *common\n');
  assert.deepEqual(codes(bad).sort(), ['unknown-gpu', 'unknown-key']);
  for (const x of bad) assert.deepEqual(x.range, { start: { line: 5, character: 6 }, end: { line: 5, character: 13 } }, x.message);
  // Renaming the alias would not rename a key written elsewhere: no quick fix there.
  assert.equal(bad.find((x) => x.code === 'unknown-key')?.fix, undefined);
  // A key written next to the merge wins over the merged one, and a merged required key counts.
  assert.deepEqual(codes(diagnose('type: task\nenv: &c {cpu: two}\nresources:\n  <<: *c\n  cpu: 2\n')), []);
  assert.deepEqual(codes(diagnose('type: volume\n<<: {name: data, backend: aws, region: us-east-1}\n')), []);
  assert.deepEqual(codes(diagnose('type: task\nresources:\n  <<: 3\n')), ['invalid-type']);
});

test('a source merged again at every level is read once: 24 levels of <<: [*prev, *prev] are checked at once, a bad key in the first still found', () => {
  const levels = ['type: task', 'b0: &b0 {gpu: H1000}'];
  for (let i = 1; i < 24; i++) levels.push(`b${i}: &b${i}`, `  <<: [*b${i - 1}, *b${i - 1}]`);
  levels.push('resources:', '  <<: *b23', '');
  // Each level doubled the work: 20 levels took 51 s, and the editor re-read the file at each keystroke.
  const d = diagnose(levels.join('\n'));
  assert.deepEqual(
    codes(d).filter((c) => c === 'unknown-gpu'),
    ['unknown-gpu'],
  );
});

test('a key set twice is found in one pass over a mapping, with the whole key as its range; 1 and "1" are two keys', () => {
  const env = Array.from({ length: 50_000 }, (_, i) => `  K${i}: v${i}`);
  env.splice(30_000, 0, '  K7: again');
  const [dup, ...rest] = diagnose(['type: task', 'env:', ...env, ''].join('\n'));
  assert.deepEqual(rest, []);
  assert.equal(dup.message, 'the key K7 is set twice in this mapping (the tool refuses the file): keep one.');
  assert.deepEqual(dup.range, { start: { line: 30_002, character: 2 }, end: { line: 30_002, character: 4 } });
  assert.deepEqual(codes(diagnose('type: task\nenv:\n  1: a\n  "1": b\n')), []);
});

test('the cross-file rules read volume names and regions through aliases and merge keys', () => {
  const p = project({
    'a.dstack.yml': 'type: task\nname: &vol data\nvolumes:\n  - name: *vol\n    path: /data\nregions: [US-KS-2]\n',
    'v.dstack.yml': 'type: volume\n<<: {name: data, backend: strato}\nregion: &r EU-RO-1\nvolume_id: *r\n',
  });
  try {
    const d = loadOrchestration(p.root).diagnostics;
    assert.deepEqual(codes(d), ['region-conflict']);
    assert.match(d[0].message, /volume "data" is in region EU-RO-1/);
    assert.deepEqual(d[0].related?.[0].range.start, { line: 2, character: 11 });
  } finally {
    p.done();
  }
});

test('a did-you-mean for a key is a typo of it, not another key that shares a word (idle_duration is not max_duration)', () => {
  const d = diagnose('type: task\nidle_duration: 5m\n');
  assert.doesNotMatch(d[0].message, /did you mean/);
  assert.equal(d[0].fix, undefined);
  assert.match(diagnose('type: task\nmax_durration: 5m\n')[0].message, /did you mean 'max_duration'\?/);
  assert.match(diagnose('type: task\nresources:\n  shmsize: 8GB\n')[0].message, /did you mean 'shm_size'\?/);
  assert.match(diagnose('type: task\nworkingdir: /w\n')[0].message, /did you mean 'working_dir'\?/);
});

test('quick fixes never break the file: none on a block scalar, on an alias or merged api_key, on a template key, nor one that sets a key twice', () => {
  const fixOf = (text: string, code: string, file = 'a.dstack.yml') => diagnose(text, file).find((d) => d.code === code);
  const block = fixOf('type: task\nspot_policy: |\n  spto\nname: x\n', 'invalid-value');
  assert.ok(block, 'still reported');
  assert.equal(block.fix, undefined, 'its range runs past the line break: replacing it joined two lines');
  assert.equal(fixOf('type: task\nspot_policy: spto\n', 'invalid-value')?.fix?.kind, 'replace-value', 'a plain value keeps its fix');
  const server = (creds: string) => `projects:\n  - name: main\n    backends:\n      - type: strato\n${creds}`;
  const SERVER = '.dstack/server/config.yml';
  const plain = fixOf(server('        creds:\n          type: api_key\n          api_key: sk-123\n'), 'clear-text-key', SERVER);
  assert.equal(plain?.fix?.kind, 'replace-value');
  const merged = server('        creds:\n          <<: *base\n').replace('projects:', 'base: &base {type: api_key, api_key: sk-1}\nprojects:');
  const viaMerge = diagnose(merged, SERVER).filter((d) => d.code === 'clear-text-key');
  assert.ok(viaMerge.length > 0 && viaMerge.every((d) => d.fix === undefined), 'the merge line is no api_key to replace');
  const blockKey = fixOf(server('        creds:\n          type: api_key\n          api_key: |\n            sk-123\n'), 'clear-text-key', SERVER);
  assert.equal(blockKey?.fix, undefined);
  const twice = fixOf('type: task\nname: x\nnmae: y\n', 'unknown-key');
  assert.equal(twice?.message, "'nmae' is not a key of a task: a typo of 'name', which is set already? Remove one of them.");
  assert.equal(twice?.fix, undefined);
  const template = fixOf('type: task\nbase: &b {cpu: 2}\nresources:\n  <<: *b\n', 'unknown-key');
  assert.ok(template && template.fix === undefined && !/did you mean/.test(template.message), template?.message);
});

test("gpu's mapping form is checked as its string form is, and env must be a mapping of single values or a list", () => {
  const task = (rest: string) => `type: task\n${rest}`;
  assert.deepEqual(codes(diagnose(task('resources:\n  gpu:\n    name: FOO\n'))), ['unknown-gpu']);
  assert.deepEqual(codes(diagnose(task('resources:\n  gpu:\n    name: [H100, BAR]\n'))), ['unknown-gpu']);
  assert.deepEqual(codes(diagnose(task('resources:\n  gpu:\n    name: 5\n'))), ['invalid-type']);
  assert.deepEqual(codes(diagnose(task('resources:\n  gpu:\n    name: H100,A100\n    count: 2\n'))), []);
  for (const env of ['env: 5', 'env: abc', 'env:\n  A: {nested: 1}', 'env:\n  - [A]'])
    assert.deepEqual(codes(diagnose(task(`${env}\n`))), ['invalid-type'], env);
  for (const env of ['env:\n  A: "1"\n  B: 2\n  C: true', 'env:\n  - A=1\n  - B']) assert.deepEqual(codes(diagnose(task(`${env}\n`))), [], env);
});

test('a gpu spec with an empty part, or two counts or two memories, is refused saying which', () => {
  const gpu = (spec: string) => diagnose(`type: task\nresources:\n  gpu: ${spec}\n`);
  for (const spec of ['H100,', 'H100::2', ':H100']) assert.match(gpu(spec)[0]?.message ?? '', /has an empty part \(a stray ':' or ','\)/, spec);
  assert.match(gpu('H100:1:2')[0]?.message ?? '', /gives two counts \(1 and 2\): keep one/);
  assert.match(gpu('24GB:48GB')[0]?.message ?? '', /gives two memories \(24GB and 48GB\): keep one/);
  assert.deepEqual(codes(gpu('H100:80GB:2')), []);
});

test('an empty type is said so, on the key, not as a type named null', () => {
  const [d] = diagnose('type:\nname: x\n');
  assert.equal(d.message, "the configuration's 'type' is empty: write type: task or type: volume.");
  assert.deepEqual(d.range, { start: { line: 0, character: 0 }, end: { line: 0, character: 4 } });
});

test('a volume file the ignore rules leave out declares nothing, open in the editor or not, as strato check reads it; a new unsaved one does', () => {
  const p = project({
    '.gitignore': 'ignored/\n',
    'ignored/v.dstack.yml': 'type: volume\nname: data\nbackend: strato\nregion: EU-RO-1\nsize: 10GB\n',
    '.dstack.yml': 'type: task\ncommands: [ls]\nvolumes: [data:/data]\n',
  });
  try {
    const unknown = (d: Array<{ code: string }>) => d.filter((x) => x.code === 'unknown-volume').length;
    assert.equal(unknown(loadOrchestration(p.root).diagnostics), 1);
    const open = new Map([['ignored/v.dstack.yml', 'type: volume\nname: data\nbackend: strato\nregion: EU-RO-1\nsize: 10GB\n']]);
    assert.equal(unknown(loadOrchestration(p.root, open).diagnostics), 1, 'opening it in the editor changes nothing');
    const unsaved = new Map([['new.dstack.yml', 'type: volume\nname: data\nbackend: strato\nregion: EU-RO-1\nsize: 10GB\n']]);
    assert.equal(unknown(loadOrchestration(p.root, unsaved).diagnostics), 0, 'a file being written counts');
  } finally {
    p.done();
  }
});
