// The type mapping of the typed clients, from Python source through the analysis: each hint's TypeScript type and
// JSON schema, TypedDicts and dataclasses (inheritance, optional keys, names taken), generators, class endpoints,
// and hints with no JSON form (unknown, a comment, a warning with file:line). Plus the joining of split stream chunks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import { analyzeFiles } from '../helpers/analysis';
import { defaultValue, jsonSchema } from '../../engine/src/clientgen/openapi';
import { queueSignature, routeSignature } from '../../engine/src/clientgen/signatures';
import { Names, TypeMapper, type JsonType } from '../../engine/src/clientgen/types';
import { tsType } from '../../engine/src/clientgen/typescript';
import { ChunkJoiner } from '../../engine/src/clientgen/runtime';
import { normaliseChunks } from '../../engine/src/platform/jobs/streamChunks';
import type { ProjectModel } from '../../engine/src/project';
import type { ParamInfo } from '../../engine/src/project/model';

const HEAD = 'from strato import Endpoint\nimport typing\nfrom typing import *\n\n';

/** The parameters' types (name -> TypeScript) and the mapper's warnings, for a function `f` with these parameters. */
async function mapParams(params: string, extra: Record<string, string> = {}) {
  const model = await analyzeFiles({ 'w.py': `${HEAD}${extra['w.py'] ?? ''}\n@Endpoint(name="f")\ndef f(${params}):\n    pass\n`, ...extra });
  return mapFunction(model);
}

function mapFunction(model: ProjectModel, reserved: string[] = []) {
  const mapper = new TypeMapper(model, new Names(reserved));
  const ep = model.endpoints[0];
  const sig = queueSignature(ep, ep.functions[0], mapper);
  const types: Record<string, string> = {};
  if (sig.input.kind === 'object') for (const f of sig.input.fields) types[`${f.name}${f.optional ? '?' : ''}`] = tsType(f.type);
  return { types, sig, mapper };
}

test('builtins, containers, Optional, unions and Literal map to their TypeScript types', async () => {
  const { types, mapper } = await mapParams(
    'a: str, b: int, c: float, d: bool, e: None, f: list[int], g: typing.List[str], h: dict[str, float], i: Dict, j: tuple[int, str], ' +
      'k: tuple[int, ...], l: Optional[str], m: int | None, n: Union[int, str], o: Literal["x", 1, True, None], p: Sequence[list[bool]], ' +
      'q: set[str], r: Any, s: "int", t: Annotated[int, "meta"], u: int | float, v: list[int | str], w=3, x="s", y=None, z: tuple[()] = ()',
  );
  assert.deepEqual(types, {
    a: 'string',
    b: 'number',
    c: 'number',
    d: 'boolean',
    e: 'null',
    f: 'number[]',
    g: 'string[]',
    h: 'Record<string, number>',
    i: 'Record<string, unknown>',
    j: '[number, string]',
    k: 'number[]',
    l: 'string | null',
    m: 'number | null',
    n: 'number | string',
    o: "'x' | 1 | true | null",
    p: 'boolean[][]',
    q: 'string[]',
    r: 'unknown',
    s: 'number',
    t: 'number',
    u: 'number',
    v: 'Array<number | string>',
    'w?': 'number',
    'x?': 'string',
    'y?': 'unknown',
    'z?': '[]',
  });
  assert.deepEqual(mapper.warnings, [], 'every one of these has a JSON form');
});

test('a hint with no JSON form is unknown with the Python type in a comment, and one warning with file:line', async () => {
  const { types, mapper } = await mapParams('img: np.ndarray, when: Optional[datetime.datetime] = None, fn: Callable[[int], str] = None, ok: int = 1');
  assert.deepEqual(types, {
    img: 'unknown /* np.ndarray */',
    'when?': 'unknown /* datetime.datetime */',
    'fn?': 'unknown /* Callable[[int], str] */',
    'ok?': 'number',
  });
  assert.deepEqual(
    mapper.warnings.map((w) => `${w.file}:${w.line + 1}: ${w.message.split(':')[0]}`),
    ['w.py:7: parameter img of f()', 'w.py:7: parameter when of f()', 'w.py:7: parameter fn of f()'],
  );
  assert.match(mapper.warnings[0].message, /the Python type np\.ndarray has no JSON form the client knows, so it is typed unknown; use str, int/);
  assert.deepEqual(jsonSchema({ kind: 'unknown', python: 'np.ndarray' }), { description: 'Python type np.ndarray' });
});

