import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { useAction } from './action';
import { api, token } from './api';
import { ErrorAlert } from './error-alert';
import { BrainPresenceBanner, refreshPresence } from './presence';
import { followStream } from './sse';
import { report, sessions } from './store';
import { ChatMessage, Confirmation, JournalEvent } from './types';

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
  const { busy, error, attempt } = useAction();
  const end = useRef<HTMLDivElement>(null);
  /** The human gate's confirmations still waiting for the user: only those get Confirm / Refuse. */
  const pendingConfirmations = useSignal<ReadonlySet<string>>(new Set());
  const loadConfirmations = (): void => {
    api<{ confirmations: Confirmation[] }>('/session-os/main-brain/confirmations?status=pending').then(
      (r) => (pendingConfirmations.value = new Set(r.confirmations.map((c) => c.id))),
      report,
    );
  };

  useEffect(
    () =>
      followStream('/api/v1/session-os/main-brain/messages/stream', {
        token: () => token.value,
        onStatus: () => undefined,
        onOpen: (resumed) => {
          loadConfirmations();
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
            // A gate message says a confirmation was asked for or decided: which ones wait is asked again.
            if (message.kind === 'confirmation') loadConfirmations();
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
    await attempt(async () => {
      const res = await api<{ message: ChatMessage }>('/session-os/main-brain/messages', { method: 'POST', body: { text: body } });
      messages.value = withMessage(messages.value, res.message);
      text.value = '';
      await refreshPresence();
    });
  };

  return (
    <section aria-labelledby="chat-title" class="chat">
      <h2 id="chat-title">Main chat</h2>
      <BrainPresenceBanner />
      <ol class="messages" aria-live="polite">
        {messages.value.map((m) => (
          <li key={m.seq} class={`message role-${m.role} kind-${m.kind}`} data-seq={m.seq}>
            <span class="who">
              {m.role}
              {m.session_id !== null ? ` · ${sessions.value.get(m.session_id)?.alias ?? m.session_id}` : ''}
              {m.answer_to !== undefined ? ` · answers #${m.answer_to}` : ''}
            </span>
            <p class="text">{m.text}</p>
            {m.role === 'worker' && m.kind === 'question' ? (
              answeredBy(m, messages.value) ?? <AnswerForm question={m} onSent={(r) => (messages.value = withMessage(messages.value, r))} />
            ) : null}
            {m.kind === 'confirmation' && m.confirmation_id !== undefined && pendingConfirmations.value.has(m.confirmation_id) ? (
              <Gate id={m.confirmation_id} onDone={loadConfirmations} />
            ) : null}
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
        <ErrorAlert message={error.value} />
        <button type="submit" class="primary" disabled={busy.value}>
          Send to the main brain
        </button>
      </form>
    </section>
  );
}

/** A question is answered once: who answered it (as listed, or as its answer came in since), or null while it is open. */
function answeredBy(question: ChatMessage, all: readonly ChatMessage[]) {
  const answer = question.answered ?? all.find((m) => m.answer_to === question.seq);
  if (!answer) return null;
  const brain = 'by' in answer ? answer.by === 'main_brain' : answer.role === 'brain';
  return <p class="answered">Answered by {brain ? 'the brain' : 'you'} (#{answer.seq}).</p>;
}

/** Answers a worker's question in place: the text goes to that worker (answer_to = the question's seq). */
function AnswerForm({ question, onSent }: { question: ChatMessage; onSent: (m: ChatMessage) => void }) {
  const text = useSignal('');
  const error = useSignal<string | null>(null);
  const send = async (e: Event): Promise<void> => {
    e.preventDefault();
    if (text.value.trim() === '') return;
    error.value = null;
    try {
      onSent((await api<{ message: ChatMessage }>('/session-os/main-brain/messages', { method: 'POST', body: { text: text.value, answer_to: question.seq } })).message);
      text.value = '';
    } catch (err) {
      error.value = err instanceof Error ? err.message : String(err);
    }
  };
  return (
    <form class="reply" onSubmit={send}>
      <label>
        Answer this question
        <input value={text.value} onInput={(e) => (text.value = e.currentTarget.value)} />
      </label>
      <button type="submit">Send the answer</button>
      <ErrorAlert message={error.value} />
    </form>
  );
}

/** Confirm or refuse a call the main brain made that waits for the user (the human gate). */
function Gate({ id, onDone }: { id: string; onDone: () => void }) {
  const { busy, error, attempt } = useAction();
  const decide = async (verb: 'confirm' | 'refuse'): Promise<void> => {
    await attempt(async () => {
      await api(`/session-os/main-brain/confirmations/${encodeURIComponent(id)}/${verb}`, { method: 'POST', body: {} });
      onDone();
    });
  };
  return (
    <div class="actions">
      <button type="button" class="primary" disabled={busy.value} onClick={() => void decide('confirm')}>
        Confirm
      </button>
      <button type="button" disabled={busy.value} onClick={() => void decide('refuse')}>
        Refuse
      </button>
      <ErrorAlert message={error.value} />
    </div>
  );
}
