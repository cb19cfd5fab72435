// The cost of a request's key check now that keys are per person (issue 16), beside the floor measured in the same
// run: the one-key check it replaced (SHA-256 of the presented key, constant-time compare). Measured: the platform
// key, a person's key among 200 stored keys (found by its hash in memory), an unknown key, the scope check, and a
// person's key presented again on the connection that presented it last (KeyRing remembers it: no hash).
import { createHash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { mayInvoke, type Principal } from '../engine/src/platform/auth';
import { systemClock } from '../engine/src/platform/clock';
import { KeyRing } from '../engine/src/platform/controlPlane/keys';
import { openPglite } from '../engine/src/platform/store/pglite';
import { SqlStore } from '../engine/src/platform/store/sqlStore';

const TEMPLATE_DIR = path.join(os.tmpdir(), 'strato-test-pglite-template');
const N = 200_000;
const STORED = 200;

const req = (key: string) => ({ headers: { authorization: `Bearer ${key}` } }) as unknown as IncomingMessage;

function perOp(label: string, fn: () => unknown): number {
  for (let i = 0; i < 10_000; i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) fn();
  const ns = ((performance.now() - t0) * 1e6) / N;
  console.log(`  ${label.padEnd(58)} ${ns.toFixed(0).padStart(6)} ns/request`);
  return ns;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-bench-keys-'));
  const store = await SqlStore.open(await openPglite(path.join(dir, 'db'), { templateDir: TEMPLATE_DIR }));
  const platformKey = 'strato_bench-platform-key';
  const ring = await KeyRing.load(platformKey, store, systemClock, console.error);
  const admin: Principal = { id: 'platform', name: 'platform', scope: 'admin', apps: null };
  let person = '';
  for (let i = 0; i < STORED; i++) {
    const k = await ring.create(admin, `person-${i}`, 'deploy', ['shop']);
    if (i === STORED / 2) person = k.secret;
  }
  console.log(`key check per request (${N.toLocaleString()} each, ${STORED} stored keys)`);
  const expected = createHash('sha256').update(platformKey).digest();
  const floor = perOp('floor: one platform key (sha256 + timingSafeEqual)', () => timingSafeEqual(createHash('sha256').update(platformKey).digest(), expected));
  const platformReq = req(platformKey);
  const personReq = req(person);
  const unknownReq = req('strato_not-a-key-of-this-platform-000000000000');
  const a = perOp('platform key', () => ring.authenticate(platformReq));
  const b = perOp("a person's deploy key (found by hash)", () => ring.authenticate(personReq));
  const c = perOp('unknown key (401)', () => ring.authenticate(unknownReq));
  const d = perOp("a person's key + the invoke scope check of the app", () => {
    const r = ring.authenticate(personReq);
    return 'principal' in r && mayInvoke(r.principal, 'shop');
  });
  // A keep-alive connection presenting the key it presented before: compared in constant time, not hashed again.
  const connection = {} as IncomingMessage['socket'];
  const again = { headers: { authorization: `Bearer ${person}` }, socket: connection } as unknown as IncomingMessage;
  const e = perOp("a person's key again on its connection (not hashed)", () => ring.authenticate(again));
  console.log(`  ratios to the floor: ${[a, b, c, d, e].map((x) => (x / floor).toFixed(2)).join(', ')}`);
  await ring.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
