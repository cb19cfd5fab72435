// The platform's API keys: the platform key (key file or --api-key, an admin key) and the keys admins create, held
// in memory by their SHA-256 so that a request costs one hash (none when its connection presented the same key last)
// and one map lookup, never a database query. The store keeps only hashes. Changes made here apply at once; those of
// other nodes sharing the store arrive with the next sync (KEY_SYNC_MS), which also writes when keys were last used.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { KEY_SCOPES, PLATFORM_KEY_ID, type ApiKeyInfo, type KeyScope } from '../../protocol/controlPlane';
import { newApiKey } from '../../protocol/layout';
import { nameProblem } from '../../protocol/names';
import { UNAUTHORIZED_MESSAGE, keyDigest, presentedKey, revokedMessage, type Principal } from '../auth';
import type { Clock } from '../clock';
import { badRequest, conflict, notFound } from '../errors';
import type { KeyRow, PlatformStore } from '../store/types';
import { auditRow, type AuditTarget } from './audit';

/** How often a node writes last-used times and reads the keys other nodes created or revoked. */
export const KEY_SYNC_MS = 10_000;
/** The part of a key shown to recognise it: `strato_` and 5 characters (30 of its 256 random bits). */
const PREFIX_LENGTH = 12;
/** A cluster node's platform key as the other nodes know it (KeyRing.share). */
const nodeKeyName = (nodeId: string, hash: string): string => `${PLATFORM_KEY_ID}-${nodeId}-${hash.slice(0, 6)}`;

export type Authentication = { principal: Principal } | { refused: string };

interface Entry {
  row: KeyRow;
  principal: Principal;
}

type KeyStore = Pick<PlatformStore, 'listKeys' | 'insertKey' | 'revokeKey' | 'touchKeys'>;

const PLATFORM: Principal = { id: PLATFORM_KEY_ID, name: PLATFORM_KEY_ID, scope: 'admin', apps: null };

/** The key a connection presented last, and its digest. */
interface Presented {
  key: Buffer;
  digest: Buffer;
  hex: string;
}

export class KeyRing {
  private readonly platformDigest: Buffer;
  /**
   * Per connection, the key it presented last: a keep-alive client sends the same key with every request, and hashing
   * it was a tenth of the platform's own work on a warm `/runsync`. The next key is compared with it in constant time
   * (a proxy may carry several clients' requests on one connection); a different one is hashed and replaces it.
   */
  private readonly lastPresented = new WeakMap<Socket, Presented>();
  private readonly byHash = new Map<string, Entry>();
  private readonly byId = new Map<string, Entry>();
  /** Keys used since the last sync. */
  private readonly used = new Set<Entry>();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | null = null;
  /** In a cluster, this node's platform key as the other nodes know it (share): once revoked, this node refuses it too. */
  private shared: Entry | undefined;

  private constructor(
    platformKey: string,
    private readonly store: KeyStore,
    private readonly clock: Clock,
    private readonly log: (line: string) => void,
  ) {
    this.platformDigest = keyDigest(platformKey);
  }

  static async load(platformKey: string, store: KeyStore, clock: Clock, log: (line: string) => void, syncMs = KEY_SYNC_MS): Promise<KeyRing> {
    const ring = new KeyRing(platformKey, store, clock, log);
    for (const r of await store.listKeys()) ring.merge(r);
    ring.timer = setInterval(() => void ring.sync(), syncMs);
    ring.timer.unref();
    return ring;
  }

  /**
   * The key of a request. The platform key is compared in constant time; other keys are found by their SHA-256,
   * so the time a lookup takes depends on the hash, never on the key.
   */
  authenticate(req: IncomingMessage): Authentication {
    const key = presentedKey(req);
    if (key === null) return { refused: UNAUTHORIZED_MESSAGE };
    const { digest, hex } = this.digestOf(req.socket as Socket | null | undefined, key);
    if (timingSafeEqual(digest, this.platformDigest)) {
      const revokedAt = this.shared?.row.revoked_at ?? null;
      return revokedAt === null ? { principal: PLATFORM } : { refused: revokedMessage(this.shared!.row.name, revokedAt) };
    }
    const e = this.byHash.get(hex);
    if (!e) return { refused: UNAUTHORIZED_MESSAGE };
    if (e.row.revoked_at !== null) return { refused: revokedMessage(e.row.name, e.row.revoked_at) };
    e.row.last_used_at = this.clock.now();
    this.used.add(e);
    return { principal: e.principal };
  }

