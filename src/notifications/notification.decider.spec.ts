import { CAPABILITY_MEMORY_MS, NotificationCommand, NotificationsState, decide, emptyNotificationsState, evolve } from './notification.decider';
import { NotificationEvent } from './notification.events';

const T0 = Date.UTC(2025, 0, 6, 12, 0, 0);
const TTL = 15 * 60_000;
const target = { kind: 'permission' as const, session_id: 'cs_a', request_id: 'perm_1' };

function apply(state: NotificationsState, cmd: NotificationCommand): { state: NotificationsState; events: readonly NotificationEvent[]; error?: string } {
  const d = decide(cmd, state);
  return { state: d.events.reduce(evolve, state), events: d.events, error: d.error?.code };
}

function sent(at = T0): NotificationsState {
  return apply(emptyNotificationsState(), {
    type: 'record_sent',
    notification_id: 'nt_1',
    key: 'cs_a',
    kind: 'permission',
    channel: 'web_push',
    device: 'ps_phone',
    capabilities: [
      { id: 'ac_allow', action: 'allow', target, expires_at: at + TTL },
      { id: 'ac_deny', action: 'deny', target, expires_at: at + TTL },
    ],
    now: at,
  }).state;
}

describe('action capabilities', () => {
  it('given a capability sent to a device, when it is used while its request waits, then its use is journaled with that device', () => {
    const r = apply(sent(), { type: 'use', capability_id: 'ac_allow', pending: true, now: T0 + 1000 });
    expect(r.error).toBeUndefined();
    expect(r.events).toEqual([{ type: 'notification.action_used', data: { capability_id: 'ac_allow', action: 'allow', target, device: 'ps_phone', at: T0 + 1000 } }]);
    expect(r.state.capabilities.get('ac_allow')?.used_at).toBe(T0 + 1000);
  });

  it('when it is used a second time, then it is refused (action_used) and the refusal is journaled', () => {
    const once = apply(sent(), { type: 'use', capability_id: 'ac_allow', pending: true, now: T0 + 1000 }).state;
    const twice = apply(once, { type: 'use', capability_id: 'ac_allow', pending: true, now: T0 + 2000 });
    expect(twice.error).toBe('action_used');
    expect(twice.events).toEqual([{ type: 'notification.action_refused', data: { capability_id: 'ac_allow', reason: 'used', device: 'ps_phone', at: T0 + 2000 } }]);
  });

  it('when it is used at its expiry or later, then it is refused (action_expired), journaled', () => {
    const r = apply(sent(), { type: 'use', capability_id: 'ac_deny', pending: true, now: T0 + TTL });
    expect(r.error).toBe('action_expired');
    expect(r.events.map((e) => e.type)).toEqual(['notification.action_refused']);
    expect(r.state.capabilities.get('ac_deny')?.used_at).toBeNull();
  });

  it('when what it answers no longer waits (answered, or another request waits now), then it is refused (action_stale), journaled', () => {
    const r = apply(sent(), { type: 'use', capability_id: 'ac_allow', pending: false, now: T0 + 1000 });
    expect(r.error).toBe('action_stale');
    expect(r.events).toEqual([expect.objectContaining({ type: 'notification.action_refused', data: expect.objectContaining({ reason: 'stale' }) })]);
  });

  it('forgets capabilities a day past their expiry, and then refuses them as expired', () => {
    const later = T0 + TTL + CAPABILITY_MEMORY_MS + 1;
    const state = apply(sent(), { type: 'record_sent', notification_id: 'nt_2', key: 'cs_b', kind: 'question', channel: 'ntfy', device: 'ntfy', capabilities: [], now: later }).state;
    expect([...state.capabilities.keys()]).toEqual([]);
    expect(apply(state, { type: 'use', capability_id: 'ac_allow', pending: true, now: later }).error).toBe('action_expired');
  });
});

describe('push devices and rules', () => {
  const sub = { id: 'ps_1', endpoint: 'https://push.example/1', keys: { p256dh: 'p', auth: 'a' }, device: 'phone', origin: 'https://me.example' };

  it('journals a device once, and again only when it changes', () => {
    const first = apply(emptyNotificationsState(), { type: 'subscribe', subscription: sub, now: T0 });
    expect(first.events).toHaveLength(1);
    expect(apply(first.state, { type: 'subscribe', subscription: sub, now: T0 + 1 }).events).toEqual([]);
    expect(apply(first.state, { type: 'subscribe', subscription: { ...sub, keys: { p256dh: 'q', auth: 'a' } }, now: T0 + 1 }).events).toHaveLength(1);
  });

  it('removes a device, and refuses one it does not know', () => {
    const state = apply(emptyNotificationsState(), { type: 'subscribe', subscription: sub, now: T0 }).state;
    expect(apply(state, { type: 'unsubscribe', id: 'ps_1', reason: 'gone', now: T0 }).state.subscriptions.size).toBe(0);
    expect(apply(state, { type: 'unsubscribe', id: 'ps_2', reason: 'user', now: T0 }).error).toBe('subscription_not_found');
  });

  it('folds rule changes over each other', () => {
    let state = apply(emptyNotificationsState(), { type: 'change_rules', changes: { quiet_hours: '22:00-07:00', kinds: ['permission'] }, now: T0 }).state;
    state = apply(state, { type: 'change_rules', changes: { quiet_hours: null }, now: T0 }).state;
    expect(state.rules).toEqual({ quiet_hours: null, kinds: ['permission'] });
  });
});
