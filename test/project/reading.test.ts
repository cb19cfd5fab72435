// How the analysis reads worker files: the forms a declaration takes (aliases, the module, an Endpoint object used as
// a decorator), functions, classes and their methods, type hints, string values, line continuations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeSource, HEADER } from '../helpers/analysis';

const queue = (args: string, body = '    return {}') => `${HEADER}\n@Endpoint(${args})\ndef fn(x: int = 1):\n${body}\n`;

test('a backslash line continuation inside a call is no argument: no false duplicate, positional or not-literal error', async () => {
  const src =
    `${HEADER}from strato import NetworkVolume\n\n@Endpoint(name="lf", \\\n          workers=(0, 2), \\\n          volume=NetworkVolume(name="m", \\\n              size=50), env={"K": "a" \\\n "b"})\n` +
    'def fn(x: int = 1):\n    return {}\n\napi = Endpoint(name="lb", \\\n    cpu="cpu3c-1-2")\n\n@api.post( \\\n    "/go")\ndef go(x: int = 1):\n    return {}\n';
  const m = await analyzeSource(src);
  assert.deepEqual(m.diagnostics, []);
  assert.deepEqual(
    m.endpoints.map((e) => [e.name, e.config.workersMax, e.config.env]),
    [
      ['lb', 1, {}],
      ['lf', 2, { K: 'ab' }],
    ],
  );
  assert.deepEqual(
    m.endpoints.find((e) => e.name === 'lb')!.routes.map((r) => [r.method, r.path]),
    [['POST', '/go']],
  );
});

test('Endpoint is recognised under any alias and through the module; other Endpoints are not', async () => {
  const a = await analyzeSource('from strato import Endpoint as E\n@E(name="a")\nasync def f():\n    pass\n');
  assert.deepEqual([a.endpoints.length, a.endpoints[0].functions[0].isAsync], [1, true]);
  const b = await analyzeSource(
    'import strato\n@strato.Endpoint(name="b", gpu=strato.GpuGroup.ADA_24)\nclass M:\n    def predict(self, x):\n        return x\n',
  );
  assert.deepEqual([b.endpoints.length, b.endpoints[0].functions[0].isClass, b.endpoints[0].config.gpu], [1, true, ['ADA_24']]);
  assert.deepEqual(
    b.endpoints[0].functions[0].methods?.map((m) => m.params.map((p) => p.name)),
    [['x']],
  );
  const c = await analyzeSource('from other import Endpoint\n@Endpoint(name="c")\ndef f():\n    pass\n');
  assert.equal(c.endpoints.length, 0);
});

test('a class endpoint lists the methods a job can call: properties are attributes, not methods', async () => {
  const m = await analyzeSource(
    `${HEADER}import functools\n\n@Endpoint(name="cls")\nclass Model:\n    @property\n    def size(self):\n        return 1\n\n    @size.setter\n    def size(self, v):\n        pass\n\n` +
      '    @functools.cached_property\n    def weights(self):\n        return []\n\n    @staticmethod\n    def version(tag: str):\n        return tag\n\n    def predict(self, text: str):\n        return text\n',
  );
  assert.deepEqual(
    m.endpoints[0].functions[0].methods?.map((x) => [x.name, x.params.map((p) => p.name)]),
    [
      ['version', ['tag']],
      ['predict', ['text']],
    ],
  );
});

test('an Endpoint object used as a bare decorator serves that function, queue-based, as the Python package has it', async () => {
  const m = await analyzeSource(
    `${HEADER}\nworker = Endpoint(cpu="cpu3c-1-2", workers=(0, 2))\n\n\n@worker\ndef g(x: int = 1):\n    return {"x": x}\n\n\n` +
      'named = Endpoint(name="shared-cfg", cpu="cpu3c-1-2")\n\n\n@named\nclass M:\n    def predict(self, x: int):\n        return x\n',
  );
  assert.deepEqual(m.diagnostics, []);
  assert.deepEqual(
    m.endpoints.map((e) => [e.name, e.kind, e.functions.map((f) => f.name), e.config.workersMax]),
    [
      ['g', 'QUEUE', ['g'], 2],
      ['shared-cfg', 'QUEUE', ['M'], 1],
    ],
  );
  // As in Python: one function per queue endpoint, and not beside routes.
  const twice = await analyzeSource(`${HEADER}\nw = Endpoint(name="w", cpu="cpu3c-1-2")\n\n\n@w\ndef a():\n    return 1\n\n\n@w\ndef b():\n    return 2\n`);
  assert.match(
    twice.diagnostics.map((d) => d.message).join('\n'),
    /endpoint "w" already serves a: a queue-based endpoint has one function or class; give b its own/,
  );
  const mixed = await analyzeSource(
    `${HEADER}\nw = Endpoint(name="w", cpu="cpu3c-1-2")\n\n\n@w\ndef a():\n    return 1\n\n\n@w.post("/b")\ndef b():\n    return 2\n`,
  );
  assert.match(
    mixed.diagnostics.map((d) => d.message).join('\n'),
    /endpoint "w" has routes and also serves a: a load-balanced endpoint cannot also decorate a function/,
  );
});

