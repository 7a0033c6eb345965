import { Logger } from '@nestjs/common';
import { Observable, Subscription } from 'rxjs';
import { DeadlineTimer } from '../common/deadline-timer';
import { NOTIFICATION_KINDS, NotificationKind, NotifyConfig, quietRange } from '../config/notify-config';
import { ChannelHealth, OutboxState, emptyOutbox, enqueue, healthOf, settled, take } from './channel-outbox';
import { ChannelError, NotificationChannel, OutgoingNotification } from './channels/notification-channel.port';
import { IssuedCapability, ChannelName, CHANNEL_NAMES, RuleChanges } from './notification.events';
import { NotifierState, Notice, RuleSettings, emptyNotifierState, nextWake, onSignal, onTick } from './notification-rules';
import { compose } from './notification-text';
import { BusEvent, signalsOf } from './notification-triggers';
import { NotificationsStore } from './notifications.store';
import { NotifierPorts } from './notifier.ports';

export interface ChannelView extends ChannelHealth {
  name: ChannelName;
  configured: boolean;
  muted: boolean;
  devices: number;
}

/** The rules in force: the configuration, with what the dashboard changed over it. */
export interface EffectiveRules {
  kinds: NotificationKind[];
  quiet_hours: string | null;
  merge_window_s: number;
  digest_after: number;
  muted_channels: ChannelName[];
}

interface Box {
  channel: NotificationChannel;
  state: OutboxState<Notice>;
  timer: DeadlineTimer;
}

/**
 * The notifier: follows the bus, runs the rules (notification-rules.ts) and hands what they send to each channel's
 * outbox (channel-outbox.ts), which sends it with a rate limit and retries a failing channel with backoff. Everything
 * it does is off the bus's path: a slow or failing channel never holds up supervision or a command.
 */
export class NotificationsService {
  private rules: NotifierState = emptyNotifierState();
  private readonly rulesTimer: DeadlineTimer;
  private readonly boxes = new Map<ChannelName, Box>();
  private sub: Subscription | null = null;
  private readonly logger = new Logger('notifications');

  constructor(
    private readonly store: NotificationsStore,
    private readonly events$: Observable<BusEvent>,
    channels: readonly NotificationChannel[],
    private readonly config: NotifyConfig,
    private readonly ports: NotifierPorts,
  ) {
    this.rulesTimer = new DeadlineTimer(ports.now, () => this.tick());
    for (const channel of channels) {
      const box: Box = { channel, state: emptyOutbox<Notice>(), timer: new DeadlineTimer(ports.now, () => this.pump(box)) };
      this.boxes.set(channel.name, box);
    }
  }

  start(): void {
    this.sub = this.events$.subscribe((e) => {
      try {
        this.onEvent(e);
      } catch (err) {
        this.logger.error(`notifying of ${e.type} (seq ${e.seq}) failed: ${(err as Error).stack ?? String(err)}`);
      }
    });
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.rulesTimer.clear();
    for (const box of this.boxes.values()) box.timer.clear();
  }

  effectiveRules(): EffectiveRules {
    const changed = this.store.state.rules;
    return {
      kinds: changed.kinds ?? (this.config.kinds.length > 0 ? (this.config.kinds as NotificationKind[]) : [...NOTIFICATION_KINDS]),
      quiet_hours: changed.quiet_hours !== undefined ? changed.quiet_hours : this.config.quiet_hours,
      merge_window_s: changed.merge_window_s ?? this.config.merge_window_s,
      digest_after: changed.digest_after ?? this.config.digest_after,
      muted_channels: changed.muted_channels ?? [],
    };
  }

  async changeRules(changes: RuleChanges): Promise<EffectiveRules> {
    await this.store.command({ type: 'change_rules', changes, now: this.ports.now() });
    this.armRules();
    return this.effectiveRules();
  }

  channels(): ChannelView[] {
    const muted = this.effectiveRules().muted_channels;
    return CHANNEL_NAMES.map((name) => {
      const box = this.boxes.get(name);
      return {
        name,
        configured: box !== undefined,
        muted: muted.includes(name),
        devices: box ? box.channel.devices().length : 0,
        ...healthOf(box?.state ?? emptyOutbox()),
      };
    });
  }

