import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useAction } from './action';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { deviceSubscription, install, installPrompt, installed, pushSupported, registration, removeDevice, subscribeDevice } from './push';
import { ChannelView, EffectiveRules, NotificationKind, PushDeviceView } from './types';

const KIND_LABELS: Record<NotificationKind, string> = {
  permission: 'Permission requests',
  question: "Workers' questions",
  blocked: 'Blocked workers',
  stall: 'Stalls',
  loop: 'Loops',
  budget: 'Budgets',
  limit: 'Workers paused at a usage limit',
  brain_question: 'The main brain asking you',
  confirmation: 'Confirmations of the human gate',
};
const CHANNEL_LABELS: Record<ChannelView['name'], string> = { web_push: 'Web Push', ntfy: 'ntfy', webhook: 'Webhook' };

/** This browser: install the dashboard as an app, and have it notified (Web Push), or not. */
function ThisDevice({ devices, reload }: { devices: PushDeviceView[]; reload: () => Promise<void> }) {
  const { busy, error, attempt } = useAction();
  const mine = devices.find((d) => d.endpoint === deviceSubscription.value?.endpoint) ?? null;
  return (
    <div class="card">
      <h3>This device</h3>
      <p class="muted">{registration.value ? 'The dashboard can run as an app and receive notifications while it is closed.' : 'The service worker is not registered in this browser.'}</p>
      <div class="actions">
        {installed.value ? <span>Installed as an app.</span> : installPrompt.value ? (
          <button type="button" onClick={() => void attempt(install)}>
            Install the app
          </button>
        ) : (
          <span class="muted">To install it, use the browser’s menu (Install, or Add to Home Screen).</span>
        )}
        {!pushSupported ? (
          <span class="muted">This browser has no Web Push.</span>
        ) : mine ? (
          <button type="button" disabled={busy.value} onClick={() => void attempt(async () => { await removeDevice(mine.id, mine.endpoint); await reload(); })}>
            Stop notifying this device
          </button>
        ) : (
          <button type="button" class="primary" disabled={busy.value || registration.value === null} onClick={() => void attempt(async () => { await subscribeDevice(); await reload(); })}>
            Notify this device
          </button>
        )}
      </div>
      <ErrorAlert message={error.value} />
    </div>
  );
}

