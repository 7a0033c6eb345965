import { Subject } from 'rxjs';
import { EventJournal } from '../../src/journal/event-journal';
import { MemoryStorage } from '../../src/journal/memory.storage';
import { NotifyConfig } from '../../src/config/notify-config';
import { NotificationChannel, OutgoingNotification } from '../../src/notifications/channels/notification-channel.port';
import { BusEvent } from '../../src/notifications/notification-triggers';
import { NotificationsService } from '../../src/notifications/notifications.service';
import { NotificationsStore } from '../../src/notifications/notifications.store';

const T0 = Date.UTC(2025, 0, 6, 12, 0, 0);

const config: NotifyConfig = {
  public_url: 'https://me.example',
  kinds: [],
  quiet_hours: null,
  merge_window_s: 60,
  digest_after: 5,
  rate_per_minute: 10,
  action_ttl_s: 900,
  web_push: false,
  vapid_subject: 'mailto:me@example.test',
  ntfy_url: null,
  ntfy_topic: null,
  ntfy_token: null,
  webhook_url: null,
  webhook_format: 'brainstem',
};

/** A channel that keeps what it is sent: the adapter end of the port, standing where the network would be. */
class Kept implements NotificationChannel {
  readonly name = 'webhook' as const;
  readonly sent: OutgoingNotification[] = [];
  devices(): string[] {
    return ['webhook'];
  }
  async send(_device: string, n: OutgoingNotification): Promise<void> {
    this.sent.push(n);
  }
}

/**
 * The merge rule through the notifier itself (the rules, the outbox, the journaled sends), in virtual time: a burst from
 * one session is one notification, updated once.
 */
describe('the notifier merges a burst (virtual time)', () => {
  let journal: EventJournal;
  let store: NotificationsStore;
  let service: NotificationsService;
  const events = new Subject<BusEvent>();
  const channel = new Kept();

  beforeEach(async () => {
    // Journal appends resolve through promises and setImmediate, which stay real; the clock and the timers are virtual.
    jest.useFakeTimers({ now: T0, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    journal = await EventJournal.open(new MemoryStorage());
    store = new NotificationsStore(journal);
    await store.start();
    let n = 0;
    service = new NotificationsService(store, events, [channel], config, {
      sessionInfo: (id) => ({ id, alias: 'w1', title: 'Busy worker', runtime: 'command' }),
      handledByBrain: () => false,
      isLeader: () => true,
      publicUrl: () => config.public_url as string,
      actionToken: (id) => `bsa_${id}.mac`,
      now: () => Date.now(),
      minuteOfDay: (ms) => new Date(ms).getUTCHours() * 60 + new Date(ms).getUTCMinutes(),
      newId: () => `id${++n}`,
    });
    service.start();
  });

  afterEach(async () => {
    service.stop();
    store.stop();
    await journal.close();
    jest.useRealTimers();
  });

  it('given 20 triggers from one session in 10 s, then at most 2 notifications, the second an update of the first', async () => {
    for (let i = 0; i < 20; i++) {
      events.next({ type: 'session.permission_requested', stream: 'session-cs_busy', seq: i + 1, at: new Date(Date.now()).toISOString(), data: { request_id: `perm_${i}`, tool: 'Bash', input: { command: `step ${i}` } } });
      await jest.advanceTimersByTimeAsync(500);
    }
    await jest.advanceTimersByTimeAsync(5 * 60_000);

    expect(channel.sent.length).toBeLessThanOrEqual(2);
    expect(channel.sent.map((s) => [s.key, s.title])).toEqual([
      ['cs_busy', 'w1 wants to use Bash'],
      ['cs_busy', 'w1: 20 things wait on you'],
    ]);
    // Its actions answer the oldest request, the one the session shows first
    expect(channel.sent[1].actions.map((a) => a.label)).toEqual(['Allow', 'Deny']);
    const sent = (await journal.readStream('notifications')).filter((e) => e.type === 'notification.sent');
    expect(sent.map((e) => (e.data as { capabilities: Array<{ target: { request_id: string } }> }).capabilities.map((c) => c.target.request_id))).toEqual([
      ['perm_0', 'perm_0'],
      ['perm_0', 'perm_0'],
    ]);
  });
});