  /** The key's digest: hashed once per connection while the connection keeps presenting the same key. */
  private digestOf(socket: Socket | null | undefined, key: string): Presented {
    const bytes = Buffer.from(key, 'utf8');
    const last = socket ? this.lastPresented.get(socket) : undefined;
    if (last && last.key.length === bytes.length && timingSafeEqual(last.key, bytes)) return last;
    const digest = keyDigest(key);
    const presented = { key: bytes, digest, hex: digest.toString('hex') };
    if (socket) this.lastPresented.set(socket, presented); // a request made in process (tests) may have none
    return presented;
  }

  list(): ApiKeyInfo[] {
    const platform: ApiKeyInfo = {
      id: PLATFORM_KEY_ID,
      name: PLATFORM_KEY_ID,
      scope: 'admin',
      apps: [],
      prefix: '',
      createdAt: null,
      createdBy: null,
      lastUsedAt: null,
      revokedAt: null,
      revokedBy: null,
      builtin: true,
    };
    return [platform, ...[...this.byId.values()].map((e) => this.info(e.row))];
  }

  /** Creates a key; the answer is the only place the key itself ever appears. */
  async create(by: Principal, name: string, scope: string, apps: readonly string[]): Promise<{ key: ApiKeyInfo; secret: string }> {
    const problem = nameProblem('key', name) ?? apps.map((a) => nameProblem('app', a)).find(Boolean);
    if (problem) throw badRequest(problem);
    if (name === PLATFORM_KEY_ID) throw badRequest(`"${PLATFORM_KEY_ID}" is the name of the platform key; choose another name`);
    if (!(KEY_SCOPES as readonly string[]).includes(scope)) throw badRequest(`scope "${scope}" is not one of ${KEY_SCOPES.join(', ')}`);
    const names = [...new Set(apps)];
    if (scope === 'admin' && names.length) throw badRequest('an admin key reaches every app; create it without apps');
    if (scope === 'deploy' && !names.length) throw badRequest('a deploy key needs the apps it may deploy to (--app NAME, one or more)');
    if (this.active(name)) throw conflict(`an active key is already named "${name}"; revoke it first or choose another name`);
    const secret = newApiKey();
    const row: KeyRow = {
      id: `key_${randomBytes(8).toString('hex')}`,
      name,
      hash: keyDigest(secret).toString('hex'),
      prefix: secret.slice(0, PREFIX_LENGTH),
      scope,
      apps: JSON.stringify(names),
      created_at: this.clock.now(),
      created_by: by.id,
      last_used_at: null,
      revoked_at: null,
      revoked_by: null,
    };
    try {
      await this.store.insertKey(row, auditRow(by, 'createKey', target(row), row.created_at, { scope, apps: names }));
    } catch (e) {
      // Another node created a key of this name meanwhile (the store keeps active names unique).
      if (/api_keys_active_name|duplicate key/i.test((e as Error).message)) throw conflict(`an active key is already named "${name}"; choose another name`);
      throw e;
    }
    this.merge(row);
    await this.afterWrite?.();
    return { key: this.info(row), secret };
  }

  /** Revokes a key (by id, else by the name of an active key): from now on it is refused with 401. */
  async revoke(by: Principal, idOrName: string): Promise<ApiKeyInfo> {
    if (idOrName === PLATFORM_KEY_ID)
      throw badRequest('the platform key is the key file (or --api-key) of the platform: replace it there and restart the platform to change it');
    const e = this.byId.get(idOrName) ?? this.active(idOrName) ?? [...this.byId.values()].find((x) => x.row.name === idOrName);
    if (!e) throw notFound(`no key has the id or name "${idOrName}"; strato keys list shows them`);
    if (e.row.revoked_at !== null) throw conflict(`the key "${e.row.name}" (${e.row.id}) is already revoked`);
    const at = this.clock.now();
    await this.store.revokeKey(e.row.id, at, by.id, auditRow(by, 'revokeKey', target(e.row), at));
    e.row.revoked_at = at;
    e.row.revoked_by = by.id;
    await this.afterWrite?.();
    return this.info(e.row);
  }

