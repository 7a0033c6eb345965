import { NotificationKind } from '../../config/notify-config';
import { ChannelName } from '../notification.events';
import { SessionInfo } from '../notification-text';

/** A link a notification offers: an action (POSTed: it acts once) or Open (a page to look at). */
export interface OutgoingAction {
  /** allow, deny, confirm, refuse, or open. */
  action: string;
  label: string;
  url: string;
  method: 'POST' | 'GET';
  /** For a link opened in a browser (a chat's button): a page that asks before it POSTs. */
  page_url: string;
}

/** One notification for one device, as every channel sends it (each in its own shape). */
export interface OutgoingNotification {
  id: string;
  kind: NotificationKind | 'digest';
  /** Updates of one notification share it: a channel that can replace one (Web Push's tag) does. */
  key: string;
  session: SessionInfo | null;
  title: string;
  text: string;
  /** The card in the dashboard. */
  url: string;
  actions: OutgoingAction[];
}

/** Why a send failed; `gone`: the device is gone for good (a push subscription the push service dropped). */
export class ChannelError extends Error {
  constructor(
    message: string,
    readonly gone = false,
  ) {
    super(message);
    this.name = 'ChannelError';
  }
}

/** Where notifications go: Web Push, ntfy, a webhook. A send that fails throws a ChannelError. */
export interface NotificationChannel {
  readonly name: ChannelName;
  /** Whom it sends to: one entry per device (Web Push: each subscription), or its own name. */
  devices(): string[];
  send(device: string, notification: OutgoingNotification): Promise<void>;
}

/** How long a channel's HTTP call may take. */
export const SEND_TIMEOUT_MS = 10_000;

/** A POST of JSON that must answer 2xx; anything else is a ChannelError naming the status. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(SEND_TIMEOUT_MS) });
  } catch (e) {
    throw new ChannelError(`POST ${new URL(url).origin} failed: ${(e as Error).message}`);
  }
  await res.arrayBuffer().catch(() => undefined);
  if (!res.ok) throw new ChannelError(`POST ${new URL(url).origin} answered ${res.status}`);
}