test('TypedDicts and dataclasses become named shapes: optional keys, inheritance, forward references, ClassVar left out', async () => {
  const models =
    'from dataclasses import dataclass, field\nfrom typing import ClassVar, NotRequired, Required, TypedDict\n\n' +
    'class Base(TypedDict):\n    id: int\n\nclass Item(Base, total=False):\n    """An item."""\n    name: Required[str]\n    tags: list[str]\n    parent: "Item"\n\n' +
    '@dataclass\nclass Size:\n    w: int\n    h: int = 1\n    unit: ClassVar[str] = "px"\n\n@dataclass(frozen=True)\nclass Box(Size):\n    items: list[Item] = field(default_factory=list)\n';
  const model = await analyzeFiles({
    'models.py': models,
    'w.py': `${HEAD}from models import Item, Box\n\n@Endpoint(name="f")\ndef f(item: Item, box: Optional[Box] = None) -> Box:\n    pass\n`,
  });
  const { types, sig, mapper } = mapFunction(model);
  assert.deepEqual(types, { item: 'Item', 'box?': 'Box | null' });
  assert.equal(tsType(sig.output), 'Box');
  const shapes = Object.fromEntries(mapper.shapes.map((s) => [s.name, s.fields.map((f) => `${f.name}${f.optional ? '?' : ''}: ${tsType(f.type)}`)]));
  assert.deepEqual(shapes, {
    Item: ['id: number', 'name: string', 'tags?: string[]', 'parent?: Item'],
    Box: ['w: number', 'h: number', 'items: Item[]'],
  });
  assert.equal(mapper.shapes[0].doc, 'An item.');
  assert.deepEqual(mapper.shapes[1].python, { name: 'Box', kind: 'dataclass', file: 'models.py' });
  assert.deepEqual(jsonSchema({ kind: 'union', options: [{ kind: 'ref', name: 'Box' }, { kind: 'null' }] }), {
    anyOf: [{ $ref: '#/components/schemas/Box' }, { type: 'object', nullable: true, enum: [null] }],
  });
});

test('a name declared in several modules is the one the file imports; a name the runtime already takes is renamed', async () => {
  const td = (field: string) => `from typing import TypedDict\nclass Point(TypedDict):\n    ${field}: int\n`;
  const model = await analyzeFiles({
    'a.py': td('a'),
    'pkg/b.py': td('b'),
    'pkg/w.py': `${HEAD}from .b import Point\n\n@Endpoint(name="f")\ndef f(p: Point, q: Job) -> None:\n    pass\n`,
    'jobs.py': 'from typing import TypedDict\nclass Job(TypedDict):\n    n: int\n',
  });
  const { types, mapper } = mapFunction(model, ['Job', 'JobType']);
  assert.deepEqual(types, { p: 'Point', q: 'Job2' }, '"Job" and "JobType" are taken by the runtime: the TypedDict is renamed');
  assert.deepEqual(
    mapper.shapes.map((s) => `${s.name}=${s.python.file}:${s.fields.map((f) => f.name)}`),
    ['Point=pkg/b.py:b', 'Job2=jobs.py:n'],
  );
});

test('a TypedDict named like a global the module uses (Record) is renamed, and the module still type-checks its own Record', async () => {
  const { typescriptClient } = await import('../../engine/src/clientgen/typescript');
  const model = await analyzeFiles({
    'w.py': `${HEAD}class Record(TypedDict):\n    n: int\n\n@Endpoint(name="f")\ndef f(r: Record, m: dict[str, int]) -> Record:\n    pass\n`,
  });
  const env = {
    app: 'a',
    environment: 'production',
    buildId: null,
    endpoints: [{ name: 'f', type: 'QUEUE' as const, id: 'f1', url: 'http://h/v2/f1', routes: [], executionTimeoutMs: null }],
    volumes: [],
  };
  const { text } = await typescriptClient(model, env);
  assert.match(text, /export interface RecordType \{\n {2}n: number;\n\}/);
  assert.match(text, /r: RecordType;\n {2}m: Record<string, number>;/);
});

