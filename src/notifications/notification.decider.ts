import { Decision } from '../journal/command-handler';
import { JournalEvent } from '../journal/journal.port';
import { ActionOutcome, ChannelName, IssuedCapability, NotificationEvent, PushSubscriptionData, RefusalReason, RuleChanges } from './notification.events';

/**
 * The notifications' stream, pure: decide() judges a command against the state, evolve() folds an event (replay and
 * the command path alike). An action link's capability works once, before its expiry, for its own request only: every
 * use and every refusal is journaled with the device it was sent to.
 */

export interface Capability extends IssuedCapability {
  device: string;
  notification_id: string;
  used_at: number | null;
}

export interface NotificationsState {
  rules: RuleChanges;
  subscriptions: ReadonlyMap<string, PushSubscriptionData>;
  capabilities: ReadonlyMap<string, Capability>;
}

export const emptyNotificationsState = (): NotificationsState => ({ rules: {}, subscriptions: new Map(), capabilities: new Map() });

/** Capabilities expired this long are forgotten by the fold (deterministically: by the time of the event folded). */
export const CAPABILITY_MEMORY_MS = 24 * 3600_000;

export type NotificationCommand =
  | { type: 'change_rules'; changes: RuleChanges; now: number }
  | { type: 'subscribe'; subscription: PushSubscriptionData; now: number }
  | { type: 'unsubscribe'; id: string; reason: 'user' | 'gone'; now: number }
  | { type: 'record_sent'; notification_id: string; key: string; kind: string; channel: ChannelName; device: string; capabilities: IssuedCapability[]; now: number }
  /** `pending`: whether what the capability answers still waits (looked up by the service just before). */
  | { type: 'use'; capability_id: string; pending: boolean; now: number }
  | { type: 'record_outcome'; capability_id: string; outcome: ActionOutcome; now: number };

const REFUSALS: Readonly<Record<RefusalReason, { code: 'action_used' | 'action_expired' | 'action_stale'; message: (c: Capability) => string }>> = {
  used: { code: 'action_used', message: (c) => `this ${c.action} link was used already; it works once, and nothing was done now` },
  expired: { code: 'action_expired', message: (c) => `this ${c.action} link expired at ${new Date(c.expires_at).toISOString()}; nothing was done` },
  stale: { code: 'action_stale', message: (c) => `what this ${c.action} link answers no longer waits (it was answered, or another request waits now); nothing was done` },
};

export function statusOf(c: Capability, now: number, pending: boolean): 'usable' | RefusalReason {
  if (c.used_at !== null) return 'used';
  if (now >= c.expires_at) return 'expired';
  return pending ? 'usable' : 'stale';
}

export function decide(cmd: NotificationCommand, state: NotificationsState): Decision<NotificationEvent> {
  switch (cmd.type) {
    case 'change_rules':
      return { events: [{ type: 'notification.rules_changed', data: { changes: cmd.changes, at: cmd.now } }] };
    case 'subscribe': {
      const had = state.subscriptions.get(cmd.subscription.id);
      if (had && JSON.stringify(had) === JSON.stringify(cmd.subscription)) return { events: [] };
      return { events: [{ type: 'notification.subscription_added', data: { ...cmd.subscription, at: cmd.now } }] };
    }
    case 'unsubscribe':
      if (!state.subscriptions.has(cmd.id)) return { events: [], error: { code: 'subscription_not_found', message: `no push subscription ${cmd.id}` } };
      return { events: [{ type: 'notification.subscription_removed', data: { id: cmd.id, reason: cmd.reason, at: cmd.now } }] };
    case 'record_sent': {
      const { notification_id, key, kind, channel, device, capabilities } = cmd;
      return { events: [{ type: 'notification.sent', data: { notification_id, key, kind, channel, device, capabilities, at: cmd.now } }] };
    }
    case 'use': {
      const c = state.capabilities.get(cmd.capability_id);
      // A capability this service minted but no longer remembers expired long ago.
      if (!c) return { events: [], error: { code: 'action_expired', message: 'this action link expired; nothing was done' } };
      const status = statusOf(c, cmd.now, cmd.pending);
      if (status !== 'usable') {
        const refusal = REFUSALS[status];
        return {
          events: [{ type: 'notification.action_refused', data: { capability_id: c.id, reason: status, device: c.device, at: cmd.now } }],
          error: { code: refusal.code, message: refusal.message(c) },
        };
      }
      return { events: [{ type: 'notification.action_used', data: { capability_id: c.id, action: c.action, target: c.target, device: c.device, at: cmd.now } }] };
    }
    case 'record_outcome':
      return { events: [{ type: 'notification.action_done', data: { capability_id: cmd.capability_id, outcome: cmd.outcome, at: cmd.now } }] };
  }
}

export function evolve(state: NotificationsState, e: NotificationEvent): NotificationsState {
  switch (e.type) {
    case 'notification.rules_changed':
      return { ...state, rules: { ...state.rules, ...e.data.changes } };
    case 'notification.subscription_added': {
      const { at: _at, ...subscription } = e.data;
      return { ...state, subscriptions: new Map(state.subscriptions).set(subscription.id, subscription) };
    }
    case 'notification.subscription_removed': {
      const subscriptions = new Map(state.subscriptions);
      subscriptions.delete(e.data.id);
      return { ...state, subscriptions };
    }
    case 'notification.sent': {
      const capabilities = new Map([...state.capabilities].filter(([, c]) => c.expires_at + CAPABILITY_MEMORY_MS > e.data.at));
      for (const c of e.data.capabilities) capabilities.set(c.id, { ...c, device: e.data.device, notification_id: e.data.notification_id, used_at: null });
      return { ...state, capabilities };
    }
    case 'notification.action_used': {
      const c = state.capabilities.get(e.data.capability_id);
      return c ? { ...state, capabilities: new Map(state.capabilities).set(c.id, { ...c, used_at: e.data.at }) } : state;
    }
    case 'notification.action_refused':
    case 'notification.action_done':
      return state;
  }
}

export const evolveStored = (state: NotificationsState, e: JournalEvent): NotificationsState => evolve(state, e as unknown as NotificationEvent);
