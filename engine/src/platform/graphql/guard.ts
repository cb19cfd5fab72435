// The scope checks of control-plane operations (the rules are auth.ts's): a key reads and changes only the apps it
// reaches, and only an admin key manages keys or reads the audit log. A refused change is written to the audit log
// (outcome `denied`) before it is answered with FORBIDDEN (HTTP 403).
import { mayChange, mayReadSecrets, maySee, refusal, type Principal } from '../auth';
import type { Clock } from '../clock';
import { deniedRow, type AuditTarget } from '../controlPlane/audit';
import { forbidden } from '../errors';
import type { AuditRow } from '../store/types';

export class Guard {
  constructor(
    readonly principal: Principal,
    private readonly clock: Clock,
    private readonly record: (row: AuditRow) => Promise<void>,
  ) {}

  canSee(app: string): boolean {
    return maySee(this.principal, app);
  }

  /** Reads of an app's records. */
  see(app: string): void {
    if (!this.canSee(app)) throw forbidden(refusal.see(this.principal, app));
  }

  /** Documents that may hold secrets (manifests): not for invoke keys. */
  secrets(what: string): void {
    if (!mayReadSecrets(this.principal)) throw forbidden(refusal.secret(this.principal, what));
  }

  /** `what` names the change for the refusal sentence: `delete app "shop"`. */
  async change(operation: string, target: AuditTarget & { app: string }, what: string): Promise<void> {
    if (!mayChange(this.principal, target.app)) await this.deny(operation, target, refusal.change(this.principal, target.app, what));
  }

  async admin(operation: string, target: AuditTarget, what: string): Promise<void> {
    if (this.principal.scope !== 'admin') await this.deny(operation, target, refusal.admin(this.principal, what));
  }

  /** Reads only an admin may make (the key list, the audit log): refused without an audit entry. */
  adminRead(what: string): void {
    if (this.principal.scope !== 'admin') throw forbidden(refusal.admin(this.principal, what));
  }

  private async deny(operation: string, target: AuditTarget, reason: string): Promise<never> {
    await this.record(deniedRow(this.principal, operation, target, this.clock.now(), reason));
    throw forbidden(reason);
  }
}
