import { WebhookFormat } from '../../config/notify-config';
import { NotificationChannel, OutgoingNotification, postJson } from './notification-channel.port';

/**
 * A generic webhook: each notification is POSTed as JSON, `{kind, session: {id, alias, title, runtime}, text, url,
 * actions: [{label, url, method}]}` (and its title and key), or in the shape of a Slack incoming webhook.
 */
export class WebhookChannel implements NotificationChannel {
  readonly name = 'webhook' as const;

  constructor(
    private readonly url: string,
    private readonly format: WebhookFormat,
  ) {}

  devices(): string[] {
    return ['webhook'];
  }

  send(_device: string, n: OutgoingNotification): Promise<void> {
    return postJson(this.url, this.format === 'slack' ? slackBody(n) : brainstemBody(n));
  }
}

export function brainstemBody(n: OutgoingNotification): Record<string, unknown> {
  return {
    kind: n.kind,
    session: n.session,
    title: n.title,
    text: n.text,
    url: n.url,
    key: n.key,
    actions: [...n.actions.map((a) => ({ label: a.label, url: a.url, method: a.method })), { label: 'Open', url: n.url, method: 'GET' }],
  };
}

/** Slack reads `&`, `<` and `>` in text as markup: escaped, what a worker wrote stays text. */
const slackText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Slack's buttons open a browser, so an action's button opens the page that asks before it POSTs. */
export function slackBody(n: OutgoingNotification): Record<string, unknown> {
  const button = (label: string, url: string) => ({ type: 'button', text: { type: 'plain_text', text: label }, url });
  return {
    text: slackText(`${n.title}\n${n.text}`),
    blocks: [
      { type: 'section', text: { type: 'plain_text', text: n.title } },
      { type: 'section', text: { type: 'plain_text', text: n.text } },
      { type: 'actions', elements: [...n.actions.map((a) => button(a.label, a.page_url)), button('Open', n.url)] },
    ],
  };
}
