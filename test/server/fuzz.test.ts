// Fuzzing through the protocol: thousands of random edits and mutations of worker files (half-typed code,
// syntax errors, binary junk, a huge paste, out-of-range positions), interleaved with every request the server
// answers. The server must never fail or stall, and incremental analysis must match a fresh one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Diagnostic } from 'vscode-languageserver/node';
import {
  analyzeText,
  combine,
  createPythonParser,
  isWorkerText,
  unreadTextWarning,
  type Diagnostic as EngineDiagnostic,
  type Parser,
} from '../../engine/src/project';
import { FIXTURES, TestClient, uriOf } from './lspClient';
import { seededRandom } from '../helpers/random';

const SEED = Number(process.env.FUZZ_SEED ?? 20240601);
const EDITS = Number(process.env.FUZZ_EDITS ?? 3000);
/** The run stops early past this, so that the suite stays bounded on a slow machine. */
const TIME_BUDGET_MS = Number(process.env.FUZZ_BUDGET_MS ?? 35_000);
const RESPONSE_LIMIT_MS = 1000;

const SNIPPETS = [
  '@Endpoint(',
  '@Endpoint(name="fz", ',
  'gpu=',
  'cpu=',
  'workers=(',
  'GpuGroup.',
  'GpuType.NVIDIA_',
  'CpuInstanceType.CPU3C_',
  '"',
  "'",
  '"""',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  ',',
  ':',
  '=',
  '\n',
  '    ',
  '\t',
  '#',
  '\\',
  ' ',
  'def f(x):\n    return x\n',
  'import torch\n',
  'from strato import Endpoint, GpuGroup\n',
  'api = Endpoint(name="api")\n',
  '@api.post("run")\n',
  '@api.pots(',
  'async def g(',
  'class C:\n    pass\n',
  'yield x\n',
  'name="embed"',
  'env={"A": 1}',
  'dependencies=["x y"]',
  '**kw',
  'lambda: 0',
  'f"{x}"',
  "b'\\x00'",
  '\r',
  '\r\n',
  '\u00e9',
  '\u{1F600}',
  '\ud800',
  '\uffff',
  '\u0000',
  'ADA_24',
  '/ping',
  'NAME = 3\n',
  '['.repeat(300),
  '('.repeat(120),
  '-'.repeat(200),
  '@Endpoint(name="same")\n'.repeat(40),
  'import numpy as np\n',
  'gpu=GpuGroup.ADA_24, cpu="cpu3c-2-4"',
  'workers=(3, 1)',
  '    return np.sum(x)\n',
];

