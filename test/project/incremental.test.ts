// The analysis of a document kept open and edited (its statements re-parsed where edited, unchanged statements
// replaying what they declared) equals a fresh analysis of the same text: random edits, broken code included, aimed
// at what the replay depends on (constants, imports, endpoint variables, rows moving).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { analyzeText, analyzeTree, createPythonParser, ModuleTree, type Edit, type Parser } from '../../engine/src/project';

const REPO = path.resolve(__dirname, '..', '..');
const EVERY_RULE = readFileSync(path.join(REPO, 'test', 'fixtures', 'lsp', 'every_rule.py'), 'utf8');

const WORKER = `"""A worker."""
import json
import numpy as np
import requests
from strato import CpuInstanceType, Endpoint, GpuGroup

MODEL = "small"
GPU = GpuGroup.ADA_24
api = Endpoint(name="api", cpu=CpuInstanceType.CPU3C_2_4, workers=(0, 3))


@api.post("/run")
async def run(data: dict) -> dict:
    """Runs."""
    x = np.array(data["values"])
    return {"sum": float(x.sum())}


@Endpoint(name="job", gpu=GPU, env={"MODEL": MODEL}, dependencies=["requests>=2.31"])
def job(payload: dict) -> dict:
    r = requests.get("https://example.com", timeout=10)
    return json.loads(r.text)


class Helper:
    def add(self, value: int) -> int:
        return np.sum(value)


@Endpoint(name="job", gpu=GpuGroup.ADA_24)
def job_again(payload: dict) -> dict:
    return payload
`;
import { pointAt, seededRandom } from '../helpers/random';

/** Edits that touch what unchanged statements' results depend on. */
const PIECES = [
  'x',
  '\n',
  '\n\n',
  '    ',
  '(',
  ')',
  '"',
  ':',
  '#',
  'GpuGroup.AMPERE_16',
  '"large"',
  'import torch\n',
  'from strato import GpuType\n',
  'api2 = Endpoint(name="api2")\n',
  'api',
  'np',
  '@api.get("/other")\ndef other():\n    return np.ones(1)\n\n',
  '\n\n@Endpoint(name="late", gpu=GPU)\ndef late(x):\n    """Late."""\n    return requests.get(x)\n',
];

describe('analysis of an edited document', () => {
  let parser: Parser;
  before(async () => {
    parser = await createPythonParser();
  });
  after(() => parser.delete());

  for (const [name, source] of [
    ['a worker with constants, routes and third-party imports', WORKER],
    ['the every-rule fixture', EVERY_RULE],
  ] as const) {
    it(`equals a fresh analysis after random edits: ${name}`, () => {
      const random = seededRandom(7 + source.length);
      const options = { localModules: new Set(['helpers']) };
      let text = source;
      const tree = ModuleTree.parse(parser, text, { editable: true })!;
      try {
        assert.deepEqual(analyzeTree('worker.py', tree, text, options), analyzeText(parser, 'worker.py', text, options));
        for (let step = 0; step < 150; step++) {
          const start = Math.floor(random() * (text.length + 1));
          // Half of the edits are undone at the next step, as typing and deleting a character does.
          const remove = random() < 0.3 ? Math.min(text.length - start, Math.floor(random() * 20)) : 0;
          const inserted = random() < 0.8 ? PIECES[Math.floor(random() * PIECES.length)] : '';
          const next = text.slice(0, start) + inserted + text.slice(start + remove);
          const edit: Edit = {
            startIndex: start,
            oldEndIndex: start + remove,
            newEndIndex: start + inserted.length,
            startPosition: pointAt(text, start),
            oldEndPosition: pointAt(text, start + remove),
            newEndPosition: pointAt(next, start + inserted.length),
          };
          tree.edit(edit);
          assert.equal(tree.reparse(parser, next), true);
          const edited = analyzeTree('worker.py', tree, next, options);
          assert.deepEqual(edited, analyzeText(parser, 'worker.py', next, options), `step ${step}: ${JSON.stringify(inserted)} at ${start}`);
          // Analysing again without an edit replays every statement: still the same.
          assert.deepEqual(analyzeTree('worker.py', tree, next, options), edited);
          text = random() < 0.5 ? next : text;
          if (text !== next) {
            tree.edit({
              startIndex: start,
              oldEndIndex: start + inserted.length,
              newEndIndex: start + remove,
              startPosition: edit.startPosition,
              oldEndPosition: edit.newEndPosition,
              newEndPosition: edit.oldEndPosition,
            });
            assert.equal(tree.reparse(parser, text), true);
          }
        }
      } finally {
        tree.delete();
      }
    });
  }
});
