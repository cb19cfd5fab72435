// Parsing by top-level statement (engine ModuleTree): valid code is cut exactly where a whole-file parse puts its
// statements, random edits (broken code included) re-parsed incrementally give the trees a fresh parse gives, and a
// broken statement leaves the statements after it alone.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { analyzeText, createPythonParser, ModuleTree, nextStatementStart, type Edit, type Parser, type SyntaxNode } from '../../engine/src/project';
import { HEADER } from '../helpers/analysis';
import { pointAt, seededRandom } from '../helpers/random';

const REPO = path.resolve(__dirname, '..', '..');

function pythonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? pythonFiles(p) : e.name.endsWith('.py') ? [p] : [];
  });
}

/** Real Python: the strato package and the test fixtures. */
const CORPUS = [...pythonFiles(path.join(REPO, 'engine', 'python', 'strato')), ...pythonFiles(path.join(REPO, 'test', 'fixtures'))];

function starts(text: string): number[] {
  const out = [0];
  while (out[out.length - 1] < text.length) out.push(nextStatementStart(text, out[out.length - 1]));
  return out.slice(0, -1);
}

const describeNode = (n: SyntaxNode) => `${n.startIndex}-${n.endIndex} ${JSON.stringify(n.startPosition)} ${n.toString()}`;

