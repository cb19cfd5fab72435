// What the in-process cluster benches share: a PostgreSQL cluster of the bench's own, three nodes over one database of
// it and one node on the embedded database (the same run's baseline), all in this process (test/helpers), closed and
// removed once the bench's figures are out.
import { startTestPlatform, type TestPlatform } from '../test/helpers/platform';
import { startPostgres } from '../test/helpers/postgres';

export interface BenchCluster {
  /** Three nodes over one PostgreSQL database. */
  nodes: [TestPlatform, TestPlatform, TestPlatform];
  /** One node on the embedded database. */
  single: TestPlatform;
}

export async function withCluster(run: (c: BenchCluster) => Promise<void>): Promise<void> {
  const server = await startPostgres();
  const platforms: TestPlatform[] = [];
  try {
    const database = await server.createDatabase();
    const nodes = await Promise.all([0, 1, 2].map(() => startTestPlatform({ database })));
    platforms.push(...nodes);
    const single = await startTestPlatform({ database: undefined });
    platforms.push(single);
    await run({ nodes: nodes as BenchCluster['nodes'], single });
  } finally {
    for (const p of platforms) await p.close().catch(() => undefined);
    server.stop();
  }
}