test('a generator streams what it yields and outputs their list; a class endpoint takes "method" to pick its method', async () => {
  const gen = await analyzeFiles({
    'w.py': `${HEAD}@Endpoint(name="g")\nasync def g(n: int) -> AsyncIterator[dict[str, int]]:\n    yield {"n": n}\n`,
  });
  const { sig } = mapFunction(gen);
  assert.equal(sig.streams, true);
  assert.equal(tsType(sig.chunk), 'Record<string, number>');
  assert.equal(tsType(sig.output), 'Array<Record<string, number>>');

  const cls = await analyzeFiles({
    'w.py': `${HEAD}@Endpoint(name="c")\nclass C:\n    def add(self, a: int, b: int = 1) -> int:\n        return a\n    def name(self) -> str:\n        return ""\n    def _hidden(self): pass\n`,
  });
  const c = mapFunction(cls).sig;
  assert.equal(tsType(c.input), "{ method: 'add'; a: number; b?: number } | { method: 'name' }");
  assert.equal(tsType(c.output), 'number | string');
  const one = await analyzeFiles({ 'w.py': `${HEAD}@Endpoint(name="c")\nclass C:\n    def run(self, x: str) -> str:\n        return x\n` });
  assert.equal(tsType(mapFunction(one).sig.input), "{ method?: 'run'; x: string }", 'with one method, "method" may be left out');
});

test('parameter docs come from the Args section (Google style) or :param lines (Sphinx); **kwargs allows more keys', async () => {
  const model = await analyzeFiles({
    'w.py':
      `${HEAD}@Endpoint(name="f")\ndef f(a: int, b: str = "x", **extra: float):\n    """Do it.\n\n    Args:\n        a (int): the first\n            one, on two lines.\n` +
      `        b: the second.\n\n    Returns:\n        nothing.\n    """\n\n@Endpoint(name="g")\ndef g(c: int):\n    """Sphinx.\n\n    :param c: the third.\n    """\n`,
  });
  const { sig } = mapFunction(model);
  const input = sig.input as Extract<JsonType, { kind: 'object' }>;
  assert.deepEqual(
    input.fields.map((f) => [f.name, f.doc, f.default]),
    [
      ['a', 'the first one, on two lines.', undefined],
      ['b', 'the second.', '"x"'],
    ],
  );
  assert.equal(tsType(input), '{ a: number; b?: string; [key: string]: unknown }');
  assert.deepEqual(jsonSchema(input).additionalProperties, { type: 'number' });
  const g = new TypeMapper(model, new Names());
  const gi = queueSignature(model.endpoints[1], model.endpoints[1].functions[0], g).input as Extract<JsonType, { kind: 'object' }>;
  assert.equal(gi.fields[0].doc, 'the third.');
});

test('JSON schemas: literals as enums, nullable unions, tuples, records', () => {
  const lit = (value: string | number | boolean | null): JsonType => ({ kind: 'literal', value });
  assert.deepEqual(jsonSchema({ kind: 'union', options: [lit('a'), lit('b'), lit(null)] }), { type: 'string', enum: ['a', 'b', null], nullable: true });
  assert.deepEqual(jsonSchema({ kind: 'union', options: [{ kind: 'string' }, { kind: 'integer' }] }), { anyOf: [{ type: 'string' }, { type: 'integer' }] });
  assert.deepEqual(jsonSchema({ kind: 'tuple', items: [{ kind: 'integer' }, { kind: 'string' }] }), {
    type: 'array',
    items: { anyOf: [{ type: 'integer' }, { type: 'string' }] },
    minItems: 2,
    maxItems: 2,
  });
  assert.deepEqual(jsonSchema({ kind: 'record', values: { kind: 'boolean' } }), { type: 'object', additionalProperties: { type: 'boolean' } });
});

test('a streamed value the platform split over several chunks is joined back, string or JSON', () => {
  for (const value of ['x'.repeat(5000), { text: 'y'.repeat(5000), n: [1, 2] }]) {
    const chunks = normaliseChunks([{ output: 'before' }, { output: value }, { output: 'after' }], 0, 2000).map((c) => JSON.parse(c));
    assert.ok(chunks.length > 4, `split into ${chunks.length} chunks`);
    const joiner = new ChunkJoiner();
    const values = chunks.map((c) => joiner.add(c)).filter((v) => v !== undefined);
    assert.deepEqual(
      values.map((v) => v!.value),
      ['before', value, 'after'],
    );
  }
});