describe('parsing by top-level statement', () => {
  let parser: Parser;
  before(async () => {
    parser = await createPythonParser();
  });
  after(() => parser.delete());

  it('starts a statement at column 0 outside brackets, strings and continuations, keeping decorators and clauses', () => {
    const text = [
      '"""Doc."""', // 0
      'import os',
      '# a comment in column 0 stays with the statement before it',
      '@dec(', // 3
      'x=1)',
      '# between decorators',
      '@other',
      'def f():',
      '    pass',
      'if os:', // 9
      '    pass',
      'elif 1:',
      '    pass',
      'else:',
      '    pass',
      'try:', // 15
      '    pass',
      'except* E:',
      '    pass',
      'finally:',
      '    pass',
      'elsewhere = [', // 21
      '1,',
      ']',
      'S = """', // 24
      'not a statement',
      '"""',
      'T = 1 + \\', // 27
      '2',
      "U = 'unterminated", // 29
      'V = 2',
      'W = f(', // 31: never closed
      '@dec',
      'def h():',
      '    pass',
      '',
    ].join('\n');
    const lineOf = (offset: number) => text.slice(0, offset).split('\n').length - 1;
    assert.deepEqual(starts(text).map(lineOf), [0, 1, 3, 9, 15, 21, 24, 27, 29, 30, 31, 32]);
    assert.deepEqual(starts(''), []);
    assert.deepEqual(starts('x = 1\r\ny = 2\r\n'), [0, 7]);
  });

  it('cuts valid code exactly between the statements of a whole-file parse', () => {
    assert.ok(CORPUS.length > 5);
    for (const file of CORPUS) {
      const text = readFileSync(file, 'utf8');
      const whole = parser.parse(text)!;
      const tree = ModuleTree.parse(parser, text, { editable: true })!;
      try {
        if (whole.rootNode.hasError) continue;
        const expected = whole.rootNode.namedChildren.map((n) => describeNode(n!));
        assert.deepEqual(tree.statements().map(describeNode), expected, path.relative(REPO, file));
        assert.equal(tree.hasError, false);
      } finally {
        whole.delete();
        tree.delete();
      }
    }
  });

  it('re-parses random edits (broken code included) into the trees a fresh parse gives', () => {
    const random = seededRandom(20261123);
    const pieces = [
      'x',
      ' ',
      '\n',
      '    ',
      '(',
      ')',
      '[',
      ']',
      '"',
      "'",
      '"""',
      ':',
      '#',
      '\\',
      '@',
      'else:',
      'def g(',
      '\n\n@Endpoint(name="e")\ndef e():\n    pass\n',
    ];
    for (const file of CORPUS.slice(0, 6)) {
      let text = readFileSync(file, 'utf8');
      const tree = ModuleTree.parse(parser, text, { editable: true })!;
      try {
        for (let step = 0; step < 60; step++) {
          // One to three edits before each re-parse, as a didChange with several changes brings them.
          for (let k = 1 + Math.floor(random() * 3); k > 0; k--) {
            const start = Math.floor(random() * (text.length + 1));
            const oldEnd = random() < 0.4 ? Math.min(text.length, start + Math.floor(random() * 40)) : start;
            const inserted = random() < 0.7 ? pieces[Math.floor(random() * pieces.length)] : '';
            const next = text.slice(0, start) + inserted + text.slice(oldEnd);
            const edit: Edit = {
              startIndex: start,
              oldEndIndex: oldEnd,
              newEndIndex: start + inserted.length,
              startPosition: pointAt(text, start),
              oldEndPosition: pointAt(text, oldEnd),
              newEndPosition: pointAt(next, start + inserted.length),
            };
            tree.edit(edit);
            text = next;
          }
          assert.equal(tree.reparse(parser, text), true);
          const fresh = ModuleTree.parse(parser, text, { editable: true })!;
          // A file that is not edited is parsed whole first, by statement when that finds a syntax error.
          const once = ModuleTree.parse(parser, text)!;
          try {
            assert.deepEqual(once.statements().map(describeNode), fresh.statements().map(describeNode));
            const where = `${path.relative(REPO, file)}, step ${step}`;
            assert.deepEqual(tree.statements().map(describeNode), fresh.statements().map(describeNode), where);
            assert.deepEqual(
              tree.roots().map((r) => `${r.startIndex}-${r.endIndex}`),
              fresh.roots().map((r) => `${r.startIndex}-${r.endIndex}`),
              where,
            );
            assert.equal(tree.hasError, fresh.hasError, where);
          } finally {
            fresh.delete();
            once.delete();
          }
        }
      } finally {
        tree.delete();
      }
    }
  });

  it('gives back the statements an opened string ran over when the quote is taken back', () => {
    const original = CORPUS.map((f) => readFileSync(f, 'utf8')).find((t) => t.split('\n').length > 60 && t.includes('"""'))!;
    // Inside the closing quotes of the first docstring (it then runs to the next one), and a line in the middle.
    const close = original.indexOf('"""', original.indexOf('"""') + 3) + 1;
    const middle = original.indexOf('\n', original.length >> 1) + 1;
    const tree = ModuleTree.parse(parser, original, { editable: true })!;
    try {
      let text = original;
      for (const [from, to, inserted] of [
        [close, close, 'x'],
        [close, close + 1, ''],
        [middle, middle, '"""'],
        [middle, middle + 3, ''],
      ] as const) {
        const next = text.slice(0, from) + inserted + text.slice(to);
        tree.edit({
          startIndex: from,
          oldEndIndex: to,
          newEndIndex: from + inserted.length,
          startPosition: pointAt(text, from),
          oldEndPosition: pointAt(text, to),
          newEndPosition: pointAt(next, from + inserted.length),
        });
        text = next;
        assert.equal(tree.reparse(parser, text), true);
        const fresh = ModuleTree.parse(parser, text, { editable: true })!;
        try {
          assert.deepEqual(tree.statements().map(describeNode), fresh.statements().map(describeNode), JSON.stringify(inserted));
        } finally {
          fresh.delete();
        }
      }
      assert.equal(text, original);
    } finally {
      tree.delete();
    }
  });

  it('keeps a broken statement from swallowing the endpoints after it', () => {
    const text = `${HEADER}\n\ndef broken(:\n    return [\n\n\n@Endpoint(name="after", gpu=GpuGroup.ADA_24)\ndef after_it(x: int) -> int:\n    return x\n`;
    const model = analyzeText(parser, 'worker.py', text);
    assert.deepEqual(
      model.endpoints.map((e) => e.name),
      ['after'],
    );
    const errors = model.diagnostics.filter((d) => d.code === 'syntax-error');
    assert.ok(errors.length > 0);
    const decorator = text.split('\n').findIndex((l) => l.startsWith('@Endpoint'));
    for (const d of errors) {
      const { line, character } = d.range.end;
      assert.ok(line < decorator || (line === decorator && character === 0), `${d.message} ends at ${line}:${character}`);
    }
  });

  it('answers the statement around an offset', () => {
    const text = 'import os\n\n\n@dec\ndef f():\n    return 1\n\nx = 2\n';
    const tree = ModuleTree.parse(parser, text)!;
    try {
      assert.equal(tree.statementAt(text.indexOf('return'))?.type, 'decorated_definition');
      assert.equal(tree.statementAt(text.indexOf('x = 2'))?.type, 'expression_statement');
      assert.equal(tree.statementAt(0)?.type, 'import_statement');
    } finally {
      tree.delete();
    }
  });
});
