import { signal, useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { useAction } from './action';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { ParkedGroup } from './parked';
import { memo, useChunked } from './progressive';
import { readableInput } from './readable-input';
import { attention, now, putFresh, stallThresholdS } from './store';
import { PermissionRequest, Session } from './types';

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

export function StateChip({ session }: { session: Session }) {
  return (
    <span class={`chip state-${session.state}`}>
      {session.state_label ? <span lang="zh">{session.state_label} </span> : null}
      {session.state}
    </span>
  );
}

function Age({ session }: { session: Session }) {
  const waited = now.value - Date.parse(session.state_since);
  const threshold = stallThresholdS.value;
  const stalled = threshold !== null && threshold > 0 && waited > threshold * 1000;
  return (
    <span class={stalled ? 'age stalled' : 'age'} title={`waiting since ${session.state_since}`}>
      {stalled ? <strong>stalled · </strong> : null}
      waiting {formatAge(waited)}
    </span>
  );
}

function InputView({ request }: { request: PermissionRequest }) {
  const readable = readableInput(request.input);
  if (readable.kind === 'command') {
    return (
      <div class="input">
        {readable.description ? <p class="muted">{readable.description}</p> : null}
        <pre class="command" aria-label="command">{readable.command}</pre>
      </div>
    );
  }
  if (readable.kind === 'file') {
    return (
      <div class="input">
        <p>
          file <code class="path">{readable.path}</code>
        </p>
        {readable.replaces !== null ? <pre class="removed" aria-label="text replaced">{readable.replaces}</pre> : null}
        {readable.content !== null ? <pre class="added" aria-label="content written">{readable.content}</pre> : null}
      </div>
    );
  }
  return <pre class="input json">{readable.json}</pre>;
}

/** Allow, or deny with a reason, the one request it shows (by request_id): a decision never lands on another request. */
function PermissionCard({ session, request, position }: { session: Session; request: PermissionRequest; position: string | null }) {
  const denying = useSignal(false);
  const reason = useSignal('');
  const { busy, error, attempt } = useAction();
  const reasonRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (denying.value) reasonRef.current?.focus();
  }, [denying.value]);

  const decide = async (decision: 'allow' | 'deny'): Promise<void> => {
    await attempt(async () => {
      const body = { decision, request_id: request.request_id, ...(decision === 'deny' && reason.value.trim() !== '' ? { reason: reason.value.trim() } : {}) };
      putFresh(await api<Session>(`/coding-sessions/${encodeURIComponent(session.id)}/permission`, { method: 'POST', body }));
    });
  };

  const onKey = (e: KeyboardEvent): void => {
    if (e.target !== e.currentTarget || busy.value) return;
    if (e.key === 'a') {
      e.preventDefault();
      void decide('allow');
    } else if (e.key === 'd') {
      e.preventDefault();
      denying.value = true;
    }
  };

  return (
    <div class="permission" tabIndex={0} onKeyDown={onKey} aria-label={`Permission request ${request.request_id}: ${request.tool}`} data-request-id={request.request_id}>
      <p>
        wants to use <strong class="tool">{request.tool}</strong>
        {position ? <span class="muted"> · {position}</span> : null}
      </p>
      <InputView request={request} />
      <ErrorAlert message={error.value} />
      {denying.value ? (
        <form
          class="deny"
          onSubmit={(e) => {
            e.preventDefault();
            void decide('deny');
          }}
        >
          <label>
            Reason for denying
            <input ref={reasonRef} value={reason.value} onInput={(e) => (reason.value = e.currentTarget.value)} onKeyDown={(e) => e.key === 'Escape' && (denying.value = false)} />
          </label>
          <button type="submit" class="danger" disabled={busy.value}>
            Deny with this reason
          </button>
          <button type="button" onClick={() => (denying.value = false)}>
            Cancel
          </button>
        </form>
      ) : (
        <div class="actions">
          <button type="button" class="primary" disabled={busy.value} onClick={() => void decide('allow')} aria-keyshortcuts="a">
            Allow {request.tool}
          </button>
          <button type="button" disabled={busy.value} onClick={() => (denying.value = true)} aria-keyshortcuts="d">
            Deny…
          </button>
        </div>
      )}
    </div>
  );
}