test('a nullable union is a schema OpenAPI 3.0 validators accept: nullable beside a type, else null as one more anyOf member', async () => {
  const { sig } = await mapParams(
    'a: Union[int, str, None], b: Optional[Box], c: Union[Box, Size, None], d: None, e: Literal["x", None], f: Optional[str], g: Literal["x", 1, None]',
    { 'm.py': 'from typing import TypedDict\n\nclass Box(TypedDict):\n    w: int\n\nclass Size(TypedDict):\n    h: int\n' },
  );
  const fields = (sig.input as Extract<JsonType, { kind: 'object' }>).fields;
  const shapes = {
    Box: { type: 'object', required: ['w'], properties: { w: { type: 'integer' } } },
    Size: { type: 'object', required: ['h'], properties: { h: { type: 'integer' } } },
  };
  // Ajv reads `nullable` as OpenAPI 3.0 does, and refuses it where there is no type.
  const ajv = new Ajv({ strict: false });
  const accepts = (name: string, value: unknown) => {
    const schema = jsonSchema(fields.find((f) => f.name === name)!.type);
    return ajv.validate({ ...schema, components: { schemas: shapes } }, value);
  };
  const cases: Array<[string, unknown[], unknown[]]> = [
    ['a', [1, 'x', null], [true, 1.5]],
    ['b', [{ w: 1 }, null], [3, {}]],
    ['c', [{ w: 1 }, { h: 2 }, null], ['x']],
    ['d', [null], [{}, 'x', 0]],
    ['e', ['x', null], ['y']],
    ['f', ['x', null], [1]],
    ['g', ['x', 1, null], [2, 'y']],
  ];
  for (const [name, good, bad] of cases) {
    for (const v of good) assert.equal(accepts(name, v), true, `${name} accepts ${JSON.stringify(v)}: ${JSON.stringify(ajv.errors)}`);
    for (const v of bad) assert.equal(accepts(name, v), false, `${name} refuses ${JSON.stringify(v)}`);
  }
  assert.deepEqual(jsonSchema(fields[0].type), { anyOf: [{ type: 'integer' }, { type: 'string' }, { type: 'object', nullable: true, enum: [null] }] });
});

test('a string default is the value Python reads: escapes decoded, a raw string kept, what is not one literal left out', () => {
  assert.equal(defaultValue('"a\\\\b"'), 'a\\b');
  assert.equal(defaultValue("'tab\\there'"), 'tab\there');
  assert.equal(defaultValue('r"C:\\new"'), 'C:\\new');
  assert.equal(defaultValue('"\\u00e9\\x41\\101\\q"'), '\u00e9AA\\q');
  assert.equal(defaultValue('"""say "hi\\""""'), 'say "hi"');
  assert.equal(defaultValue('"x" "y"'), undefined);
  assert.equal(defaultValue('f"{x}"'), undefined);
  assert.equal(defaultValue('b"x"'), undefined);
});

test('Literal strings are the values Python reads, in TypeScript and in the schema', async () => {
  const { types, sig } = await mapParams('a: Literal["a\\\\b", "tab\\there"]');
  assert.equal(types.a, "'a\\\\b' | 'tab\\there'");
  assert.deepEqual((jsonSchema(sig.input).properties as Record<string, { enum: unknown[] }>).a.enum, ['a\\b', 'tab\there']);
});

/** Marks the parameters before `/`, as engine/src/project/syntax.ts paramsOf is to record them (`positionalOnly`). */
function markPositionalOnly(model: ProjectModel, names: string[]): void {
  for (const p of model.endpoints.flatMap((e) => e.functions.flatMap((f) => f.params)))
    if (names.includes(p.name)) (p as ParamInfo & { positionalOnly?: boolean }).positionalOnly = true;
}

test('positional-only parameters are not offered: one without a default leaves the function untyped, with a warning', async () => {
  const source = (params: string) => `${HEAD}@Endpoint(name="f")\ndef f(${params}) -> int:\n    return 1\n`;
  const required = await analyzeFiles({ 'w.py': source('a: int, /, b: int') });
  markPositionalOnly(required, ['a']);
  const r = mapFunction(required);
  assert.equal(tsType(r.sig.input), '{ [key: string]: unknown }');
  assert.equal(tsType(r.sig.output), 'number', 'the result is still typed');
  assert.deepEqual(
    r.mapper.warnings.map((w) => `${w.file}:${w.line + 1}: ${w.message}`),
    [
      'w.py:6: f(): parameter a is positional-only (before "/") and a call passes its input by name, so every call fails: its input is untyped (unknown); ' +
        'remove the "/" to type it.',
    ],
  );
  const optional = await analyzeFiles({ 'w.py': source('a: int = 1, /, b: int = 2') });
  markPositionalOnly(optional, ['a']);
  const o = mapFunction(optional);
  assert.deepEqual(o.types, { 'b?': 'number' });
  assert.match(o.mapper.warnings[0].message, /parameter a is positional-only \(before "\/"\) .* the client leaves it out/);
});