  /**
   * In a cluster every node takes every node's platform key (the key file of the node an operator started first, an
   * agent moving to another node, a load balancer in front of them): this node's is stored, as its SHA-256 like any
   * key, as an admin key named `platform-<node id>-<6 hex of the hash>` unless a node stored the same key already. A
   * key a node no longer uses stays valid until an admin revokes it (`strato keys revoke`); a revoked one is refused by
   * every node, its own node included (a new key: remove the key file and restart the node, or pass another --api-key).
   */
  async share(nodeId: string): Promise<void> {
    const hash = this.platformDigest.toString('hex');
    if (!this.byHash.has(hash)) {
      const at = this.clock.now();
      const name = nodeKeyName(nodeId, hash);
      // No prefix: a key given with --api-key may be short enough for one to show all of it.
      const row: KeyRow = {
        id: `key_${randomBytes(8).toString('hex')}`,
        name,
        hash,
        prefix: '',
        scope: 'admin',
        apps: '[]',
        created_at: at,
        created_by: PLATFORM_KEY_ID,
        last_used_at: null,
        revoked_at: null,
        revoked_by: null,
      };
      try {
        await this.store.insertKey(row, auditRow(PLATFORM, 'createKey', target(row), at, { scope: 'admin', apps: [] }));
        this.merge(row);
        await this.afterWrite?.();
      } catch (e) {
        // A node started with the same key stored it meanwhile.
        if (!/duplicate key|unique/i.test((e as Error).message)) throw e;
        await this.syncAgain();
      }
    }
    this.shared = this.byHash.get(hash);
    if (this.shared?.row.revoked_at != null)
      this.log(
        `strato platform: this node's platform key (${this.shared.row.name}) was revoked, and every node refuses it; ` +
          'remove the key file and restart the node (or pass another --api-key) for a new one',
      );
  }

  /** A cluster's other nodes read a key change before its call answers (clusterNode.ts): a revoked key is refused by every node. */
  afterWrite?: () => Promise<void>;

  /** Reads the keys again, after any read already under way (which may predate a change another node just made). */
  async syncAgain(): Promise<void> {
    await this.syncing;
    await this.sync();
  }

  /** Writes last-used times and takes in what other nodes changed. Never rejects (a failure waits for the next one). */
  sync(): Promise<void> {
    this.syncing ??= (async () => {
      const used = [...this.used];
      this.used.clear();
      try {
        await this.store.touchKeys(used.map((e) => ({ id: e.row.id, last_used_at: e.row.last_used_at ?? 0 })));
        for (const r of await this.store.listKeys()) this.merge(r);
      } catch (e) {
        for (const u of used) this.used.add(u);
        this.log(`strato platform: could not sync API keys with the store (${(e as Error).message}); retrying in ${KEY_SYNC_MS / 1000} s`);
      }
    })().finally(() => (this.syncing = null));
    return this.syncing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.syncing;
    await this.sync();
  }

  private active(name: string): Entry | undefined {
    for (const e of this.byId.values()) if (e.row.name === name && e.row.revoked_at === null) return e;
    return undefined;
  }

  /** Adds a key or takes in a stored change: revocation is final and the latest use wins, whatever the order. */
  private merge(r: KeyRow): void {
    const e = this.byId.get(r.id);
    if (!e) {
      const apps = JSON.parse(r.apps) as string[];
      const principal: Principal = { id: r.id, name: r.name, scope: r.scope as KeyScope, apps: r.scope === 'admin' || !apps.length ? null : new Set(apps) };
      const entry = { row: { ...r }, principal };
      this.byId.set(r.id, entry);
      this.byHash.set(r.hash, entry);
      return;
    }
    if (e.row.revoked_at === null && r.revoked_at !== null) {
      e.row.revoked_at = r.revoked_at;
      e.row.revoked_by = r.revoked_by;
    }
    if ((r.last_used_at ?? 0) > (e.row.last_used_at ?? 0)) e.row.last_used_at = r.last_used_at;
  }

  private info(r: KeyRow): ApiKeyInfo {
    const nameOf = (id: string | null) => (id === null ? null : id === PLATFORM_KEY_ID ? PLATFORM_KEY_ID : (this.byId.get(id)?.row.name ?? id));
    return {
      id: r.id,
      name: r.name,
      scope: r.scope as KeyScope,
      apps: JSON.parse(r.apps) as string[],
      prefix: r.prefix,
      createdAt: r.created_at,
      createdBy: nameOf(r.created_by),
      lastUsedAt: r.last_used_at,
      revokedAt: r.revoked_at,
      revokedBy: nameOf(r.revoked_by),
      builtin: false,
    };
  }
}

const target = (r: KeyRow): AuditTarget => ({ type: 'key', id: r.id, name: r.name, app: null });
