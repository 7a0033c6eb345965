import { Signal, computed, signal, useSignal, useSignalEffect } from '@preact/signals';
import { useAction } from './action';
import { useEffect } from 'preact/hooks';
import { api, token } from './api';
import { ErrorAlert } from './error-alert';
import { appendOutput, tailText } from './output-tail';
import { StreamStatus, followStream } from './sse';
import { Reply, StateChip } from './attention';
import { Flip, NO_FILTER, SessionFilter, invertPreview, matchesFilter } from './session-filter';
import { StartSessionForm } from './start-session';
import { SessionSpending, SpendLine } from './session-spending';
import { ParkedActions, ParkedFlag } from './parked';
import { memo, useChunked } from './progressive';
import { byText, putFresh, sessions } from './store';
import { Session, SessionState } from './types';
import { sharingWorkTree } from './patch-view';
import { WorktreeActions, WorktreeChanges } from './worktree-view';
import './sessions.css';

const STATES: readonly { value: SessionState; label: string }[] = [
  { value: 'starting', label: 'starting' },
  { value: 'working', label: 'working' },
  { value: 'pending_handling', label: '待处理 pending_handling' },
  { value: 'pending_authorization', label: '待授权 pending_authorization' },
  { value: 'pending_decision', label: '待拍板 pending_decision' },
  { value: 'exited', label: 'exited' },
];

/** Kept across route changes, so coming back to the list shows the same slice. */
const filter = signal<SessionFilter>(NO_FILTER);
const selected = signal<ReadonlySet<string>>(new Set());

const all = computed(() => [...sessions.value.values()].sort((a, b) => byText(a.created_at, b.created_at)));
const visible = computed(() => all.value.filter((s) => matchesFilter(s, filter.value)));
const runtimes = computed(() => [...new Set(all.value.map((s) => s.runtime))].sort());
/** The live sessions in each git work tree: found once per change of the sessions, not once per row. */
const workTrees = computed(() => {
  const byTree = new Map<string, Session[]>();
  for (const s of sessions.value.values()) {
    if (s.state === 'exited' || s.work_tree === null) continue;
    const members = byTree.get(s.work_tree);
    if (members) members.push(s);
    else byTree.set(s.work_tree, [s]);
  }
  return byTree;
});

function toggleSelected(id: string): void {
  const next = new Set(selected.value);
  if (!next.delete(id)) next.add(id);
  selected.value = next;
}

