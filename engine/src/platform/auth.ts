// Who a request is and what it may do. Accepted key forms (decisions.md): `Authorization: Bearer <key>` and the bare
// key as the whole header value. The scope rules of docs/security.md and their refusal sentences live here only.
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { KeyScope } from '../protocol/controlPlane';

/**
 * SHA-256 of a key: what is stored and compared; the key itself is never stored (a connection keeps the key it
 * presented last in memory, so that its next requests with that key are not hashed again: KeyRing). The one-shot
 * `crypto.hash` (Node 20.12) where there is one, as it costs half of a Hash object.
 */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'buffer') => Buffer }).hash;
export const keyDigest = (key: string): Buffer => (oneShot ? oneShot('sha256', key, 'buffer') : crypto.createHash('sha256').update(key, 'utf8').digest());

/** The key a request presents, or null when it has no usable Authorization header. */
export function presentedKey(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return null;
  const v = h.trim();
  if (!v) return null;
  const m = /^Bearer\s+(\S+)$/i.exec(v);
  if (m) return m[1];
  return /\s/.test(v) ? null : v;
}

/** The key a request was made with. */
export interface Principal {
  id: string;
  name: string;
  scope: KeyScope;
  /** The app names it reaches; null: every app. */
  apps: ReadonlySet<string> | null;
}

/** May this key call the endpoints (jobs API, load-balanced routes) of `app`? */
export function mayInvoke(p: Principal, app: string): boolean {
  return p.apps === null || p.apps.has(app);
}

/** May this key read the control plane's view of `app` (its environments, builds, endpoints)? */
export const maySee = mayInvoke;

/** May this key change `app` (create or delete it, its environments, builds and endpoints)? */
export function mayChange(p: Principal, app: string): boolean {
  return p.scope === 'admin' || (p.scope === 'deploy' && mayInvoke(p, app));
}

/** May this key read values that may hold secrets (environment variables, manifests)? Invoke keys call, nothing more. */
export function mayReadSecrets(p: Principal): boolean {
  return p.scope !== 'invoke';
}

export const UNAUTHORIZED_MESSAGE = 'missing or invalid API key: send "Authorization: Bearer <key>" with the key of this platform (STRATO_API_KEY)';

export function revokedMessage(name: string, revokedAt: number): string {
  return `the API key "${name}" was revoked at ${new Date(revokedAt).toISOString()}; ask an admin of this platform for a new key (strato keys create)`;
}

/** `key "alice" (deploy: shop, blog)` */
export function describeKey(p: Principal): string {
  return `key "${p.name}" (${p.scope}: ${p.apps === null ? 'every app' : [...p.apps].join(', ')})`;
}

/** 403 sentences: what the key is, what it asked for, and how to get the right key. */
export const refusal = {
  invoke: (p: Principal, app: string, endpointId: string) =>
    `the ${describeKey(p)} may not call endpoint ${endpointId} of app "${app}"; ask an admin for a key with access to it (strato keys create --scope invoke --app ${app})`,
  see: (p: Principal, app: string) =>
    `the ${describeKey(p)} may not read app "${app}"; ask an admin for a key with access to it (strato keys create --scope deploy --app ${app})`,
  /** `what` names the change and its target: `delete app "shop"`. */
  change: (p: Principal, app: string, what: string) =>
    `the ${describeKey(p)} may ${p.scope === 'invoke' ? 'only call endpoints, not' : 'not'} ${what}; ` +
    `ask an admin for a key with access to app "${app}" (strato keys create --scope deploy --app ${app})`,
  admin: (p: Principal, what: string) => `${what} needs an admin key; the ${describeKey(p)} is not one`,
  secret: (p: Principal, what: string) => `the ${describeKey(p)} may only call endpoints; reading ${what} needs a deploy or admin key`,
};