test('functions: parameters, defaults, annotations, docstring summary, generators', async () => {
  const m = await analyzeSource(
    `${HEADER}@Endpoint(name="g")\ndef gen(prompt: str, n: int = 3, *args, k=None, **kw):\n    """Stream tokens.\n\n    Longer text."""\n    for i in ` +
      `range(n):\n        yield i\n`,
  );
  const f = m.endpoints[0].functions[0];
  assert.equal(f.isGenerator, true);
  assert.equal(f.summary, 'Stream tokens.');
  assert.deepEqual(f.params, [
    { name: 'prompt', kind: 'positional', annotation: 'str', type: { kind: 'name', name: 'str' } },
    { name: 'n', kind: 'positional', annotation: 'int', type: { kind: 'name', name: 'int' }, default: '3' },
    { name: 'args', kind: 'var-positional' },
    { name: 'k', kind: 'keyword-only', default: 'None' },
    { name: 'kw', kind: 'var-keyword' },
  ]);
});

test('type hints are read as types: generics, unions, literals, forward references; the return type too', async () => {
  const m = await analyzeSource(
    `${HEADER}@Endpoint(name="t")\ndef t(a: typing.Dict[str, list["Item"]], b: int | None, c: Literal["x", -1, True], d: tuple[int, ...]) -> ` +
      'Iterator[str]:\n    yield ""\n',
  );
  const f = m.endpoints[0].functions[0];
  assert.deepEqual(
    f.params.map((p) => p.type),
    [
      {
        kind: 'generic',
        name: 'typing.Dict',
        args: [
          { kind: 'name', name: 'str' },
          { kind: 'generic', name: 'list', args: [{ kind: 'string', value: 'Item' }] },
        ],
      },
      {
        kind: 'union',
        options: [
          { kind: 'name', name: 'int' },
          { kind: 'value', value: null },
        ],
      },
      {
        kind: 'generic',
        name: 'Literal',
        args: [
          { kind: 'string', value: 'x' },
          { kind: 'value', value: -1 },
          { kind: 'value', value: true },
        ],
      },
      { kind: 'generic', name: 'tuple', args: [{ kind: 'name', name: 'int' }, { kind: 'ellipsis' }] },
    ],
  );
  assert.equal(f.returnAnnotation, 'Iterator[str]');
  assert.deepEqual(f.returns, { kind: 'generic', name: 'Iterator', args: [{ kind: 'name', name: 'str' }] });
});

test('TypedDicts and dataclasses at module level are declarations, also in a file that does not use strato', async () => {
  const m = await analyzeSource(
    'from typing import TypedDict, NotRequired\nfrom dataclasses import dataclass\n\nclass A(TypedDict, total=False):\n    """Doc."""\n    x: int\n' +
      '    y: NotRequired[str]\n\nclass B(A):\n    z: "A"\n\n@dataclasses.dataclass(frozen=True)\nclass C:\n    n: int = 2\n    k: ClassVar[int] = 1\n\n' +
      'class Plain:\n    q: int\n',
    'models.py',
  );
  assert.equal(m.usesStrato, false);
  assert.deepEqual(
    m.types.map((t) => ({
      name: t.name,
      kind: t.kind,
      bases: t.bases,
      doc: t.docstring,
      fields: t.fields.map((f) => [f.name, f.annotation, f.optional, f.default]),
    })),
    [
      {
        name: 'A',
        kind: 'TypedDict',
        bases: [],
        doc: 'Doc.',
        fields: [
          ['x', 'int', true, undefined],
          ['y', 'NotRequired[str]', true, undefined],
        ],
      },
      { name: 'B', kind: 'TypedDict', bases: ['A'], doc: undefined, fields: [['z', '"A"', false, undefined]] },
      { name: 'C', kind: 'dataclass', bases: [], doc: undefined, fields: [['n', 'int', false, '2']] },
    ],
  );
});

test('string arguments are the values Python reads: escapes decoded, raw strings kept', async () => {
  const m = await analyzeSource(queue('name="a", env={"SEP": "\\t", "PATH_HINT": r"C:\\new", "E": "caf\\u00e9", "Q": \'it\\\'s\'}'));
  assert.deepEqual(m.diagnostics, []);
  assert.deepEqual(m.endpoints[0].config.env, { SEP: '\t', PATH_HINT: 'C:\\new', E: 'café', Q: "it's" });
});