function Filters() {
  const f = filter.value;
  const set = (patch: Partial<SessionFilter>): void => {
    filter.value = { ...filter.value, ...patch };
  };
  return (
    <div class="fields filters" role="search" aria-label="Filter the sessions">
      <label>
        State
        <select value={f.state} onChange={(e) => set({ state: e.currentTarget.value as SessionState | '' })}>
          <option value="">any state</option>
          {STATES.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </select>
      </label>
      <label>
        Runtime
        <select value={f.runtime} onChange={(e) => set({ runtime: e.currentTarget.value })}>
          <option value="">any runtime</option>
          {runtimes.value.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <label>
        Text
        <input type="search" value={f.text} placeholder="alias, title, id or folder" onInput={(e) => set({ text: e.currentTarget.value })} />
      </label>
    </div>
  );
}

type ScopeMode = 'all' | 'only' | 'except' | 'invert';

/** POST …/supervision-scope; the sessions it changes come back through the event stream. */
async function applyScope(mode: ScopeMode, ids: string[]): Promise<void> {
  await api('/coding-sessions/supervision-scope', { method: 'POST', body: mode === 'all' ? { mode } : { mode, session_ids: ids } });
}

function ScopeActions({ preview }: { preview: Signal<Flip[] | null> }) {
  const { busy, error, attempt } = useAction();
  const chosen = [...selected.value].filter((id) => sessions.value.has(id));
  const run = async (mode: ScopeMode, ids: string[]): Promise<void> => {
    await attempt(async () => {
      await applyScope(mode, ids);
      preview.value = null;
    });
  };
  const flips = preview.value;
  return (
    <div class="card scope" aria-label="Supervision scope">
      <div class="actions">
        <button type="button" disabled={busy.value} onClick={() => void run('all', [])}>
          Supervise all
        </button>
        <button type="button" disabled={busy.value || chosen.length === 0} onClick={() => void run('only', chosen)}>
          Supervise only the selected ({chosen.length})
        </button>
        <button type="button" disabled={busy.value || chosen.length === 0} onClick={() => void run('except', chosen)}>
          Supervise all except the selected ({chosen.length})
        </button>
        <button type="button" disabled={busy.value || visible.value.length === 0} onClick={() => (preview.value = invertPreview(visible.value))}>
          Invert the visible ({visible.value.length})…
        </button>
      </div>
      {flips ? (
        <div class="preview" role="region" aria-label="Invert preview">
          <p>Inverting flips these {flips.length} sessions:</p>
          <ul class="flips">
            {flips.map((f) => (
              <li key={f.id} data-flip={f.id}>
                <strong>{f.alias}</strong> {f.title} — {f.excluded ? 'supervised → excluded' : 'excluded → supervised'}
              </li>
            ))}
          </ul>
          <div class="actions">
            <button
              type="button"
              class="primary"
              disabled={busy.value}
              onClick={() =>
                void run(
                  'invert',
                  flips.map((f) => f.id),
                )
              }
            >
              Apply the invert
            </button>
            <button type="button" onClick={() => (preview.value = null)}>
              Cancel the invert
            </button>
          </div>
        </div>
      ) : null}
      <ErrorAlert message={error.value} />
    </div>
  );
}

const TAIL_LINES = 200;

/** The last lines of a session's output, followed live: the stream sends the tail, then each chunk the worker writes. */
function OutputTail({ session }: { session: Session }) {
  const text = useSignal<string | null>(null);
  const status = useSignal<StreamStatus>('connecting');
  useEffect(
    () =>
      followStream(`/api/v1/coding-sessions/${encodeURIComponent(session.id)}/output/stream?tail=${TAIL_LINES}`, {
        token: () => token.value,
        onStatus: (s) => (status.value = s),
        onMessage: (message) => {
          if (message.data === '') return;
          const parsed = JSON.parse(message.data) as { lines: string[] } | { text: string };
          if ('lines' in parsed) text.value = tailText(parsed.lines);
          else if (text.value !== null) text.value = appendOutput(text.value, parsed.text, TAIL_LINES);
        },
      }),
    [session.id],
  );
  return (
    <div>
      <p class="label">
        output {status.value === 'live' ? null : <span class="muted">({status.value})</span>}
      </p>
      <pre class="output" aria-label={`Output of ${session.alias}`} tabIndex={0}>
        {text.value === null ? 'loading…' : text.value === '' ? '(no output yet)' : text.value}
      </pre>
    </div>
  );
}

const NAMED = 8;

/** Another live session in the same git work tree: both can overwrite each other's changes. */
function SharedWorkTree({ session }: { session: Session }) {
  const others = sharingWorkTree(session, session.work_tree === null ? [] : (workTrees.value.get(session.work_tree) ?? []));
  if (others.length === 0) return null;
  // Named up to a few: a row naming hundreds of sessions would be all names.
  const named = others.length > NAMED ? `${others.slice(0, NAMED).join(', ')} and ${others.length - NAMED} more` : others.join(', ');
  return (
    <p class="warning" role="note">
      Shares the git work tree <code>{session.work_tree}</code> with {named}: they can overwrite each other's changes. Start sessions with a worktree of
      their own to keep them apart.
    </p>
  );
}

/** The worktree's changes while its folder is there, else what became of it; and the actions on it. */
function Worktree({ session: s }: { session: Session }) {
  const w = s.worktree;
  if (!w) return null;
  const why: Record<string, string> = {
    preparing: 'The worktree is being prepared (checkout, copies, setup).',
    failed: `Preparing the worktree failed: ${w.prepare_failure ?? ''}`,
    missing: `The worktree folder ${w.path} was deleted by hand; the branch ${w.branch} is kept.`,
    removed: `The worktree was removed (${w.removed?.reason ?? ''}); the branch ${w.branch} is ${w.removed?.branch_kept ? 'kept' : 'deleted'}.`,
  };
  return (
    <div class="worktree">
      {w.state === 'ready' ? <WorktreeChanges session={s} /> : <p class="muted">{why[w.state]}</p>}
      {w.cleanup_blocked ? <p class="warning">Not cleaned up: uncommitted changes in {w.cleanup_blocked.join(', ')}.</p> : null}
      <WorktreeActions session={s} />
    </div>
  );
}

const SessionRow = memo(function SessionRow({ session: s }: { session: Session }) {
  const { busy, error, attempt } = useAction();
  const open = useSignal(false);
  const act = async (call: () => Promise<Session>): Promise<void> => {
    await attempt(async () => {
      putFresh(await call());
    });
  };
  const path = `/coding-sessions/${encodeURIComponent(s.id)}`;
  return (
    <article class="card" data-session={s.id} aria-label={`${s.alias} ${s.state}`}>
      <header>
        <input type="checkbox" class="select" checked={selected.value.has(s.id)} onChange={() => toggleSelected(s.id)} aria-label={`Select ${s.alias}`} />
        <strong class="alias">{s.alias}</strong>
        <span class="title">{s.title}</span>
        <StateChip session={s} />
        <ParkedFlag session={s} />
        <button
          type="button"
          role="switch"
          aria-checked={!s.excluded}
          aria-label={`Supervise ${s.alias}`}
          class={s.excluded ? 'switch small' : 'switch small on'}
          disabled={busy.value}
          onClick={() => void act(() => api<Session>(`${path}/supervision`, { method: 'PATCH', body: { excluded: !s.excluded } }))}
        >
          <span class="knob" />
        </button>
        <span class="muted supervised">{s.excluded ? 'excluded' : 'supervised'}</span>
      </header>
      <p class="meta muted">
        {s.origin === 'external' ? <span class="external">external · </span> : null}
        {s.runtime}
        {s.profile_id ? ` · ${s.profile_id}` : ''} · <code>{s.cwd}</code> · <SpendLine session={s} />
        {s.worktree ? (
          <>
            {' '}
            · worktree <code>{s.worktree.branch}</code>
            {s.worktree.state !== 'ready' ? ` (${s.worktree.state})` : ''}
          </>
        ) : null}
        {s.held ? <span class="chip held"> held: {s.held.detail}</span> : null}
        {s.sandbox && !s.sandbox.on && s.origin !== 'external' ? (
          <span class="chip unsandboxed" title={s.sandbox.reason ?? ''}>
            {' '}
            unsandboxed
          </span>
        ) : null}
      </p>
      <SharedWorkTree session={s} />
      <div class="actions">
        <button type="button" aria-expanded={open.value} onClick={() => (open.value = !open.value)}>
          {open.value ? `Hide ${s.alias}` : `Open ${s.alias}`}
        </button>
        {s.state !== 'exited' && s.origin !== 'external' ? (
          <button type="button" class="danger" disabled={busy.value} onClick={() => void act(() => api<Session>(`${path}/stop`, { method: 'POST', body: {} }))}>
            {`Stop ${s.alias}`}
          </button>
        ) : null}
      </div>
      <ErrorAlert message={error.value} />
      {open.value ? (
        <div class="details">
          <ParkedActions session={s} />
          {s.pending?.kind === 'question' ? <blockquote class="question">{s.pending.question}</blockquote> : null}
          {s.pending?.kind === 'blocked' ? <blockquote class="blocked">{s.pending.reason}</blockquote> : null}
          {s.worktree ? <Worktree session={s} /> : null}
          <SessionSpending session={s} />
          <OutputTail session={s} />
          {s.state !== 'exited' ? <Reply session={s} action={s.pending?.kind === 'question' ? 'Send the answer' : `Send to ${s.alias}`} /> : null}
        </div>
      ) : null}
    </article>
  );
});

/** Rows a page adds: a thousand rows at once held the page for over 100 ms (npm run bench:dashboard). */
const ROWS_PER_PAGE = 100;

export function SessionsView() {
  const preview = useSignal<Flip[] | null>(null);
  const rows = useSignal(ROWS_PER_PAGE);
  // A preview stands for the visible list it was made from: a changed filter drops it.
  useSignalEffect(() => {
    void filter.value;
    preview.value = null;
    rows.value = ROWS_PER_PAGE;
  });
  const shown = visible.value;
  // The page's rows, a chunk a frame (progressive.ts); another filter starts over.
  const rendered = useChunked(Math.min(rows.value, shown.length), filter.value);
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">
        Sessions ({shown.length} of {all.value.length})
      </h2>
      <Filters />
      <ScopeActions preview={preview} />
      {shown.length === 0 ? <p class="empty">No session matches.</p> : null}
      <ol class="queue sessions">
        {shown.slice(0, rendered).map((s) => (
          <li key={s.id}>
            <SessionRow session={s} />
          </li>
        ))}
      </ol>
      {shown.length > rows.value ? (
        <button type="button" class="more" onClick={() => (rows.value += ROWS_PER_PAGE)}>
          Show {Math.min(ROWS_PER_PAGE, shown.length - rows.value)} more ({shown.length - rows.value} not shown)
        </button>
      ) : null}
      <StartSessionForm onStarted={(s) => putFresh(s)} />
    </section>
  );
}