test('*args, which a call by name never fills, gets no field and a warning saying to take a list', async () => {
  const model = await analyzeFiles({ 'w.py': `${HEAD}@Endpoint(name="f")\ndef f(a: int, *rest: int, b: int = 2) -> int:\n    return 1\n` });
  const r = mapFunction(model);
  assert.deepEqual(r.types, { a: 'number', 'b?': 'number' });
  assert.deepEqual(
    r.mapper.warnings.map((w) => `${w.file}:${w.line + 1}: ${w.message}`),
    [
      'w.py:6: f(): *rest always receives nothing, since a call passes its input by name: the client has no field for it; take a list instead (rest: list[...]) to pass several values.',
    ],
  );
});

test('the analysis records positional-only parameters', async () => {
  const model = await analyzeFiles({ 'w.py': `${HEAD}@Endpoint(name="f")\ndef f(a: int, /, b: int) -> int:\n    return 1\n` });
  assert.deepEqual(mapFunction(model).types, {});
});

/** The parameters' and result's types of the endpoint `name` (or of its route `route`), and the mapper (warnings, shapes). */
function signatureOf(model: ProjectModel, name: string, mapper = new TypeMapper(model, new Names()), route?: string) {
  const ep = model.endpoints.find((e) => e.name === name)!;
  const fn = route ? ep.routes.find((r) => r.function.name === route)!.function : undefined;
  const sig = fn ? routeSignature(ep, fn, mapper) : queueSignature(ep, ep.functions[0], mapper);
  const types: Record<string, string> = {};
  if (sig.input.kind === 'object') for (const f of sig.input.fields) types[`${f.name}${f.optional ? '?' : ''}`] = tsType(f.type);
  return { types, output: tsType(sig.output), mapper };
}

const fieldsOf = (mapper: TypeMapper) =>
  Object.fromEntries(mapper.shapes.map((s) => [s.name, s.fields.map((f) => `${f.name}${f.optional ? '?' : ''}: ${tsType(f.type)}`)]));

test("an imported name is the declaration its import names: an alias is its module's class, never another module's of that name", async () => {
  const model = await analyzeFiles({
    'other/__init__.py': 'from .models import Point\n',
    'other/models.py': 'from typing import TypedDict\n\nclass Point(TypedDict):\n    lat: float\n    lon: float\n',
    'models.py': 'from typing import TypedDict\n\nclass Pair(TypedDict):\n    a: int\n    b: int\n',
    'g.py':
      `${HEAD}from other.models import Point as GeoPoint\nimport other.models as om\nimport other.models\nfrom other import Point as Re\n\n` +
      '@Endpoint(name="geo")\ndef geo_alias(p: GeoPoint, q: om.Point, r: other.models.Point, s: Re) -> list[GeoPoint]:\n    pass\n',
    'd.py': `${HEAD}from other.models import Point as Pair\n\n@Endpoint(name="d")\ndef wrongtype(p: Pair) -> Pair:\n    pass\n`,
    'e.py': `${HEAD}from datetime import datetime as Pair\n\n@Endpoint(name="e")\ndef elsewhere(p: Pair, q: "Pair") -> None:\n    pass\n`,
    'f.py': `${HEAD}from models import Pair\n\n@Endpoint(name="f")\ndef own(p: Pair) -> None:\n    pass\n`,
  });
  const geo = signatureOf(model, 'geo');
  assert.deepEqual(geo.types, { p: 'Point', q: 'Point', r: 'Point', s: 'Point' });
  assert.equal(geo.output, 'Point[]');
  assert.deepEqual(geo.mapper.warnings, []);
  assert.deepEqual(fieldsOf(geo.mapper), { Point: ['lat: number', 'lon: number'] });

  const d = signatureOf(model, 'd');
  assert.deepEqual([d.types, d.output], [{ p: 'Point' }, 'Point'], 'Pair here is other.models.Point, not the TypedDict Pair of models.py');
  assert.deepEqual(fieldsOf(d.mapper), { Point: ['lat: number', 'lon: number'] });
  assert.deepEqual(d.mapper.shapes[0].python, { name: 'Point', kind: 'TypedDict', file: 'other/models.py' });

  const e = signatureOf(model, 'e');
  assert.deepEqual(e.types, { p: 'unknown /* Pair */', q: 'unknown /* "Pair" */' }, "a class from outside the project is not the project's Pair");
  assert.equal(e.mapper.warnings.length, 2);
  assert.deepEqual(fieldsOf(signatureOf(model, 'f').mapper), { Pair: ['a: number', 'b: number'] });
});

