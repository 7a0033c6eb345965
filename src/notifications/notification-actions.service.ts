import { DomainError } from '../common/domain-error';
import { Capability, statusOf } from './notification.decider';
import { ActionOutcome } from './notification.events';
import { ACTION_LABELS, ActionName, SessionInfo } from './notification-text';
import { ActionTarget } from './notification-triggers';
import { NotificationsStore } from './notifications.store';
import { ActionPorts, NotifierPorts } from './notifier.ports';

/** What an action link is, for the page that asks before it acts (no text a worker wrote: ids, alias, the action). */
export interface ActionView {
  action: ActionName;
  label: string;
  target: ActionTarget;
  session: SessionInfo | null;
  expires_at: string;
  status: 'usable' | 'used' | 'expired' | 'stale';
}

export interface ActionResult {
  action: ActionName;
  target: ActionTarget;
  done: true;
}

/**
 * What an action link does, for its capability alone: Allow or Deny its permission request, Confirm or Refuse its
 * confirmation, once, before it expires, and only while that very request still waits. Its use is journaled before
 * it acts (so two uses cannot both act), refusals are journaled, and so is what the action answered. It acts through
 * the same calls as the dashboard's buttons: a profile's deny still wins over an Allow.
 */
export class NotificationActionsService {
  constructor(
    private readonly store: NotificationsStore,
    private readonly actions: ActionPorts,
    private readonly ports: Pick<NotifierPorts, 'now' | 'sessionInfo'>,
  ) {}

  describe(capabilityId: string): ActionView {
    const c = this.capability(capabilityId);
    const session = c.target.kind === 'permission' ? this.ports.sessionInfo(c.target.session_id) : null;
    return {
      action: c.action,
      label: ACTION_LABELS[c.action],
      target: c.target,
      session,
      expires_at: new Date(c.expires_at).toISOString(),
      status: statusOf(c, this.ports.now(), this.pending(c.target)),
    };
  }

  async use(capabilityId: string): Promise<ActionResult> {
    const known = this.store.state.capabilities.get(capabilityId);
    const pending = known ? this.pending(known.target) : false;
    await this.store.command({ type: 'use', capability_id: capabilityId, pending, now: this.ports.now() }, `action:${known?.device ?? 'unknown'}`);
    const c = this.capability(capabilityId);
    let outcome: ActionOutcome = { ok: true };
    let failure: unknown = null;
    try {
      await this.act(c);
    } catch (e) {
      failure = e;
      outcome = e instanceof DomainError ? { ok: false, code: e.code, message: e.message } : { ok: false, code: 'internal_error', message: e instanceof Error ? e.message : String(e) };
    }
    await this.store.command({ type: 'record_outcome', capability_id: c.id, outcome, now: this.ports.now() }, `action:${c.device}`);
    if (failure !== null) throw failure;
    return { action: c.action, target: c.target, done: true };
  }

  private act(c: Capability): Promise<unknown> {
    const t = c.target;
    if (t.kind === 'permission') {
      return this.actions.resolvePermission(t.session_id, c.action === 'allow' ? 'allow' : 'deny', c.action === 'deny' ? 'denied from a notification' : null, t.request_id);
    }
    return c.action === 'confirm' ? this.actions.confirm(t.confirmation_id) : this.actions.refuse(t.confirmation_id, 'refused from a notification');
  }

  private pending(t: ActionTarget): boolean {
    return t.kind === 'permission' ? this.actions.permissionPending(t.session_id, t.request_id) : this.actions.confirmationPending(t.confirmation_id);
  }

  private capability(id: string): Capability {
    const c = this.store.state.capabilities.get(id);
    if (!c) throw new DomainError('action_expired', 'this action link expired; nothing was done');
    return c;
  }
}
