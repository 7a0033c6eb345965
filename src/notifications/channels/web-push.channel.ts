import { createHash } from 'node:crypto';
import webpush from 'web-push';
import { PushSubscriptionData } from '../notification.events';
import { ChannelError, NotificationChannel, OutgoingNotification, SEND_TIMEOUT_MS } from './notification-channel.port';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** What the service worker (web/src/sw.ts) shows: the same fields, as data it puts into a system notification. */
export interface PushPayload {
  id: string;
  kind: string;
  tag: string;
  title: string;
  text: string;
  url: string;
  actions: { action: string; label: string; url: string }[];
}

/** A push message may carry about 4 KB: the text is cut to fit. */
const PAYLOAD_BYTES = 3600;

export function pushPayload(n: OutgoingNotification): PushPayload {
  const payload: PushPayload = { id: n.id, kind: n.kind, tag: n.key, title: n.title, text: n.text, url: n.url, actions: n.actions.map((a) => ({ action: a.action, label: a.label, url: a.url })) };
  while (Buffer.byteLength(JSON.stringify(payload)) > PAYLOAD_BYTES && payload.text.length > 0) payload.text = `${payload.text.slice(0, Math.floor(payload.text.length * 0.8))}…`;
  return payload;
}

/** The Topic header: a later message with the same topic replaces one the push service has not delivered yet. */
const topicOf = (key: string): string => createHash('sha256').update(key).digest('base64url').slice(0, 32);

/** Web Push (the `web-push` library) to each subscribed device, signed with the service's VAPID keys. */
export class WebPushChannel implements NotificationChannel {
  readonly name = 'web_push' as const;

  constructor(
    private readonly subscriptions: () => ReadonlyMap<string, PushSubscriptionData>,
    private readonly keys: VapidKeys,
    private readonly subject: string,
  ) {}

  devices(): string[] {
    return [...this.subscriptions().keys()];
  }

  async send(device: string, n: OutgoingNotification): Promise<void> {
    const sub = this.subscriptions().get(device);
    if (!sub) throw new ChannelError(`push subscription ${device} is gone`, true);
    // The library encrypts the payload and signs the request (VAPID); fetch sends it, with the timeout every channel has.
    const request = webpush.generateRequestDetails({ endpoint: sub.endpoint, keys: sub.keys }, JSON.stringify(pushPayload(n)), {
      vapidDetails: { subject: this.subject, publicKey: this.keys.publicKey, privateKey: this.keys.privateKey },
      TTL: 3600,
      urgency: n.actions.length > 0 ? 'high' : 'normal',
      topic: topicOf(n.key),
    });
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name.toLowerCase() !== 'content-length').map(([k, v]) => [k, String(v)]));
    const origin = new URL(sub.endpoint).origin;
    let res: Response;
    try {
      res = await fetch(request.endpoint, { method: request.method, headers, body: request.body ? new Uint8Array(request.body) : undefined, signal: AbortSignal.timeout(SEND_TIMEOUT_MS) });
    } catch (e) {
      throw new ChannelError(`push to ${origin} failed: ${(e as Error).message}`);
    }
    await res.arrayBuffer().catch(() => undefined);
    // 404 and 410: the push service dropped the subscription; the device must subscribe again.
    if (!res.ok) throw new ChannelError(`push to ${origin} answered ${res.status}`, res.status === 404 || res.status === 410);
  }
}

export function generateVapidKeys(): VapidKeys {
  return webpush.generateVAPIDKeys();
}
