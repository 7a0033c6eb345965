/**
 * The notifier settings and their checks. Pure: the loader checks the configuration with them at start (a malformed
 * URL or ntfy topic stops the start, naming the variable), and the notifications feature checks the dashboard's
 * changes with the same rules.
 */

/** What a notification can be about; each kind's events are in src/notifications/notification-triggers.ts. */
export const NOTIFICATION_KINDS = ['permission', 'question', 'blocked', 'stall', 'loop', 'budget', 'limit', 'brain_question', 'confirmation'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export type WebhookFormat = 'brainstem' | 'slack';

export interface NotifyConfig {
  /** The base URL links in notifications use (a reverse proxy or a Tailscale name); null: the service's own URL. */
  public_url: string | null;
  /** The kinds that notify; empty: all of them. */
  kinds: string[];
  /** "HH:MM-HH:MM" in the service's local time, during which nothing is sent; null: none. */
  quiet_hours: string | null;
  merge_window_s: number;
  /** More things waiting at once than this: one digest instead of one notification each. */
  digest_after: number;
  rate_per_minute: number;
  action_ttl_s: number;
  web_push: boolean;
  vapid_subject: string;
  ntfy_url: string | null;
  ntfy_topic: string | null;
  ntfy_token: string | null;
  webhook_url: string | null;
  webhook_format: WebhookFormat;
}

const HTTP_URL = /^https?:\/\/[^\s/?#]+[^\s]*$/;
const NTFY_TOPIC = /^[-_A-Za-z0-9]{1,64}$/;
const QUIET = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/;

/** Whether a text is an http(s) URL the fetch API takes. */
export function isHttpUrl(text: string): boolean {
  if (!HTTP_URL.test(text)) return false;
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

export const isNtfyTopic = (topic: string): boolean => NTFY_TOPIC.test(topic);

/** Quiet hours as minutes of the day [from, to); null when malformed. A range may wrap past midnight. */
export function quietRange(text: string): { from: number; to: number } | null {
  const m = QUIET.exec(text);
  if (!m) return null;
  const from = Number(m[1]) * 60 + Number(m[2]);
  const to = Number(m[3]) * 60 + Number(m[4]);
  return from === to ? null : { from, to };
}

/** Every problem of the notifier settings, each naming its variable; empty when they are sound. */
export function notifyProblems(n: NotifyConfig): string[] {
  const problems: string[] = [];
  const url = (env: string, value: string | null) => {
    if (value !== null && !isHttpUrl(value)) problems.push(`${env}: expected an http(s) URL, got ${JSON.stringify(value)}`);
  };
  url('BRAINSTEM_PUBLIC_URL', n.public_url);
  url('BRAINSTEM_NOTIFY_NTFY_URL', n.ntfy_url);
  url('BRAINSTEM_NOTIFY_WEBHOOK_URL', n.webhook_url);
  if (n.ntfy_topic !== null && !isNtfyTopic(n.ntfy_topic)) {
    problems.push(`BRAINSTEM_NOTIFY_NTFY_TOPIC: expected 1 to 64 letters, digits, - or _, got ${JSON.stringify(n.ntfy_topic)}`);
  }
  if ((n.ntfy_url === null) !== (n.ntfy_topic === null)) {
    problems.push(`${n.ntfy_url === null ? 'BRAINSTEM_NOTIFY_NTFY_URL' : 'BRAINSTEM_NOTIFY_NTFY_TOPIC'}: required with ${n.ntfy_url === null ? 'BRAINSTEM_NOTIFY_NTFY_TOPIC' : 'BRAINSTEM_NOTIFY_NTFY_URL'}`);
  }
  const unknown = n.kinds.filter((k) => !(NOTIFICATION_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0) problems.push(`BRAINSTEM_NOTIFY_KINDS: unknown kind ${unknown.map((k) => JSON.stringify(k)).join(', ')}; the kinds are ${NOTIFICATION_KINDS.join(', ')}`);
  if (n.quiet_hours !== null && quietRange(n.quiet_hours) === null) {
    problems.push(`BRAINSTEM_NOTIFY_QUIET_HOURS: expected HH:MM-HH:MM (two different times), got ${JSON.stringify(n.quiet_hours)}`);
  }
  if (!/^(mailto:\S+@\S+|https:\/\/\S+)$/.test(n.vapid_subject)) {
    problems.push(`BRAINSTEM_NOTIFY_VAPID_SUBJECT: expected a mailto: address or an https URL, got ${JSON.stringify(n.vapid_subject)}`);
  }
  return problems;
}
