/**
 * The dashboard's service worker: it shows what the service pushes (src/notifications/channels/web-push.channel.ts)
 * as a system notification, and its Allow/Deny or Confirm/Refuse buttons POST that notification's action link. Every
 * field is shown as text by the system: nothing here is ever rendered as HTML.
 */

// The worker's own globals, typed here: the page's type check has the DOM's, which a worker's would clash with.
interface PushAction {
  action: string;
  label: string;
  url: string;
}
interface Shown {
  url: string;
  tag: string;
  actions: PushAction[];
}
interface WorkerNotification {
  readonly data: unknown;
  close(): void;
}
interface Extendable extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface PushEventLike extends Extendable {
  readonly data: { json(): unknown } | null;
}
interface ClickEventLike extends Extendable {
  readonly action: string;
  readonly notification: WorkerNotification;
}
interface WindowClientLike {
  readonly url: string;
  focus(): Promise<unknown>;
  navigate(url: string): Promise<unknown>;
}
interface WorkerScope {
  readonly location: { origin: string };
  readonly registration: { showNotification(title: string, options: Record<string, unknown>): Promise<void> };
  readonly clients: { claim(): Promise<void>; matchAll(o: { type: 'window' }): Promise<WindowClientLike[]>; openWindow(url: string): Promise<unknown> };
  skipWaiting(): Promise<void>;
  addEventListener(type: 'install' | 'activate', listener: (e: Extendable) => void): void;
  addEventListener(type: 'push', listener: (e: PushEventLike) => void): void;
  addEventListener(type: 'notificationclick', listener: (e: ClickEventLike) => void): void;
}

// A module, so its names stay its own.
export {};

declare const self: WorkerScope;

const text = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);

/** What a push says, as plain strings: anything else it holds is dropped. */
function readPush(raw: unknown): { title: string; body: string } & Shown {
  const o = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const actions = Array.isArray(o.actions) ? o.actions : [];
  return {
    title: text(o.title, 'Brainstem'),
    body: text(o.text),
    url: text(o.url, '/'),
    tag: text(o.tag, 'brainstem'),
    actions: actions.flatMap((a: unknown) => {
      const x = a && typeof a === 'object' ? (a as Record<string, unknown>) : {};
      return typeof x.action === 'string' && typeof x.label === 'string' && typeof x.url === 'string' ? [{ action: x.action, label: x.label, url: x.url }] : [];
    }),
  };
}

self.addEventListener('install', (e) => e.waitUntil(self.skipWaiting()));
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));

self.addEventListener('push', (e) => {
  let raw: unknown = null;
  try {
    raw = e.data?.json() ?? null;
  } catch {
    raw = null;
  }
  const p = readPush(raw);
  const shown: Shown = { url: p.url, tag: p.tag, actions: p.actions };
  e.waitUntil(
    self.registration.showNotification(p.title, {
      body: p.body,
      tag: p.tag,
      // An update of the same notification (same tag) alerts again: something new waits.
      renotify: true,
      requireInteraction: p.actions.length > 0,
      icon: '/icon-192.png',
      data: shown,
      actions: p.actions.map((a) => ({ action: a.action, title: a.label })),
    }),
  );
});

/** The action link on this origin: the worker and the page are served by the service the link names. */
const sameOrigin = (url: string): string => {
  const u = new URL(url, self.location.origin);
  return `${self.location.origin}${u.pathname}`;
};

async function act(a: PushAction, tag: string): Promise<void> {
  let body = '';
  let ok = false;
  try {
    const res = await fetch(sameOrigin(a.url), { method: 'POST' });
    ok = res.ok;
    const answer = (await res.json().catch(() => null)) as { message?: unknown } | null;
    body = ok ? 'Done.' : text(answer?.message, `The service answered ${res.status}.`);
  } catch (err) {
    body = `The service could not be reached: ${err instanceof Error ? err.message : String(err)}`;
  }
  await self.registration.showNotification(ok ? `${a.label}: done` : `${a.label}: not done`, { body, tag, renotify: false, icon: '/icon-192.png', data: { url: '/', tag, actions: [] } });
}

async function open(url: string): Promise<void> {
  const windows = await self.clients.matchAll({ type: 'window' });
  const mine = windows.find((w) => w.url.startsWith(self.location.origin));
  if (mine) {
    await mine.navigate(url).catch(() => undefined);
    await mine.focus();
    return;
  }
  await self.clients.openWindow(url);
}

self.addEventListener('notificationclick', (e) => {
  e.notification.close();
  const shown = e.notification.data as Shown;
  const chosen = shown.actions.find((a) => a.action === e.action);
  e.waitUntil(chosen ? act(chosen, shown.tag) : open(shown.url));
});
