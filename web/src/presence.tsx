import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from './api';
import { report } from './store';
import { BrainPresence } from './types';

/** A brain coming or going is no journaled event: presence is asked again this often, and after each message sent. */
const POLL_MS = 5000;

export const presence = signal<BrainPresence | null>(null);

export async function refreshPresence(): Promise<void> {
  presence.value = (await api<{ presence: BrainPresence }>('/session-os/main-brain/presence')).presence;
}

/** Who reads the messages, in short: the hosted brain by runtime, version, conversation and node; a brain the user brings by its driver. */
function reader(p: BrainPresence): string {
  if (p.hosted) return [`${p.runtime ?? '?'}${p.version ? ` ${p.version}` : ''}`, p.conversation_id ? `conversation ${p.conversation_id}` : null, p.node ? `node ${p.node}` : null].filter(Boolean).join(' · ');
  return `a brain you bring (${p.driver}${p.listeners !== null ? `, ${p.listeners} following the rounds` : ''})`;
}

/** Why none is connected: the summary after its opening words, as a sentence of its own. */
function why(summary: string): string {
  const rest = summary.replace(/^No brain is connected: /, '');
  return rest.charAt(0).toUpperCase() + rest.slice(1);
}

/** Who reads the main chat and the rounds now; when no brain is connected, says so and how to connect one. */
export function BrainPresenceBanner() {
  useEffect(() => {
    const load = (): void => void refreshPresence().catch(report);
    load();
    const poll = setInterval(load, POLL_MS);
    return () => clearInterval(poll);
  }, []);
  const p = presence.value;
  if (p === null) return null;
  if (p.connected) {
    return (
      <div class="presence connected" role="status" aria-label="Who reads the messages">
        <p>
          <strong>Read by</strong> {reader(p)}
        </p>
        <p class="muted">{p.summary}</p>
      </div>
    );
  }
  return (
    <div class="presence none" role="alert" aria-label="Who reads the messages">
      <p>
        <strong>No brain is connected.</strong> {why(p.summary)}
      </p>
      <p>
        <strong>To connect one:</strong> {p.how_to_connect}
      </p>
    </div>
  );
}
