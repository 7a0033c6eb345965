import { createHash } from 'node:crypto';
import { DomainError } from '../common/domain-error';
import { isLoopbackHost } from '../config/config.loader';
import { PushSubscriptionData } from './notification.events';
import { PushSubscriptionDto } from './notifications.dto';
import { NotificationsStore } from './notifications.store';

/** A device as listed: its endpoint lets a page tell which entry is its own. */
export type PushDeviceView = Pick<PushSubscriptionData, 'id' | 'device' | 'origin' | 'endpoint'> & { push_service: string };

/** A device's id: the same device subscribing again (a new key, a renewed endpoint) is one device. */
export const deviceIdOf = (endpoint: string): string => `ps_${createHash('sha256').update(endpoint).digest('base64url').slice(0, 16)}`;

function decodedLength(base64url: string): number {
  return Buffer.from(base64url, 'base64url').length;
}

/**
 * The devices Web Push reaches, one per browser that subscribed from the dashboard, journaled. A subscription must come
 * from a page: the request carries the Origin of an allowed host (the authentication hook refuses any other); one with
 * none (not a browser) is refused too.
 */
export class PushDevicesService {
  constructor(
    private readonly store: NotificationsStore,
    private readonly vapidPublicKey: string,
    private readonly now: () => number,
  ) {}

  publicKey(): { public_key: string } {
    return { public_key: this.vapidPublicKey };
  }

  list(): { devices: PushDeviceView[] } {
    return { devices: [...this.store.state.subscriptions.values()].map(view) };
  }

  async subscribe(dto: PushSubscriptionDto, origin: string | undefined): Promise<PushDeviceView> {
    if (origin === undefined) throw new DomainError('origin_not_allowed', 'a push subscription comes from the dashboard in a browser: the request must carry its Origin');
    const problem = endpointProblem(dto.endpoint);
    if (problem) throw new DomainError('invalid_input', `endpoint: ${problem}`);
    if (decodedLength(dto.keys.p256dh) !== 65) throw new DomainError('invalid_input', 'keys.p256dh: expected a P-256 public key (65 bytes, base64url)');
    if (decodedLength(dto.keys.auth) !== 16) throw new DomainError('invalid_input', 'keys.auth: expected 16 bytes, base64url');
    const subscription: PushSubscriptionData = { id: deviceIdOf(dto.endpoint), endpoint: dto.endpoint, keys: { p256dh: dto.keys.p256dh, auth: dto.keys.auth }, device: dto.device ?? 'a browser', origin };
    await this.store.command({ type: 'subscribe', subscription, now: this.now() });
    return view(subscription);
  }

  async remove(id: string): Promise<void> {
    await this.store.command({ type: 'unsubscribe', id, reason: 'user', now: this.now() });
  }
}

function view(s: PushSubscriptionData): PushDeviceView {
  return { id: s.id, device: s.device, origin: s.origin, endpoint: s.endpoint, push_service: new URL(s.endpoint).origin };
}

/** Push services are https; plain http only on a loopback address (a push service under test). */
function endpointProblem(endpoint: string): string | null {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'not a URL';
  }
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname.replace(/^\[|\]$/g, ''))) return null;
  return 'a push service URL is https (plain http only on a loopback address)';
}
