import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from './api';
import { useAction } from './action';
import { ErrorAlert } from './error-alert';
import { errorText } from './error-text';
import { hunkRows, hunksOf } from './patch-view';
import { putFresh } from './store';
import { PatchPage, Session, WorktreeDiff } from './types';
import './worktree-view.css';

/**
 * Polled, not pushed: a worker's edits are files on disk, not journaled events, so no stream carries them; watching a
 * 10,000-file tree for changes costs more than asking git every POLL_MS while this view is open (and the tab shown).
 */
export const POLL_MS = 2000;
/** Patch lines a page shows at most. */
const PAGE_LINES = 1000;

type Mode = 'unified' | 'split';
type Diff = WorktreeDiff & { id: string; alias: string };

const sign = (kind: string): string => (kind === 'add' ? '+' : kind === 'del' ? '-' : ' ');

function Unified({ patch }: { patch: PatchPage }) {
  return (
    <table class="patch unified">
      <colgroup>
        <col class="num" />
        <col class="num" />
        <col />
      </colgroup>
      <tbody>
        {hunksOf(patch.lines).map((h, i) => [
          h.header !== null ? (
            <tr key={`h${i}`} class="hunk">
              <td colSpan={3}>{h.header}</td>
            </tr>
          ) : null,
          ...h.lines.map((l, j) => (
            <tr key={`${i}.${j}`} class={`diff-${l.kind}`}>
              <td class="num">{l.oldLine ?? ''}</td>
              <td class="num">{l.newLine ?? ''}</td>
              <td class="code">
                {sign(l.kind)} {l.text}
              </td>
            </tr>
          )),
        ])}
      </tbody>
    </table>
  );
}

function Split({ patch }: { patch: PatchPage }) {
  return (
    <table class="patch split">
      <colgroup>
        <col class="num" />
        <col />
        <col class="num" />
        <col />
      </colgroup>
      <tbody>
        {hunksOf(patch.lines).map((h, i) => [
          h.header !== null ? (
            <tr key={`h${i}`} class="hunk">
              <td colSpan={4}>{h.header}</td>
            </tr>
          ) : null,
          ...hunkRows(h).map((r, j) => (
            <tr key={`${i}.${j}`}>
              <td class="num">{r.left?.oldLine ?? ''}</td>
              <td class={`code ${r.left ? `diff-${r.left.kind}` : 'empty'}`}>{r.left ? `${sign(r.left.kind)} ${r.left.text}` : ''}</td>
              <td class="num">{r.right?.newLine ?? ''}</td>
              <td class={`code ${r.right ? `diff-${r.right.kind}` : 'empty'}`}>{r.right ? `${sign(r.right.kind)} ${r.right.text}` : ''}</td>
            </tr>
          )),
        ])}
      </tbody>
    </table>
  );
}

