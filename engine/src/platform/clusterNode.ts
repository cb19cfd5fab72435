// A node joins its cluster (nodes over one PostgreSQL server): its membership (cluster.ts), work sharing, the
// service-wide queue bound, load-balanced requests sent on to other nodes' workers (lbPeers.ts), and the routes other
// nodes call for this node's part of health, hosts, logs, purges and handed-off jobs. platform.ts calls it once its
// HTTP server listens; the embedded database has none of it.
import { Cluster, type ClusterDeps } from './cluster';
import { GpuOffers } from './gpuOffers';
import { serveNodeLogs } from './clusterLogs';
import { serveNodeParts } from './jobsApi';
import { LbPeers } from './lbPeers';
import { QueueBound } from './queueBound';
import { serveNodeHealth, type HealthDeps } from './serviceHealth';
import { serveNodeHosts } from './serviceHosts';
import type { JobWriter } from './store/jobWriter';
import type { HostPool } from './workers/hosts';
import type { Waiters } from '../util/waiters';
import { WorkSharing } from './workSharing';

/** Another node committed a control-plane or key change: read it now (RecordSync.afterWrite, KeyRing.afterWrite). */
const NODE_CP_PATH = '/_cluster/control-plane';

export interface ClusterNodeDeps extends ClusterDeps {
  writer: JobWriter;
  health: HealthDeps;
  hosts: HostPool;
  logs: { logsDir: string; waiters: Waiters };
  maxQueuedPerEndpoint: number;
  /** Another node released a worker slot of the endpoint. */
  onSlotFreed(endpointId: string): void;
}

export class ClusterNode {
  readonly cluster: Cluster;
  readonly sharing: WorkSharing;
  readonly queueBound: QueueBound;
  readonly lbPeers: LbPeers;
  readonly gpuOffers: GpuOffers;
  private readonly cp: ClusterNodeDeps['cp'];
  private readonly keys: ClusterNodeDeps['keys'];

  /** Serves the node routes at once (other nodes may call them while this one starts). */
  constructor(d: ClusterNodeDeps) {
    const nodeId = d.nodeId;
    this.cp = d.cp;
    this.keys = d.keys;
    const cluster = (this.cluster = new Cluster(d));
    const sharing = (this.sharing = new WorkSharing({ nodeId, store: d.store, engine: d.engine, writer: d.writer, cp: d.cp, cluster, log: d.log }));
    const queueBound = (this.queueBound = new QueueBound({ nodeId, engine: d.engine, cluster, cp: d.cp, max: d.maxQueuedPerEndpoint }));
    cluster.onQueued = (id) => sharing.wake(id);
    const lbPeers = (this.lbPeers = new LbPeers({ store: d.store, cluster, lostMs: d.lostMs, log: d.log }));
    cluster.onSlotFreed = (id) => {
      lbPeers.forget(id);
      d.onSlotFreed(id);
    };
    cluster.onCounts = (from, entries) => queueBound.heard(from, entries);
    const gpuOffers = (this.gpuOffers = new GpuOffers({ nodeId, cluster, hosts: d.hosts, queueBound }));
    cluster.onGpus = (from, offers) => gpuOffers.heard(from, offers);
    serveNodeHealth(cluster, d.health);
    serveNodeHosts(cluster, d.hosts);
    serveNodeLogs(cluster, d.logs);
    serveNodeParts(cluster, { engine: d.engine, writer: d.writer });
    cluster.serve(NODE_CP_PATH, async () => {
      await Promise.all([d.cp.sync.catchUp(), d.keys.syncAgain()]);
      return {};
    });
    // A node that does not answer in time reads the change when its notification comes, as before.
    d.cp.sync.afterWrite = d.keys.afterWrite = () =>
      cluster.callOthers(NODE_CP_PATH, {}).then(
        () => undefined,
        () => undefined,
      );
  }

  /** Joins: registers, heartbeats, listens; on failure it leaves again and throws. */
  async start(): Promise<void> {
    try {
      await this.cluster.start();
      // What other nodes changed between this node's first read and its LISTEN (nodes started together: another's
      // platform key, its apps) was heard by nobody here: read once more, now that every later change is heard.
      await Promise.all([this.cp.sync.catchUp(), this.keys.syncAgain()]);
      await this.keys.share(this.cluster.nodeId);
      this.sharing.start();
      this.queueBound.start();
      this.gpuOffers.start();
    } catch (e) {
      await this.close();
      throw e;
    }
  }

  async close(): Promise<void> {
    this.cp.sync.afterWrite = this.keys.afterWrite = undefined;
    this.sharing.close();
    this.queueBound.close();
    this.gpuOffers.close();
    this.lbPeers.close();
    await this.cluster.close();
  }
}