  private settings(): RuleSettings {
    const r = this.effectiveRules();
    return { kinds: new Set(r.kinds), quiet: r.quiet_hours === null ? null : quietRange(r.quiet_hours), merge_window_ms: r.merge_window_s * 1000, digest_after: r.digest_after };
  }

  private clock(): { now: number; minute: number } {
    const now = this.ports.now();
    return { now, minute: this.ports.minuteOfDay(now) };
  }

  private onEvent(e: BusEvent): void {
    const signals = signalsOf(e);
    if (signals.length === 0) return;
    const settings = this.settings();
    for (const signal of signals) {
      const handled = signal.type === 'wait' && signal.item.session_id !== null && this.ports.handledByBrain(signal.item.session_id);
      const step = onSignal(this.rules, signal, this.clock(), settings, handled);
      this.rules = step.state;
      this.dispatch(step.notices);
    }
    this.armRules();
  }

  private tick(): void {
    const step = onTick(this.rules, this.clock(), this.settings());
    this.rules = step.state;
    this.dispatch(step.notices);
    this.armRules();
  }

  private armRules(): void {
    this.rulesTimer.set(nextWake(this.rules, this.clock(), this.settings()));
  }

  private dispatch(notices: readonly Notice[]): void {
    if (notices.length === 0 || !this.ports.isLeader()) return;
    const muted = this.effectiveRules().muted_channels;
    for (const box of this.boxes.values()) {
      if (muted.includes(box.channel.name)) continue;
      for (const notice of notices) box.state = enqueue(box.state, notice);
      this.pump(box);
    }
  }

  private pump(box: Box): void {
    const now = this.ports.now();
    const next = take(box.state, now, this.config.rate_per_minute);
    box.state = next.state;
    if (!('send' in next)) {
      box.timer.set(next.wake_at);
      return;
    }
    const notice = next.send;
    void this.deliver(box.channel, notice).then(
      () => (box.state = settled(box.state, notice, this.ports.now(), { ok: true })),
      (e: unknown) => {
        const error = e instanceof Error ? e.message : String(e);
        this.logger.warn(`${box.channel.name}: ${error}`);
        box.state = settled(box.state, notice, this.ports.now(), { ok: false, error, retry: true });
      },
    ).finally(() => this.pump(box));
  }

  /** To each device of the channel: its own capabilities, journaled with it before the notification leaves. */
  private async deliver(channel: NotificationChannel, notice: Notice): Promise<void> {
    const composed = compose(notice, (id) => this.ports.sessionInfo(id));
    const base = this.ports.publicUrl().replace(/\/+$/, '');
    const failures: string[] = [];
    for (const device of channel.devices()) {
      const now = this.ports.now();
      const capabilities: IssuedCapability[] = composed.actions.map((a) => ({ id: `ac_${this.ports.newId()}`, action: a.action, target: a.target, expires_at: now + this.config.action_ttl_s * 1000 }));
      const notification_id = `nt_${this.ports.newId()}`;
      await this.store.command({ type: 'record_sent', notification_id, key: notice.key, kind: composed.kind, channel: channel.name, device, capabilities, now }, 'brainstem');
      const outgoing: OutgoingNotification = {
        id: notification_id,
        kind: composed.kind,
        key: notice.key,
        session: composed.session,
        title: composed.title,
        text: composed.text,
        url: `${base}/${composed.card}`,
        actions: capabilities.map((c, i) => {
          const token = this.ports.actionToken(c.id);
          return { action: c.action, label: composed.actions[i].label, url: `${base}/api/v1/notifications/actions/${token}`, method: 'POST' as const, page_url: `${base}/action.html#${token}` };
        }),
      };
      try {
        await channel.send(device, outgoing);
      } catch (e) {
        if (e instanceof ChannelError && e.gone) await this.store.command({ type: 'unsubscribe', id: device, reason: 'gone', now: this.ports.now() }, 'brainstem').catch(() => undefined);
        else failures.push(e instanceof Error ? e.message : String(e));
      }
    }
    if (failures.length > 0) throw new Error(failures.join('; '));
  }
}