function Channels({ channels, devices, reload }: { channels: ChannelView[]; devices: PushDeviceView[]; reload: () => Promise<void> }) {
  const { error, attempt } = useAction();
  return (
    <div class="card">
      <h3>Channels</h3>
      <ul class="channels">
        {channels.map((c) => (
          <li key={c.name} class={c.state === 'failing' ? 'channel failing' : 'channel'}>
            <strong>{CHANNEL_LABELS[c.name]}</strong>{' '}
            {!c.configured ? (
              <span class="muted">not configured</span>
            ) : c.state === 'failing' ? (
              <span class="error" role="status">
                failing ({c.failures} in a row): {c.last_error}; next try {c.retry_at ? new Date(c.retry_at).toLocaleTimeString() : 'soon'}
              </span>
            ) : (
              <span>{c.muted ? 'muted' : c.last_sent_at ? `ok, last sent ${new Date(c.last_sent_at).toLocaleString()}` : 'ok'}</span>
            )}
            {c.name === 'web_push' && c.configured ? <span class="muted"> · {c.devices} device(s)</span> : null}
          </li>
        ))}
      </ul>
      {devices.length > 0 ? (
        <ul class="devices">
          {devices.map((d) => (
            <li key={d.id}>
              {d.device} <span class="muted">({new URL(d.push_service).host})</span>{' '}
              <button type="button" onClick={() => void attempt(async () => { await removeDevice(d.id, d.endpoint); await reload(); })}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <ErrorAlert message={error.value} />
    </div>
  );
}

/** The rules: which kinds notify, quiet hours, the merge window, the digest and muted channels (journaled on change). */
function Rules({ rules, channels, onSaved }: { rules: EffectiveRules; channels: ChannelView[]; onSaved: (r: EffectiveRules) => void }) {
  const kinds = useSignal<NotificationKind[]>(rules.kinds);
  const quiet = useSignal(rules.quiet_hours ?? '');
  const merge = useSignal(String(rules.merge_window_s));
  const digest = useSignal(String(rules.digest_after));
  const muted = useSignal<ChannelView['name'][]>(rules.muted_channels);
  const { busy, error, attempt } = useAction();
  const toggle = <T,>(list: T[], item: T): T[] => (list.includes(item) ? list.filter((x) => x !== item) : [...list, item]);
  const save = (e: Event) => {
    e.preventDefault();
    void attempt(async () => {
      const body = { kinds: kinds.value, quiet_hours: quiet.value.trim() === '' ? null : quiet.value.trim(), merge_window_s: Number(merge.value), digest_after: Number(digest.value), muted_channels: muted.value };
      onSaved(await api<EffectiveRules>('/notifications/rules', { method: 'PATCH', body }));
    });
  };
  return (
    <form class="card" onSubmit={save}>
      <h3>Rules</h3>
      <fieldset class="rows">
        <legend>Notify me of</legend>
        {(Object.keys(KIND_LABELS) as NotificationKind[]).map((k) => (
          <label key={k} class="check">
            <input type="checkbox" checked={kinds.value.includes(k)} onChange={() => (kinds.value = toggle(kinds.value, k))} /> {KIND_LABELS[k]}
          </label>
        ))}
      </fieldset>
      <div class="fields">
        <label>
          Quiet hours (HH:MM-HH:MM)
          <input value={quiet.value} placeholder="22:00-07:00" onInput={(e) => (quiet.value = e.currentTarget.value)} />
        </label>
        <label>
          Merge a session’s notifications within (s)
          <input type="number" min={0} max={86400} value={merge.value} onInput={(e) => (merge.value = e.currentTarget.value)} />
        </label>
        <label>
          One digest when more sessions wait than
          <input type="number" min={1} max={1000} value={digest.value} onInput={(e) => (digest.value = e.currentTarget.value)} />
        </label>
      </div>
      <fieldset class="rows">
        <legend>Muted channels</legend>
        {channels.filter((c) => c.configured).map((c) => (
          <label key={c.name} class="check">
            <input type="checkbox" checked={muted.value.includes(c.name)} onChange={() => (muted.value = toggle(muted.value, c.name))} /> {CHANNEL_LABELS[c.name]}
          </label>
        ))}
      </fieldset>
      <p class="muted">Where ntfy and the webhook send is set in the service’s configuration (BRAINSTEM_NOTIFY_*): their addresses are secrets.</p>
      <button type="submit" class="primary" disabled={busy.value}>
        Save the rules
      </button>
      <ErrorAlert message={error.value} />
    </form>
  );
}

export function NotificationsView() {
  const rules = useSignal<EffectiveRules | null>(null);
  const channels = useSignal<ChannelView[]>([]);
  const devices = useSignal<PushDeviceView[]>([]);
  const { error, attempt } = useAction();
  const reload = async (): Promise<void> => {
    const [r, c, d] = await Promise.all([
      api<EffectiveRules>('/notifications/rules'),
      api<{ channels: ChannelView[] }>('/notifications/channels'),
      api<{ devices: PushDeviceView[] }>('/notifications/push/subscriptions'),
    ]);
    rules.value = r;
    channels.value = c.channels;
    devices.value = d.devices;
  };
  useEffect(() => {
    void attempt(reload);
    const every = setInterval(() => void reload().catch(() => undefined), 10_000);
    return () => clearInterval(every);
  }, []);
  return (
    <section aria-labelledby="notifications-title" class="notifications">
      <h2 id="notifications-title">Notifications</h2>
      <ErrorAlert message={error.value} />
      <ThisDevice devices={devices.value} reload={reload} />
      <Channels channels={channels.value} devices={devices.value} reload={reload} />
      {rules.value ? <Rules rules={rules.value} channels={channels.value} onSaved={(r) => (rules.value = r)} /> : null}
    </section>
  );
}