/** What a session in its own worktree changed, followed live: branch, base, commits, files, and the patches. */
export function WorktreeChanges({ session }: { session: Session }) {
  const diff = useSignal<Diff | null>(null);
  const error = useSignal<string | null>(null);
  const mode = useSignal<Mode>('unified');
  const file = useSignal<string | null>(null);
  const cursor = useSignal<string | null>(null);
  const path = `/coding-sessions/${encodeURIComponent(session.id)}/diff`;
  const query = `?limit=${PAGE_LINES}${file.value ? `&file=${encodeURIComponent(file.value)}` : ''}${cursor.value ? `&cursor=${cursor.value}` : ''}`;
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async (): Promise<void> => {
      if (document.visibilityState === 'visible') {
        try {
          diff.value = await api<Diff>(`${path}${query}`);
          error.value = null;
        } catch (e) {
          error.value = errorText(e);
        }
      }
      if (!stopped) timer = setTimeout(() => void load(), POLL_MS);
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [path, query]);
  const d = diff.value;
  const pick = (p: string | null) => {
    file.value = p;
    cursor.value = null;
  };
  return (
    <section class="changes" aria-label={`Changes of ${session.alias}`}>
      <ErrorAlert message={error.value} />
      {d === null ? (
        <p class="muted">loading the diff…</p>
      ) : (
        <>
          <p class="meta">
            <code>{d.branch}</code> from <code>{d.base_ref}</code> · <span aria-label="ahead">{d.ahead} ahead</span> · <span aria-label="behind">{d.behind} behind</span>
            <span class="modes" role="radiogroup" aria-label="Diff layout">
              {(['unified', 'split'] as const).map((m) => (
                <label key={m}>
                  <input type="radio" name={`mode-${session.id}`} checked={mode.value === m} onChange={() => (mode.value = m)} />
                  {m === 'unified' ? 'Unified' : 'Side by side'}
                </label>
              ))}
            </span>
          </p>
          {d.commits.length > 0 ? (
            <ol class="commits" aria-label="Commits">
              {d.commits.map((c) => (
                <li key={c.sha}>
                  <code>{c.sha.slice(0, 8)}</code> {c.subject}
                </li>
              ))}
            </ol>
          ) : null}
          <ul class="files" aria-label="Changed files">
            {d.files.length === 0 ? <li class="muted">No changes yet.</li> : null}
            {d.files.map((f) => (
              <li key={f.path}>
                <button type="button" class="link" aria-pressed={file.value === f.path} onClick={() => pick(file.value === f.path ? null : f.path)}>
                  {f.path}
                </button>{' '}
                <span class={`chip change-${f.change}`}>{f.change}</span>{' '}
                {f.binary ? <span class="muted">binary</span> : <span class="counts"><span class="plus">+{f.additions ?? 0}</span> <span class="minus">−{f.deletions ?? 0}</span></span>}
                {f.uncommitted ? <span class="muted"> · not committed</span> : null}
              </li>
            ))}
            {d.files_total > d.files.length ? <li class="muted">and {d.files_total - d.files.length} more files</li> : null}
          </ul>
          {d.patches.map((p) => (
            <div key={`${p.path}@${p.from_line}`} class="file-patch" role="region" aria-label={`Diff of ${p.path}`}>
              <p class="path">
                <code>{p.path}</code>
                {p.from_line > 0 ? <span class="muted"> (from line {p.from_line + 1} of its patch)</span> : null}
              </p>
              {p.binary ? <p class="muted">Binary file: not shown.</p> : mode.value === 'unified' ? <Unified patch={p} /> : <Split patch={p} />}
            </div>
          ))}
          <div class="actions">
            {cursor.value !== null ? (
              <button type="button" onClick={() => (cursor.value = null)}>
                First page
              </button>
            ) : null}
            {d.next_cursor !== null ? (
              <button type="button" onClick={() => (cursor.value = d.next_cursor)}>
                Next page of the diff
              </button>
            ) : null}
          </div>
        </>
      )}
    </section>
  );
}

/** Merge, keep the branch only, or discard: the discard asks again, it loses what is not merged. */
export function WorktreeActions({ session: s }: { session: Session }) {
  const { busy, error, attempt } = useAction();
  const strategy = useSignal<'ff' | 'merge' | 'rebase'>('ff');
  const confirming = useSignal(false);
  const force = useSignal(false);
  const w = s.worktree;
  if (!w || w.state === 'removed') return null;
  const path = `/coding-sessions/${encodeURIComponent(s.id)}`;
  const run = (route: string, body: object) =>
    attempt(async () => {
      putFresh(await api<Session>(`${path}/${route}`, { method: 'POST', body }));
      confirming.value = false;
    });
  const live = s.state !== 'exited';
  return (
    <div class="worktree-actions">
      <div class="actions">
        <label>
          Strategy
          <select value={strategy.value} onChange={(e) => (strategy.value = e.currentTarget.value as 'ff' | 'merge' | 'rebase')}>
            <option value="ff">fast-forward</option>
            <option value="merge">merge commit</option>
            <option value="rebase">rebase</option>
          </select>
        </label>
        <button type="button" class="primary" disabled={busy.value || w.base_branch === null} onClick={() => void run('merge', { strategy: strategy.value })}>
          {`Merge ${s.alias} into ${w.base_branch ?? w.base_ref}`}
        </button>
        <button type="button" disabled={busy.value || live} title={live ? 'Stop the session first' : undefined} onClick={() => void run('branch-only', {})}>
          Keep the branch only
        </button>
        <button type="button" class="danger" disabled={busy.value || live} title={live ? 'Stop the session first' : undefined} onClick={() => (confirming.value = true)}>
          Discard…
        </button>
      </div>
      {confirming.value ? (
        <div class="confirm" role="group" aria-label="Confirm the discard">
          <p>
            Discard removes the worktree <code>{w.path}</code>
            {w.reused === 'none' ? (
              <>
                {' '}
                and deletes the branch <code>{w.branch}</code>
              </>
            ) : null}
            : what is not merged is lost.
          </p>
          <label>
            <input type="checkbox" checked={force.value} onChange={(e) => (force.value = e.currentTarget.checked)} /> even with uncommitted changes
          </label>
          <div class="actions">
            <button type="button" class="danger" disabled={busy.value} onClick={() => void run('discard', { force: force.value })}>
              {`Discard ${s.alias}'s work`}
            </button>
            <button type="button" onClick={() => (confirming.value = false)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      {w.last_op && !w.last_op.ok ? <p class="muted">Last {w.last_op.op}: {w.last_op.message}</p> : null}
      <ErrorAlert message={error.value} />
    </div>
  );
}
