// A pydantic model's JSON keys in the typed clients are the ones the model reads (its Input shape) and answers (by
// alias, as the worker runtime dumps it): alias, validation_alias, serialization_alias, exclude=True, and an alias
// generator of the model or a base (model_config or class Config). Checked against pydantic itself: each shape's keys
// are what the real model's fields say.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeFiles } from '../helpers/analysis';
import { runPython } from '../python/helpers';
import { queueSignature, routeSignature } from '../../engine/src/clientgen/signatures';
import { Names, TypeMapper } from '../../engine/src/clientgen/types';

const MODELS = `from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel, to_pascal, to_snake


class Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    first_name: str
    last_name2x: str = "b"
    http_code_v2: int = 0
    __Under_score: int = 0


class Child(Camel):
    extra_field: int = 1


class Pascal(BaseModel):
    class Config:
        alias_generator = to_pascal

    user_id: int


class Snake(BaseModel):
    model_config = {"alias_generator": to_snake}
    userID: int
    HTTPCode: int


class Ser(BaseModel):
    user_name: str = Field(serialization_alias="userName")
    secret: str = Field(default="s", exclude=True)
    both: int = Field(0, alias="Both")
    read_as: int = Field(0, validation_alias="readAs")
`;

const NAMES = ['Camel', 'Child', 'Pascal', 'Snake', 'Ser'];

test("each model's Input and output shapes hold the keys pydantic reads and answers", async () => {
  const params = NAMES.map((n) => `${n.toLowerCase()}: ${n}`).join(', ');
  // A route: its arguments are built from what is sent by their annotations, so a model reads its own keys.
  const source =
    `${MODELS}\nfrom strato import Endpoint\n\napi = Endpoint(name="api", cpu="cpu3c-1-2")\n\n\n` +
    `@api.post("/f")\ndef f(${params}) -> tuple[${NAMES.join(', ')}]:\n    pass\n`;
  const model = await analyzeFiles({ 'w.py': source });
  const mapper = new TypeMapper(model, new Names([]));
  routeSignature(model.endpoints[0], model.endpoints[0].functions[0], mapper);
  const keys = (name: string) => mapper.shapes.find((s) => s.name === name)?.fields.map((f) => f.name);
  const ours = Object.fromEntries(NAMES.map((n) => [n, { read: keys(`${n}Input`) ?? keys(n), answered: keys(n) }]));

  const r = await runPython([
    '-c',
    `${MODELS}\nimport json\nout = {}\nfor m in [${NAMES.join(', ')}]:\n` +
      `    fields = m.model_fields.items()\n` +
      `    out[m.__name__] = {"read": [f.validation_alias or f.alias or n for n, f in fields], ` +
      `"answered": [f.serialization_alias or f.alias or n for n, f in fields if not f.exclude]}\n` +
      `print(json.dumps(out))\n`,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(ours, JSON.parse(r.stdout));
  assert.deepEqual(ours.Camel.answered, ['firstName', 'lastName2X', 'httpCodeV2'], 'pydantic.alias_generators.to_camel, as ported');
  assert.deepEqual(mapper.warnings, []);
});

test('an alias generator the client cannot follow is a warning naming it, and the fields keep their names', async () => {
  const source =
    'from pydantic import BaseModel, ConfigDict\nfrom strato import Endpoint\n\n\nclass Odd(BaseModel):\n' +
    '    model_config = ConfigDict(alias_generator=lambda n: n.upper())\n    a_b: int\n\n\n@Endpoint(name="f")\ndef f() -> Odd:\n    pass\n';
  const model = await analyzeFiles({ 'w.py': source });
  const mapper = new TypeMapper(model, new Names([]));
  queueSignature(model.endpoints[0], model.endpoints[0].functions[0], mapper);
  assert.deepEqual(
    mapper.shapes.map((s) => s.fields.map((f) => f.name)),
    [['a_b']],
  );
  assert.match(mapper.warnings[0]?.message ?? '', /^model Odd: its alias_generator lambda n: n\.upper\(\) is not one the client can follow/);
});
