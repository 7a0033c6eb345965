import { signal } from '@preact/signals';
import { api } from './api';

/** The browser's install prompt, kept until the person asks to install (Chromium's `beforeinstallprompt`). */
interface InstallPrompt extends Event {
  prompt(): Promise<void>;
  userChoice: Promise<{ outcome: 'accepted' | 'dismissed' }>;
}

export const pushSupported = typeof navigator !== 'undefined' && 'serviceWorker' in navigator && typeof PushManager !== 'undefined';
/** The service worker's registration, once it is registered. */
export const registration = signal<ServiceWorkerRegistration | null>(null);
/** This device's push subscription, if it has one. */
export const deviceSubscription = signal<PushSubscription | null>(null);
export const installPrompt = signal<InstallPrompt | null>(null);
export const installed = signal(typeof window !== 'undefined' && window.matchMedia?.('(display-mode: standalone)').matches === true);

/** Registers the service worker (the page is then installable) and learns whether this device is subscribed. */
export function registerWorker(): void {
  window.addEventListener('beforeinstallprompt', (e) => {
    e.preventDefault();
    installPrompt.value = e as InstallPrompt;
  });
  window.addEventListener('appinstalled', () => {
    installed.value = true;
    installPrompt.value = null;
  });
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker
    .register('/sw.js', { scope: '/' })
    .then(async (reg) => {
      registration.value = reg;
      if (pushSupported) deviceSubscription.value = await reg.pushManager.getSubscription();
    })
    .catch(() => undefined);
}

export async function install(): Promise<void> {
  const prompt = installPrompt.value;
  if (!prompt) return;
  await prompt.prompt();
  if ((await prompt.userChoice).outcome === 'accepted') installPrompt.value = null;
}

const keyBytes = (base64url: string): ArrayBuffer => {
  const raw = atob(base64url.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (base64url.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0)).buffer;
};

/** A name for this device the person recognises in the list: its platform and browser. */
function deviceName(): string {
  const ua = navigator.userAgent;
  const browser = /Firefox\//.test(ua) ? 'Firefox' : /Edg\//.test(ua) ? 'Edge' : /Chrome\//.test(ua) ? 'Chrome' : /Safari\//.test(ua) ? 'Safari' : 'a browser';
  const platform = /Android/.test(ua) ? 'Android' : /iPhone|iPad/.test(ua) ? 'iOS' : /Mac OS X/.test(ua) ? 'macOS' : /Windows/.test(ua) ? 'Windows' : /Linux/.test(ua) ? 'Linux' : 'a device';
  return `${browser} on ${platform}`;
}

/** Asks the browser for a push subscription to the service's VAPID key and hands it to the service. */
export async function subscribeDevice(): Promise<void> {
  const reg = registration.value ?? (await navigator.serviceWorker.ready);
  if ((await Notification.requestPermission()) !== 'granted') throw new Error('Notifications are blocked for this page in the browser’s settings.');
  const { public_key } = await api<{ public_key: string }>('/notifications/push/key');
  const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(public_key) });
  const json = sub.toJSON();
  await api('/notifications/push/subscriptions', { method: 'POST', body: { endpoint: json.endpoint, keys: json.keys, device: deviceName() } });
  deviceSubscription.value = sub;
}

/** Removes a device from the service; this device's own subscription is ended in the browser too. */
export async function removeDevice(id: string, endpoint: string): Promise<void> {
  await api(`/notifications/push/subscriptions/${encodeURIComponent(id)}`, { method: 'DELETE' });
  if (deviceSubscription.value?.endpoint === endpoint) {
    await deviceSubscription.value.unsubscribe();
    deviceSubscription.value = null;
  }
}
