import { useAction } from './action';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { parkedDetail, parkedFlag, parkedNote } from './parked-format';
import { now, parked, putFresh } from './store';
import { Session } from './types';

/** The flag of a session parked at its model's limit, counting down with the page's clock; nothing when not parked. */
export function ParkedFlag({ session }: { session: Session }) {
  const p = session.parked;
  if (p === null) return null;
  // Its own component: the countdown renders this chip each second, not the row it sits in.
  return <span class="chip parked">{parkedFlag(p, now.value)}</span>;
}

/** The session detail's account of the park, and resuming it now or keeping it parked (POST …/resume). */
export function ParkedActions({ session }: { session: Session }) {
  const { busy, error, attempt } = useAction();
  const p = session.parked;
  // A resume refused as the park ended (someone else resumed it) still says why once the actions are gone.
  if (p === null) return <ErrorAlert message={error.value} />;
  const resume = async (keepParked: boolean): Promise<void> => {
    await attempt(async () => {
      putFresh(await api<Session>(`/coding-sessions/${encodeURIComponent(session.id)}/resume`, { method: 'POST', body: keepParked ? { keep_parked: true } : {} }));
    });
  };
  return (
    <div class="parked-detail" role="group" aria-label={`${session.alias} parked at its limit`}>
      <p>{parkedDetail(p)}</p>
      <div class="actions">
        <button type="button" class="primary" disabled={busy.value} onClick={() => void resume(false)}>
          Resume now
        </button>
        {/* Kept parked already, it has no timer left to disarm. */}
        {p.resumes_at !== null ? (
          <button type="button" disabled={busy.value} onClick={() => void resume(true)}>
            Keep parked
          </button>
        ) : null}
      </div>
      <ErrorAlert message={error.value} />
    </div>
  );
}

/** How many parked sessions the group names: one limit can park every session on its account at once. */
const NAMED = 10;

/** The needs-attention view's note of the parked sessions: told, not asked, since each resumes by itself. */
export function ParkedGroup() {
  const items = parked.value;
  if (items.length === 0) return null;
  return (
    <section class="paused" aria-labelledby="paused-title">
      <h3 id="paused-title">Paused at a limit ({items.length})</h3>
      <p class="muted">Nothing to do: each resumes by itself once its model's limit resets, unless someone kept it parked.</p>
      <ul>
        {items.slice(0, NAMED).map((s) => (
          <li key={s.id} data-parked={s.id}>
            <strong class="alias">{s.alias}</strong> {s.title} · <span class="muted">{parkedNote(s.parked)}</span>
          </li>
        ))}
      </ul>
      {items.length > NAMED ? <p class="muted">and {items.length - NAMED} more, in Sessions.</p> : null}
    </section>
  );
}