test('pydantic models are named shapes: defaults optional in what a route takes only, Field(...) read, aliases, nesting, inheritance', async () => {
  const models =
    'from datetime import datetime\nfrom typing import Literal, Optional\nfrom pydantic import BaseModel, ConfigDict, Field\n\n' +
    'class Tag(BaseModel):\n    name: str\n    weight: float = 1.0\n\n' +
    'class Item(BaseModel):\n    """An item."""\n    model_config = ConfigDict(extra="forbid")\n    name: str\n    price: float\n    tags: list[str] = []\n' +
    '    note: Optional[str] = None\n    code: str | None\n    sku: str = Field(..., alias="SKU")\n    qty: int = Field(default=1, ge=0)\n' +
    '    labels: list[Tag] = Field(default_factory=list)\n    _cache: dict = {}\n\n' +
    'class Sale(Item):\n    discount: float\n\n' +
    'class Fixed(BaseModel):\n    x: int\n    parent: Optional["Fixed"]\n    kind: Literal["Item"] = "Item"\n    at: datetime = None\n';
  const model = await analyzeFiles({
    'models.py': models,
    'w.py':
      `${HEAD}import models as m\nfrom models import Item, Fixed\n\napi = Endpoint(name="api", cpu="cpu3c-1-2")\n\n@api.post("/f")\n` +
      'def f(item: Item, items: list[Item], fixed: Fixed, sale: Optional[m.Sale] = None) -> Item:\n    pass\n\n' +
      '@api.get("/g")\ndef g() -> dict[str, m.Sale]:\n    pass\n\n@Endpoint(name="q")\ndef q(item: Item) -> Fixed:\n    pass\n',
  });
  const mapper = new TypeMapper(model, new Names());
  const f = signatureOf(model, 'api', mapper, 'f');
  assert.deepEqual(f.types, { item: 'ItemInput', items: 'ItemInput[]', fixed: 'FixedInput', 'sale?': 'SaleInput | null' });
  assert.equal(f.output, 'Item');
  assert.equal(signatureOf(model, 'api', mapper, 'g').output, 'Record<string, Sale>');
  const q = signatureOf(model, 'q', mapper);
  assert.deepEqual(q.types, { item: 'Item' }, 'a queue-based function receives the JSON as sent: every field');
  assert.deepEqual(
    mapper.warnings.map((w) => `${w.file}:${w.line + 1}: ${w.message.split(':')[0]}`),
    ['models.py:29: field at of Fixed'],
    'once, though Fixed is declared for inputs too',
  );
  const item = ['name: string', 'price: number', 'tags: string[]', 'note: string | null', 'code: string | null', 'SKU: string', 'qty: number', 'labels: Tag[]'];
  const input = [
    'name: string',
    'price: number',
    'tags?: string[]',
    'note?: string | null',
    'code: string | null',
    'SKU: string',
    'qty?: number',
    'labels?: TagInput[]',
  ];
  assert.deepEqual(fieldsOf(mapper), {
    ItemInput: input,
    TagInput: ['name: string', 'weight?: number'],
    FixedInput: ['x: number', 'parent: FixedInput | null', "kind?: 'Item'", 'at?: unknown /* datetime */'],
    SaleInput: [...input, 'discount: number'],
    Item: item,
    Tag: ['name: string', 'weight: number'],
    Sale: [...item, 'discount: number'],
    Fixed: ['x: number', 'parent: Fixed | null', "kind: 'Item'", 'at: unknown /* datetime */'],
  });
  const shape = (name: string) => mapper.shapes.find((s) => s.name === name)!;
  assert.deepEqual(shape('ItemInput').python, { name: 'Item', kind: 'BaseModel', file: 'models.py' });
  assert.equal(shape('Item').doc, 'An item.');
  assert.deepEqual(
    shape('ItemInput').fields.map((f) => f.default),
    [undefined, undefined, '[]', 'None', undefined, undefined, '1', 'Field(default_factory=list)'],
  );
  const schema = jsonSchema({ kind: 'object', fields: shape('ItemInput').fields });
  assert.deepEqual(schema.required, ['name', 'price', 'code', 'SKU']);
  assert.deepEqual((schema.properties as Record<string, unknown>).qty, { type: 'integer', default: 1 });
});
