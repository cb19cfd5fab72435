// The machines the whole service runs workers on: each platform node's own machine and the worker hosts that joined
// it (`strato platform agent --join <node>`). A node knows only its own, so in a cluster the node that answers asks the
// others (`/_cluster/hosts`) and names the node of each host; a live node that does not answer fails the listing with a
// 503 that names it (cluster.ts), as `/health` does.
import type { HostView } from '../protocol/agents';
import type { Cluster } from './cluster';
import type { HostPool } from './workers/hosts';

const NODE_HOSTS_PATH = '/_cluster/hosts';

/** Every host of the service; one node's alone (without `node`) on the embedded database. */
export async function serviceHosts(pool: HostPool, cluster: Cluster | undefined): Promise<HostView[]> {
  if (!cluster) return pool.view();
  const mine = pool.view().map((h) => ({ ...h, node: cluster.nodeId }));
  const others = await cluster.callOthers<HostView[]>(NODE_HOSTS_PATH, {});
  return [...mine, ...others.flat()];
}

/** Answers the other nodes' calls for the hosts this node holds. */
export function serveNodeHosts(cluster: Cluster, pool: HostPool): void {
  cluster.serve(NODE_HOSTS_PATH, () => pool.view().map((h) => ({ ...h, node: cluster.nodeId })));
}
