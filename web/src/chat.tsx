import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { api, token } from './api';
import { followStream } from './sse';
import { report } from './store';
import { JournalEvent } from './types';

interface ChatMessage {
  seq: number;
  at: string;
  role: 'user' | 'brain' | 'system' | 'worker';
  kind: string;
  text: string;
  session_id: string | null;
  turn_id?: string;
}

const withMessage = (list: readonly ChatMessage[], m: ChatMessage): ChatMessage[] =>
  list.some((x) => x.seq === m.seq) ? [...list] : [...list, m].sort((a, b) => a.seq - b.seq);

/**
 * The conversation with the main brain: its messages from the journal and, while a turn runs, its text as it is
 * produced (chat.delta), replaced by the message once that is journaled. `/supervise [goal]` is sent as text.
 */
export function ChatView() {
  const messages = useSignal<ChatMessage[]>([]);
  const drafts = useSignal<ReadonlyMap<string, string>>(new Map());
  const text = useSignal('');
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const end = useRef<HTMLDivElement>(null);

  useEffect(
    () =>
      followStream('/api/v1/session-os/main-brain/messages/stream', {
        token: () => token.value,
        onStatus: () => undefined,
        onOpen: (resumed) => {
          if (!resumed) {
            api<{ messages: ChatMessage[] }>('/session-os/main-brain/messages?limit=200').then((r) => {
              messages.value = r.messages.reduce(withMessage, messages.value);
            }, report);
          }
        },
        onMessage: (m) => {
          if (m.data === '') return;
          if (m.event === 'chat.delta') {
            const delta = JSON.parse(m.data) as { turn_id: string; text: string };
            const next = new Map(drafts.value);
            next.set(delta.turn_id, (next.get(delta.turn_id) ?? '') + delta.text);
            drafts.value = next;
          } else if (m.event === 'chat.message') {
            const e = JSON.parse(m.data) as JournalEvent;
            const message = { seq: e.seq, at: e.at, ...(e.data as Omit<ChatMessage, 'seq' | 'at'>) };
            messages.value = withMessage(messages.value, message);
            if (message.turn_id !== undefined && drafts.value.has(message.turn_id)) {
              const next = new Map(drafts.value);
              next.delete(message.turn_id);
              drafts.value = next;
            }
          }
        },
      }),
    [],
  );
  useEffect(() => end.current?.scrollIntoView({ block: 'end' }), [messages.value.length, drafts.value]);

  const send = async (e: Event): Promise<void> => {
    e.preventDefault();
    const body = text.value.trim();
    if (body === '') return;
    busy.value = true;
    error.value = null;
    try {
      const res = await api<{ message: ChatMessage }>('/session-os/main-brain/messages', { method: 'POST', body: { text: body } });
      messages.value = withMessage(messages.value, res.message);
      text.value = '';
    } catch (err) {
      error.value = err instanceof Error ? err.message : String(err);
    } finally {
      busy.value = false;
    }
  };

  return (
    <section aria-labelledby="chat-title" class="chat">
      <h2 id="chat-title">Main chat</h2>
      <ol class="messages" aria-live="polite">
        {messages.value.map((m) => (
          <li key={m.seq} class={`message role-${m.role} kind-${m.kind}`} data-seq={m.seq}>
            <span class="who">{m.role}</span>
            <p class="text">{m.text}</p>
          </li>
        ))}
        {[...drafts.value.entries()].map(([turn, draft]) => (
          <li key={`draft-${turn}`} class="message role-brain draft" aria-busy="true">
            <span class="who">brain (typing)</span>
            <p class="text">{draft}</p>
          </li>
        ))}
      </ol>
      <div ref={end} />
      <form class="compose" onSubmit={send}>
        <label>
          Message to the main brain
          <textarea
            value={text.value}
            rows={3}
            placeholder="Ask, or /supervise [goal]"
            onInput={(e) => (text.value = e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send(e);
            }}
          />
        </label>
        {error.value ? (
          <p class="error" role="alert">
            {error.value}
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={busy.value}>
          Send to the main brain
        </button>
      </form>
    </section>
  );
}
