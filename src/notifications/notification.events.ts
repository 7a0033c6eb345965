import { NotificationKind } from '../config/notify-config';
import { ActionTarget } from './notification-triggers';
import { ActionName } from './notification-text';

/** Journaled on the stream `notifications`: settings from the dashboard, push devices, what was sent with which actions, and every use of an action link. */

export const NOTIFICATIONS_STREAM = 'notifications';

/** The rules the dashboard may change (the notifiers' addresses and secrets stay in the configuration). */
export interface RuleChanges {
  kinds?: NotificationKind[];
  quiet_hours?: string | null;
  merge_window_s?: number;
  digest_after?: number;
  /** Channels turned off from the dashboard. */
  muted_channels?: ChannelName[];
}

export type ChannelName = 'web_push' | 'ntfy' | 'webhook';
export const CHANNEL_NAMES: readonly ChannelName[] = ['web_push', 'ntfy', 'webhook'];

export interface PushSubscriptionData {
  id: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** The device as the person named it (or its browser did). */
  device: string;
  origin: string;
}

export interface IssuedCapability {
  id: string;
  action: ActionName;
  target: ActionTarget;
  expires_at: number;
}

export type ActionOutcome = { ok: true } | { ok: false; code: string; message: string };
export type RefusalReason = 'used' | 'expired' | 'stale';

export interface NotificationEventMap {
  'notification.rules_changed': { changes: RuleChanges; at: number };
  'notification.subscription_added': PushSubscriptionData & { at: number };
  'notification.subscription_removed': { id: string; reason: 'user' | 'gone'; at: number };
  /** One notification to one device, with the capabilities its action links carry (ids only: the links are never journaled). */
  'notification.sent': { notification_id: string; key: string; kind: string; channel: ChannelName; device: string; capabilities: IssuedCapability[]; at: number };
  'notification.action_used': { capability_id: string; action: ActionName; target: ActionTarget; device: string; at: number };
  'notification.action_refused': { capability_id: string; reason: RefusalReason; device: string; at: number };
  'notification.action_done': { capability_id: string; outcome: ActionOutcome; at: number };
}

declare module '../bus/domain-event' {
  interface DomainEventMap extends NotificationEventMap {}
}

export type NotificationEvent = { [K in keyof NotificationEventMap]: { type: K; data: NotificationEventMap[K] } }[keyof NotificationEventMap];
