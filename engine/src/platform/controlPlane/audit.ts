// The audit log's entries: every control-plane change is stored with the key that made it (in the same transaction
// as the change, see store/types.ts), and so is a change a valid key asked for outside its scope (outcome `denied`).
import type { AuditEntry } from '../../protocol/controlPlane';
import type { Principal } from '../auth';
import type { AuditRow, BuildRow } from '../store/types';

export type TargetType = 'app' | 'environment' | 'build' | 'endpoint' | 'key' | 'volume';

export interface AuditTarget {
  type: TargetType;
  id: string | null;
  name: string | null;
  /** The app it belongs to, by name (null for keys). */
  app: string | null;
}

/** What `strato audit` reads when it gives no limit, and the most one call returns. */
export const AUDIT_DEFAULT_LIMIT = 50;
export const AUDIT_MAX_LIMIT = 10_000;

export function auditRow(by: Principal, operation: string, target: AuditTarget, at: number, detail?: Record<string, unknown>): AuditRow {
  return {
    at,
    key_id: by.id,
    key_name: by.name,
    operation,
    outcome: 'ok',
    app: target.app,
    target_type: target.type,
    target_id: target.id,
    target_name: target.name,
    detail: detail && Object.keys(detail).length ? JSON.stringify(detail) : null,
  };
}

export function deniedRow(by: Principal, operation: string, target: AuditTarget, at: number, reason: string): AuditRow {
  return { ...auditRow(by, operation, target, at, { reason }), outcome: 'denied' };
}

/** Which environment variables a save adds, changes and removes: names only, since values may be secrets. */
export function envChanges(before: Record<string, string>, after: Record<string, string>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const put = (k: string, name: string) => (out[k] ??= []).push(name);
  for (const [name, value] of Object.entries(after)) {
    if (!(name in before)) put('added', name);
    else if (before[name] !== value) put('changed', name);
  }
  for (const name of Object.keys(before)) if (!(name in after)) put('removed', name);
  return out;
}

/** A new build: its size, digest and the project its manifest names. */
export function buildDetail(b: BuildRow): Record<string, unknown> {
  let project: unknown;
  try {
    project = (JSON.parse(b.manifest) as { project_name?: unknown }).project_name;
  } catch {
    /* the manifest was checked before; nothing to add */
  }
  return { size: b.size, sha256: b.sha256, ...(typeof project === 'string' ? { project } : {}) };
}

export function auditEntry(r: AuditRow): AuditEntry {
  return {
    seq: Number(r.seq),
    at: Number(r.at),
    keyId: r.key_id,
    keyName: r.key_name,
    operation: r.operation,
    outcome: r.outcome,
    app: r.app,
    targetType: r.target_type,
    targetId: r.target_id,
    targetName: r.target_name,
    detail: r.detail,
  };
}
