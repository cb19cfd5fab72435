// The dev server passes inputs and answers through as they were written, as the deployed endpoint does: numbers
// parsed and written again in JavaScript lose their form (2.0 became 2, 1e20 100000000000000000000) and big integers
// their digits (12345678901234567890 became 12345678901234567000).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServing, type DevProcess } from '../helpers/devServer';
import { startTestPlatform, type TestPlatform } from '../helpers/platform';

let tmp: string;
let p: TestPlatform;
let dev: DevProcess | undefined;
before(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'strato-dev-raw-'));
  p = await startTestPlatform();
});
after(async () => {
  await dev?.stop();
  await p?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const WORKER = `from strato import Endpoint


@Endpoint(name="echo", cpu="cpu3c-1-2")
def echo(x: float, big: int):
    return {"sum": x + x, "big": big}


api = Endpoint(name="api", cpu="cpu3c-1-2")


@api.post("/items")
def create_item(price: float, tags: list):
    return {"price": price, "tags": tags}
`;

async function raw(port: number, route: string, body: string): Promise<{ status: number; text: string; type: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
}

test('queue inputs and outputs and a route body keep their numbers as written, as the deployed endpoint answers them', async () => {
  const dir = path.join(tmp, 'raw');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'requirements.txt'), '');
  writeFileSync(path.join(dir, 'worker.py'), WORKER);
  dev = await startServing(['--host', '127.0.0.1', '--port', '0'], { cwd: dir, env: { STRATO_API_URL: p.url, STRATO_API_KEY: p.key } });
  const q = await raw(dev.port, '/worker/runsync', '{"input": {"x": 1.0, "big": 12345678901234567890}}');
  assert.equal(q.status, 200, q.text);
  assert.match(q.text, /"output":\{"sum": ?2\.0, ?"big": ?12345678901234567890\}/);
  const r = await raw(dev.port, '/worker/items', '{"price": 1e20, "tags": [1.0, 2.50]}');
  assert.equal(r.status, 200, `${r.text}\n${dev.stdout()}`);
  assert.match(r.text, /^\{"price": ?1e\+20, ?"tags": ?\[1\.0, ?2\.5\]\}$/);
  assert.match(r.type ?? '', /application\/json/);
});
