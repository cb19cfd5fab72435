// How the control plane's records in memory keep up with a store that other nodes of a cluster change too. Every write
// of records through this node is counted, so that a reload never installs what it read before one of them committed;
// reloads asked for during one make one more, never several; and the store's control-plane version tells whether
// another node committed a change not read here yet.
import type { AppRow, BuildRow, EndpointRow, EnvironmentRow, PlatformStore } from '../store/types';

/** The store's methods that change control-plane records. */
const RECORD_WRITES = new Set<string | symbol>([
  'insertApp',
  'deleteApp',
  'insertEnvironment',
  'setActiveBuild',
  'deleteEnvironment',
  'insertBuild',
  'pruneBuilds',
  'saveEndpoint',
  'deleteEndpoint',
]);

/** Every record, as read from the store in one reload. */
export interface StoredRecords {
  apps: AppRow[];
  envs: EnvironmentRow[];
  builds: BuildRow[];
  endpoints: EndpointRow[];
}

export class RecordSync {
  /** The store, its writes of records counted: the control plane writes through this. */
  readonly store: PlatformStore;
  /** Other nodes share the store (a cluster): a record not known here may have been made there a moment ago. */
  clustered = false;
  /** A cluster's other nodes read a committed change before its call answers (clusterNode.ts): read-your-writes on any node. */
  afterWrite?: () => Promise<void>;

  /** Local writes of records in flight, and how many ended. */
  private writing = 0;
  private written = 0;
  private reloading: Promise<void> | null = null;
  private reloadAgain = false;
  /** The store's control-plane version the records in memory are at least as new as. */
  private version = 0;

  /** `install` replaces the records in memory with those a reload read. */
  constructor(
    private readonly stored: PlatformStore,
    private readonly install: (records: StoredRecords) => void,
  ) {
    this.store = new Proxy(stored, {
      get: (target, prop, receiver) => {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function' || !RECORD_WRITES.has(prop)) return v;
        return (...args: unknown[]) => this.counted((v as (...a: unknown[]) => Promise<unknown>).apply(target, args));
      },
    });
  }

  private async counted<T>(p: Promise<T>): Promise<T> {
    this.writing++;
    let done: T;
    try {
      done = await p;
    } finally {
      this.writing--;
      this.written++;
    }
    await this.afterWrite?.();
    return done;
  }

  /** Reads every record again from the store (another node of a cluster changed some) and installs them. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.reloadAgain = false;
        await this.reloadOnce();
      } while (this.reloadAgain);
    })().finally(() => (this.reloading = null));
    return this.reloading;
  }

  /** In a cluster: reads the records again when another node committed a change this node has not read yet. */
  async catchUp(): Promise<void> {
    if (!this.clustered) return;
    if ((await this.stored.controlPlaneVersion()) > this.version) await this.reload();
  }

  private async reloadOnce(): Promise<void> {
    for (;;) {
      // What was read while a write of this node was in flight may lack it: read again once it committed.
      const before = this.written;
      const version = this.clustered ? await this.stored.controlPlaneVersion() : 0;
      const [apps, envs, builds, endpoints] = await Promise.all([
        this.stored.listApps(),
        this.stored.listEnvironments(),
        this.stored.listBuilds(),
        this.stored.listEndpoints(),
      ]);
      if (this.writing === 0 && this.written === before) {
        this.version = Math.max(this.version, version);
        this.install({ apps, envs, builds, endpoints });
        return;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
