// The control plane's records kept up with a shared store (controlPlane/recordSync.ts): a reload never installs what
// it read while a write of this node was in flight, reloads asked for during one make one more, and catchUp reloads
// only when the store's version moved past what was read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecordSync, type StoredRecords } from '../../engine/src/platform/controlPlane/recordSync';
import type { AppRow, PlatformStore } from '../../engine/src/platform/store/types';

function fakeStore() {
  const apps: AppRow[] = [];
  let version = 1;
  let reads = 0;
  const pending: Array<() => void> = [];
  const store = {
    listApps: async () => {
      reads++;
      return [...apps];
    },
    listEnvironments: async () => [],
    listBuilds: async () => [],
    listEndpoints: async () => [],
    controlPlaneVersion: async () => version,
    // A write that commits when the test says so.
    insertApp: (row: AppRow) =>
      new Promise<void>((resolve) =>
        pending.push(() => {
          apps.push(row);
          version++;
          resolve();
        }),
      ),
  } as unknown as PlatformStore;
  return { store, apps, pending, reads: () => reads, bump: () => version++ };
}

const app = (id: string): AppRow => ({ id, name: id, created_at: 1 });

test('a reload that reads while a write of this node is in flight reads again once it committed', async () => {
  const f = fakeStore();
  const installed: StoredRecords[] = [];
  const sync = new RecordSync(f.store, (r) => installed.push(r));
  const write = sync.store.insertApp(app('a'), {} as never);
  const reload = sync.reload();
  await new Promise((r) => setTimeout(r, 30)); // it has read (without `a`) and waits for the write
  assert.equal(installed.length, 0, 'nothing installed while the write is in flight');
  f.pending[0]();
  await Promise.all([write, reload]);
  assert.deepEqual(
    installed.map((r) => r.apps.map((a) => a.id)),
    [['a']],
  );
  assert.ok(f.reads() >= 2, `read ${f.reads()} times`);
});

test('reloads asked for during one make one more, never several', async () => {
  const f = fakeStore();
  let installs = 0;
  const sync = new RecordSync(f.store, () => installs++);
  await Promise.all([sync.reload(), sync.reload(), sync.reload(), sync.reload()]);
  assert.equal(installs, 2);
});

test('catchUp reloads in a cluster only when another node committed a change not read here', async () => {
  const f = fakeStore();
  let installs = 0;
  const sync = new RecordSync(f.store, () => installs++);
  await sync.catchUp();
  assert.equal(installs, 0, 'one node alone never reloads');
  sync.clustered = true;
  await sync.catchUp();
  assert.equal(installs, 1, 'version 1 was never read');
  await sync.catchUp();
  assert.equal(installs, 1, 'nothing new');
  f.bump();
  await sync.catchUp();
  assert.equal(installs, 2);
});

test('a committed write through the synced store calls afterWrite before it answers', async () => {
  const f = fakeStore();
  const sync = new RecordSync(f.store, () => undefined);
  const order: string[] = [];
  sync.afterWrite = async () => void order.push('afterWrite');
  const write = sync.store.insertApp(app('b'), {} as never).then(() => order.push('answered'));
  f.pending[0]();
  await write;
  assert.deepEqual(order, ['afterWrite', 'answered']);
  assert.equal(await sync.store.controlPlaneVersion(), 2, 'reads pass through uncounted');
});