/** Sends the worker a message (POST …/messages): the answer to its question, or what unblocks it. */
export function Reply({ session, action = `Send to ${session.alias}` }: { session: Session; action?: string }) {
  const text = useSignal('');
  const { busy, error, attempt } = useAction();
  const send = async (e: Event): Promise<void> => {
    e.preventDefault();
    if (text.value.trim() === '') return;
    await attempt(async () => {
      putFresh(await api<Session>(`/coding-sessions/${encodeURIComponent(session.id)}/messages`, { method: 'POST', body: { text: text.value } }));
      text.value = '';
    });
  };
  return (
    <form class="reply" onSubmit={send}>
      <label>
        {`Reply to ${session.alias}`}
        <input value={text.value} onInput={(e) => (text.value = e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy.value}>
        {action}
      </button>
      <ErrorAlert message={error.value} />
    </form>
  );
}

/**
 * The time of day, 24-hour (HH:MM:SS, local): the first Intl formatter a page makes (toLocaleTimeString makes one too)
 * costs it 5 to 8 ms of loading locale data, in the middle of its first view.
 */
const timeOf = (iso: string): string => new Date(iso).toTimeString().slice(0, 8);

/** A session Brainstem held (its loop persisted, or its budget ran out): no turns until the user releases it. */
function Held({ session }: { session: Session }) {
  const { busy, error, attempt } = useAction();
  const held = session.held;
  if (held === null) return null;
  const release = async (): Promise<void> => {
    await attempt(async () => {
      putFresh(await api<Session>(`/coding-sessions/${encodeURIComponent(session.id)}/release`, { method: 'POST' }));
    });
  };
  return (
    <div class="held" role="status">
      <p class="label">held for {held.reason === 'loop' ? 'a loop' : 'its budget'} since {timeOf(held.since)}</p>
      <p>{held.detail}</p>
      <p class="muted">It takes no messages and no turns until you release it.</p>
      <button type="button" class="primary" disabled={busy.value} onClick={() => void release()}>
        Release {session.alias}
      </button>
      <ErrorAlert message={error.value} />
    </div>
  );
}

/** The loop detected in a session: Brainstem's summary, and what the worker tried and got back (its own text, shown as text). */
function Loop({ session }: { session: Session }) {
  const loop = session.loop;
  if (loop === null || Date.parse(loop.until) <= now.value) return null;
  return (
    <div class="loop">
      <p class="label">going round in circles · {loop.pattern.replace(/_/g, ' ')}</p>
      <p>{loop.summary}</p>
      <details>
        <summary>What it tried and what came back</summary>
        <pre class="evidence">{loop.evidence}</pre>
      </details>
    </div>
  );
}

function Waiting({ session }: { session: Session }) {
  // Held: messages and allows are refused until it is released (a deny would still go through, from its session page).
  if (session.held !== null) return null;
  const p = session.pending;
  if (p === null) return <Reply session={session} />;
  if (p.kind === 'question') {
    return (
      <div>
        <p class="label">asks</p>
        <blockquote class="question">{p.question}</blockquote>
        <Reply session={session} action="Send the answer" />
      </div>
    );
  }
  if (p.kind === 'blocked') {
    return (
      <div>
        <p class="label">blocked</p>
        <blockquote class="blocked">{p.reason}</blockquote>
        <Reply session={session} />
      </div>
    );
  }
  const requests = [p, ...session.queued_permissions];
  return (
    <div class="permissions">
      {requests.map((r, i) => (
        <PermissionCard key={r.request_id} session={session} request={r} position={requests.length > 1 ? `${i + 1} of ${requests.length}` : null} />
      ))}
    </div>
  );
}

/** The page's hash as a signal: a notification's link followed on an open page changes only its query, not the route. */
const hash = signal(location.hash);
window.addEventListener('hashchange', () => (hash.value = location.hash));

/** The session a notification's link names (`#/?session=cs_…`): its card is scrolled to and marked. */
function linkedSession(): string | null {
  const query = hash.value.split('?')[1];
  return query ? new URLSearchParams(query).get('session') : null;
}

const AttentionCard = memo(function AttentionCard({ session: s, linked }: { session: Session; linked: boolean }) {
  return (
    <article class={linked ? 'card highlight' : 'card'} aria-label={`${s.alias} ${s.state}`} data-session={s.id}>
      <header>
        <strong class="alias">{s.alias}</strong>
        <span class="title">{s.title}</span>
        <StateChip session={s} />
        <Age session={s} />
      </header>
      <p class="meta muted">
        {s.runtime} · <code>{s.cwd}</code>
      </p>
      <Held session={s} />
      <Loop session={s} />
      <Waiting session={s} />
    </article>
  );
});

export function AttentionView() {
  const items = attention.value;
  const linked = linkedSession();
  // The whole queue, a chunk a frame (progressive.ts); a linked card is scrolled to once it is there.
  const shown = useChunked(items.length);
  const linkedShown = linked !== null && items.slice(0, shown).some((s) => s.id === linked);
  useEffect(() => {
    if (linked && linkedShown) document.querySelector(`[data-session="${CSS.escape(linked)}"]`)?.scrollIntoView({ block: 'center' });
  }, [linked, linkedShown]);
  return (
    <section aria-labelledby="attention-title">
      <h2 id="attention-title">Needs attention ({items.length})</h2>
      {items.length === 0 ? <p class="empty">Nothing waits on you.</p> : null}
      <ol class="queue">
        {items.slice(0, shown).map((s) => (
          <li key={s.id}>
            <AttentionCard session={s} linked={s.id === linked} />
          </li>
        ))}
      </ol>
      <ParkedGroup />
      <p class="hint muted">
        Keys: <kbd>j</kbd>/<kbd>k</kbd> move between requests, <kbd>a</kbd> allows, <kbd>d</kbd> denies with a reason.
      </p>
    </section>
  );
}
