import { useSignal, useSignalEffect } from '@preact/signals';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { errorText } from './error-text';
import { autonomous } from './store';
import { RoundView } from './types';

const PAGE = 20;

/** The main brain's rounds, newest first: fetched again whenever supervision moves (a round starts or ends). */
export function RoundsTimeline() {
  const rounds = useSignal<RoundView[] | null>(null);
  const error = useSignal<string | null>(null);
  useSignalEffect(() => {
    void autonomous.value;
    api<{ rounds: RoundView[] }>(`/session-os/main-brain/rounds?limit=${PAGE}`).then(
      (r) => {
        rounds.value = r.rounds;
        error.value = null;
      },
      (e: unknown) => (error.value = errorText(e)),
    );
  });
  const list = rounds.value;
  return (
    <section aria-labelledby="rounds-title">
      <h3 id="rounds-title">Rounds</h3>
      <ErrorAlert message={error.value} />
      {list !== null && list.length === 0 ? <p class="muted">No round yet.</p> : null}
      <ol class="timeline">
        {(list ?? []).map((r) => (
          <li key={r.id} class="card round" data-round={r.id}>
            <header>
              <strong>Turn {r.turn}</strong>
              <span class={`chip round-${r.status}`}>{r.status}</span>
              <span class="age" title={r.ended_at ? `ended ${r.ended_at}` : 'in flight'}>
                {r.started_at}
              </span>
            </header>
            <ul class="reasons">
              {r.reasons.map((w) => (
                <li key={`${w.session_id}-${w.trigger}`}>
                  <strong>{w.alias}</strong> {w.trigger}
                  {w.state ? ` (${w.state})` : ''}
                  {w.message ? <blockquote>{w.message}</blockquote> : null}
                </li>
              ))}
            </ul>
            {r.summary ? (
              <>
                <p class="label">summary</p>
                <blockquote class="summary">{r.summary}</blockquote>
              </>
            ) : null}
            {r.failure ? (
              <p class="error">
                <strong>failed: </strong>
                {r.failure}
              </p>
            ) : null}
            <details>
              <summary>The prompt</summary>
              <pre class="prompt">{r.prompt}</pre>
            </details>
          </li>
        ))}
      </ol>
    </section>
  );
}
