import { signal, useSignalEffect } from '@preact/signals';
import { useRef } from 'preact/hooks';
import { attention, loaded } from './store';
import { Session } from './types';

const supported = typeof Notification !== 'undefined';
const permission = signal<NotificationPermission | 'unsupported'>(supported ? Notification.permission : 'unsupported');

const waitsOn = (s: Session): string => {
  if (s.held) return `held: ${s.held.detail}`;
  if (s.loop && s.state === 'working') return `going round in circles: ${s.loop.summary}`;
  const p = s.pending;
  if (p === null) return s.state;
  if (p.kind === 'question') return p.question;
  if (p.kind === 'blocked') return p.reason;
  return `wants to use ${p.tool}`;
};

/**
 * Notifies (once the user allowed it) when a session newly needs attention while the page is not being looked at.
 * What was already waiting when the page loaded is not announced.
 */
export function useAttentionNotifications(): void {
  const seen = useRef<Set<string> | null>(null);
  useSignalEffect(() => {
    const items = attention.value;
    if (!loaded.value) return;
    const keys = items.map((s) => `${s.id}@${s.state_since}@${s.held?.since ?? ''}@${s.loop?.detected_at ?? ''}`);
    if (seen.current === null) {
      seen.current = new Set(keys);
      return;
    }
    const fresh = items.filter((s, i) => !seen.current?.has(keys[i] ?? ''));
    seen.current = new Set(keys);
    if (permission.value !== 'granted' || (document.visibilityState === 'visible' && document.hasFocus())) return;
    for (const s of fresh) {
      // Shown as plain text by the system; the tag keeps one notification per session.
      new Notification(`${s.alias} ${s.state_label ?? s.state}`, { body: waitsOn(s).slice(0, 200), tag: s.id });
    }
  });
}

export function NotifyButton() {
  if (permission.value !== 'default') return null;
  return (
    <button type="button" onClick={() => void Notification.requestPermission().then((p) => (permission.value = p))}>
      Notify me
    </button>
  );
}
