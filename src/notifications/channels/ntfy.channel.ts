import { NotificationChannel, OutgoingNotification, postJson } from './notification-channel.port';

/** ntfy's priorities: what needs an answer is high (4), the rest default (3). */
const PRIORITY: Readonly<Record<string, number>> = { permission: 4, confirmation: 4, question: 4, brain_question: 4 };

/**
 * ntfy (any server, one topic): published as JSON to the server's root, with a priority, a click URL (the card) and
 * action buttons; Allow/Deny and Confirm/Refuse are `http` actions ntfy's app POSTs itself (ntfy shows three at most).
 * Markdown stays off, so the text is shown as it is.
 */
export class NtfyChannel implements NotificationChannel {
  readonly name = 'ntfy' as const;

  constructor(
    private readonly server: string,
    private readonly topic: string,
    private readonly token: string | null,
  ) {}

  devices(): string[] {
    return ['ntfy'];
  }

  send(_device: string, n: OutgoingNotification): Promise<void> {
    return postJson(this.server, ntfyBody(this.topic, n), this.token ? { authorization: `Bearer ${this.token}` } : {});
  }
}

export function ntfyBody(topic: string, n: OutgoingNotification): Record<string, unknown> {
  return {
    topic,
    title: n.title,
    message: n.text,
    priority: PRIORITY[n.kind] ?? 3,
    tags: [n.kind],
    click: n.url,
    actions: [
      ...n.actions.map((a) => ({ action: 'http', label: a.label, url: a.url, method: a.method, clear: true })),
      { action: 'view', label: 'Open', url: n.url },
    ].slice(0, 3),
  };
}
