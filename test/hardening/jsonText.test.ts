// Issue #16, defect 7: the output a handler returns is the output a client reads, byte for byte of its JSON text.
// Before, the platform parsed and re-encoded it: 12345678901234567890 became 12345678901234567000, 2.0 became 2,
// -0.0 became 0, and an infinity silently became null.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestArtifact } from '../helpers/artifact';
import { call, deploy, startTestPlatform, type TestPlatform } from '../helpers/platform';
import { queueSpec } from '../helpers/testWorkers';

const NUMBERS_PY = `
def numbers(**_):
    return {"big": 12345678901234567890, "two": 2.0, "negzero": -0.0, "small": 1e-7, "text": "é"}

def echo(**kw):
    return kw

def infinite(**_):
    return {"x": float("inf")}
`;

let tp: TestPlatform;
let url: Record<string, string>;
before(async () => {
  tp = await startTestPlatform();
  const art = await buildTestArtifact({ 'worker.py': NUMBERS_PY }, [
    queueSpec('numbers', 'numbers'),
    queueSpec('infinite', 'infinite'),
    queueSpec('echo', 'echo'),
  ]);
  url = Object.fromEntries(Object.entries(await deploy(tp.cp, art)).map(([k, v]) => [k, v.url]));
});
after(() => tp?.close());

test("a handler's JSON text reaches the client unchanged: big integers, 2.0, -0.0", async () => {
  const r = await call('POST', `${url.numbers}/runsync`, { body: { input: {} } });
  assert.equal(r.status, 200);
  assert.match(r.text, /"output":\{"big":12345678901234567890,"two":2\.0,"negzero":-0\.0,"small":1e-07,"text":"é"\}/);
  const id = (r.json as { id: string }).id;
  const again = await call('GET', `${url.numbers}/status/${id}`);
  assert.match(again.text, /"big":12345678901234567890,"two":2\.0,"negzero":-0\.0/);
});

test("the input a client sends is the input a handler reads: the /run body's JSON text is not re-encoded", async () => {
  const raw = '{ "input" : {"big": 12345678901234567890, "two": 2.0, "negzero": -0.0, "s": "a\\"}b"} , "webhook": null}';
  const r = await call('POST', `${url.echo}/runsync`, { raw, auth: `Bearer ${tp.key}` });
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /"output":\{"big":12345678901234567890,"two":2\.0,"negzero":-0\.0,"s":"a\\"}b"\}/);
});

test('an output JSON cannot hold (an infinity) fails the job with the reason instead of becoming null', async () => {
  const r = await call('POST', `${url.infinite}/runsync`, { body: { input: {} } });
  const job = r.json as { status: string; error?: string; output?: unknown };
  assert.equal(job.status, 'FAILED');
  assert.match(String(job.error), /not JSON serializable/);
});

test('an integer longer than a Python worker reads is refused at /run with the reason; the longest it reads runs, as do long floats', async () => {
  // Before, the job was taken, every worker's job channel failed on it again and again, and the endpoint served nothing.
  const digits = (n: number) => '9'.repeat(n);
  for (const route of ['run', 'runsync']) {
    const r = await call('POST', `${url.echo}/${route}`, { raw: `{"input": {"n": ${digits(5000)}, "s": "${digits(6000)}"}}`, auth: `Bearer ${tp.key}` });
    assert.equal(r.status, 400, r.text);
    assert.equal(
      (r.json as { error: string }).error,
      'the input holds an integer of 5000 digits, more than the 4300 a Python worker reads; send it as a string',
    );
  }
  const raw = `{"input": {"n": -${digits(4300)}, "f": 0.${digits(5000)}, "e": 0.${digits(5000)}e5, "s": "${digits(6000)}"}}`;
  const ok = await call('POST', `${url.echo}/runsync`, { raw, auth: `Bearer ${tp.key}` });
  assert.equal((ok.json as { status: string }).status, 'COMPLETED', ok.text.slice(0, 500));
  assert.ok(ok.text.includes(`"n":-${digits(4300)}`), 'the integer travels as written');
});