describe('fuzz', () => {
  let c: TestClient;
  let parser: Parser;
  before(async () => {
    c = TestClient.inMemory();
    await c.initialize({ folders: [] });
    parser = await createPythonParser();
  });
  after(async () => {
    parser.delete();
    await c.stop();
  });

  it(`survives random edits and mutations (seed ${SEED}), answering every request within ${RESPONSE_LIMIT_MS} ms`, async () => {
    const random = seededRandom(SEED);
    const int = (n: number) => Math.floor(random() * n);
    const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
    const seeds = ['workspace/workers/gpu_infer.py', 'workspace/workers/cpu_tasks.py', 'workspace/api.py', 'every_rule.py'].map((f) =>
      readFileSync(path.join(FIXTURES, ...f.split('/')), 'utf8'),
    );
    // One large worker file (about 2,000 lines), so that incremental parsing is exercised at size.
    const large = Array.from({ length: 40 }, (_, i) => seeds[i % 3].replace(/name="([^"]+)"/g, `name="$1-${i}"`)).join('\n\n');
    const docs = ['fuzz_a.py', 'fuzz_b.py', 'fuzz_large.py'].map((name) => uriOf(path.join(FIXTURES, 'fuzz', name)));
    await c.open(docs[0], seeds[0]);
    await c.open(docs[1], seeds[3]);
    await c.open(docs[2], large);

    let slowest = 0;
    let requests = 0;
    const timed = async <T>(what: string, request: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      const result = await request();
      const took = performance.now() - started;
      slowest = Math.max(slowest, took);
      requests++;
      assert.ok(took < RESPONSE_LIMIT_MS, `${what} took ${Math.round(took)} ms (seed ${SEED})`);
      return result;
    };
    const junk = () => Array.from({ length: 1 + int(40) }, () => String.fromCharCode(int(0x10000))).join('');

    const started = performance.now();
    let edits = 0;
    let compared = 0;
    let hugeDone = false;
    let fixes = 0;
    for (; edits < EDITS && performance.now() - started < TIME_BUDGET_MS; edits++) {
      const uri = pick(docs);
      // Mutations wear a file down to noise: start one of them afresh now and then.
      if (edits % 200 === 199) await c.change(uri, [{ text: uri === docs[2] ? large : pick(seeds) }]);
      const text = c.text(uri);
      const at = int(text.length + 1);
      const op = random();
      if (op < 0.35) await c.replace(uri, at, at, pick(SNIPPETS));
      else if (op < 0.5) await c.replace(uri, at, Math.min(text.length, at + int(12)), '');
      else if (op < 0.6) await c.replace(uri, at, Math.min(text.length, at + int(400)), '');
      else if (op < 0.68) await c.replace(uri, at, at, junk());
      else if (op < 0.78) {
        const src = pick(seeds);
        const from = int(src.length);
        await c.replace(uri, at, Math.min(text.length, at + int(30)), src.slice(from, from + int(300)));
      } else if (op < 0.84) {
        // Several changes in one notification, each against the text left by the previous one.
        const pos = (off: number) => ({ line: text.slice(0, off).split('\n').length - 1, character: off - text.lastIndexOf('\n', off - 1) - 1 });
        const a = int(text.length + 1);
        await c.change(uri, [
          { range: { start: pos(a), end: pos(a) }, text: pick(SNIPPETS) },
          { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '#' },
        ]);
      } else if (op < 0.86) {
        // Positions past the end of the document are clamped, not trusted.
        await c.change(uri, [{ range: { start: { line: 1e6, character: 5 }, end: { line: 1e6 + 1, character: 0 } }, text: '\nx = 1\n' }]);
      } else if (op < 0.875) await c.change(uri, [{ text: random() < 0.5 ? pick(seeds) : junk() }]);
      else if (op < 0.88 && !hugeDone) {
        hugeDone = true;
        await c.replace(uri, at, at, `${'x = [1, 2, 3]  # filler\n'.repeat(110_000)}`); // ~2.6 MB: beyond analysis
        await timed('diagnostics of a huge document', () => c.diagnostics(uri));
        await timed('completion in a huge document', () => c.completion(uri, { line: 5, character: 3 }));
        await c.replace(uri, at, at + 24 * 110_000, '');
      } else {
        const line = int(text.split('\n').length);
        const lines = text.split('\n');
        await c.change(uri, [
          { range: { start: { line, character: 0 }, end: { line, character: 0 } }, text: `${lines.slice(line, line + int(8)).join('\n')}\n` },
        ]);
      }

      const now = c.text(uri);
      const offset = int(now.length + 1);
      const position = { line: now.slice(0, offset).split('\n').length - 1, character: offset - now.lastIndexOf('\n', offset - 1) - 1 };
      const r = random();
      if (r < 0.4) await timed('diagnostics', () => c.diagnostics(uri));
      else if (r < 0.55) await timed('hover', () => c.hover(uri, position));
      else if (r < 0.7) await timed('completion', () => c.completion(uri, position));
      else if (r < 0.87) {
        const actions = await timed('code actions', () =>
          c.codeActions(uri, { start: { line: 0, character: 0 }, end: { line: position.line + int(2000), character: 0 } }),
        );
        // Apply one now and then: fixes computed on broken code must still be valid edits.
        const action = actions.length && random() < 0.8 ? pick(actions) : undefined;
        if (action?.edit) {
          await c.apply(action.edit);
          fixes++;
        }
      } else if (r < 0.94) await timed('code lenses', () => c.codeLenses(uri));
      else await timed('document symbols', () => c.symbols(uri));

      if (edits % 150 === 149) {
        compared++;
        assert.deepEqual(
          summary(await timed('diagnostics', () => c.diagnostics(uri))),
          fresh(parser, path.basename(uri), c.text(uri)),
          `incremental and fresh analysis differ after ${edits + 1} edits (seed ${SEED})`,
        );
      }
    }
    assert.deepEqual(c.errors(), [], `seed ${SEED}`);
    assert.ok(edits >= Math.min(EDITS, 500), `only ${edits} edits ran in the time budget`);
    // Still well: a clean file analyses as it should.
    await c.change(docs[0], [{ text: seeds[0] }]);
    assert.deepEqual(await c.diagnostics(docs[0]), []);
    console.log(
      `fuzz: seed ${SEED}, ${edits} edits, ${requests} requests, ${fixes} quick fixes applied, ${compared} comparisons with a fresh analysis, slowest ` +
        `response ${Math.round(slowest)} ms`,
    );
  });
});

function summary(ds: Diagnostic[]): string[] {
  return ds.map((d) => `${d.code} ${JSON.stringify(d.range)} ${d.message}`).sort();
}

function fresh(parser: Parser, file: string, text: string): string[] {
  const asPublished = (ds: EngineDiagnostic[]) => summary(ds.map((d) => ({ ...d, severity: 1, source: 'strato' }) as unknown as Diagnostic));
  // A text that cannot be a worker file is not analysed; one that mentions Endpoint says so.
  if (!isWorkerText(text)) return asPublished([unreadTextWarning(file, text)].filter((d) => d !== undefined));
  const model = analyzeText(parser, file, text, { localModules: new Set() });
  return asPublished(combine('', [model]).diagnostics);
}
