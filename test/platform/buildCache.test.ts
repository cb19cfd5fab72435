// A worker host's cache of builds (agent/buildCache.ts): each build is downloaded once, checked and unpacked; beyond the
// KEPT_BUILDS used last, those no running worker uses are deleted when another arrives. Real archives over real HTTP.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { BuildCache } from '../../engine/src/platform/agent/buildCache';
import { KEPT_BUILDS } from '../../engine/src/platform/options';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-build-cache-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('a host keeps the builds it used last and those its workers run from; it downloads each once', async () => {
  const archives = new Map<string, { file: string; sha256: string }>();
  for (let i = 0; i < KEPT_BUILDS + 3; i++) {
    const id = `bld_${i}`;
    const src = path.join(tmp, 'src', id);
    fs.mkdirSync(src, { recursive: true });
    fs.writeFileSync(path.join(src, 'handler.py'), `# build ${i}\n`);
    const file = path.join(tmp, `${id}.tar.gz`);
    await tar.c({ gzip: true, cwd: src, file }, ['handler.py']);
    archives.set(id, { file, sha256: createHash('sha256').update(fs.readFileSync(file)).digest('hex') });
  }
  const downloads: string[] = [];
  const server = http.createServer((req, res) => {
    const id = decodeURIComponent(req.url!.slice(1));
    downloads.push(id);
    const a = archives.get(id)!;
    res.writeHead(200, { 'x-strato-sha256': a.sha256 });
    fs.createReadStream(a.file).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const download = (id: string) => new Promise<IncomingMessage>((resolve, reject) => http.get(`http://127.0.0.1:${port}/${id}`, resolve).on('error', reject));
  const running = new Set<string>();
  const cache = new BuildCache(
    path.join(tmp, 'host'),
    download,
    () => undefined,
    () => running,
  );
  try {
    const get = (i: number) => cache.get(`bld_${i}`, archives.get(`bld_${i}`)!.sha256);
    running.add(await get(0)); // a worker runs from the first build throughout
    for (let i = 1; i < KEPT_BUILDS + 3; i++) {
      const root = await get(i);
      assert.equal(fs.readFileSync(path.join(root, 'handler.py'), 'utf8'), `# build ${i}\n`);
      await new Promise((r) => setTimeout(r, 5)); // distinct times of use
    }
    const cached = fs.readdirSync(path.join(tmp, 'host', 'builds')).sort();
    const expected = [0, ...Array.from({ length: KEPT_BUILDS }, (_, k) => k + 3)].map((i) => archives.get(`bld_${i}`)!.sha256).sort();
    assert.deepEqual(cached, expected, 'the newest builds and the running one stay; the others go');
    // A cached build is not downloaded again; a deleted one is.
    await get(KEPT_BUILDS + 2);
    await get(1);
    assert.deepEqual(downloads, [...Array.from({ length: KEPT_BUILDS + 3 }, (_, i) => `bld_${i}`), 'bld_1']);
  } finally {
    server.close();
  }
});
