import { useSignal } from '@preact/signals';
import { api } from './api';
import { ClaudeHooksCard } from './claude-hooks';
import { ErrorAlert } from './error-alert';
import { BrainPresenceBanner } from './presence';
import { RoundsTimeline } from './rounds';
import { autonomous, report } from './store';
import { Autonomous } from './types';

/** The supervision switch (POST …/autonomous) with its task hint and turn cap, and where supervision stands. */
export function SupervisionView() {
  const state = autonomous.value;
  const on = state?.enabled === true;
  const taskHint = useSignal('');
  const maxTurns = useSignal('');
  const includeExternal = useSignal(false);
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);

  const toggle = async (): Promise<void> => {
    busy.value = true;
    error.value = null;
    try {
      const turns = Number.parseInt(maxTurns.value, 10);
      const body = on
        ? { enabled: false }
        : {
            enabled: true,
            ...(taskHint.value.trim() !== '' ? { task_hint: taskHint.value.trim() } : {}),
            ...(Number.isInteger(turns) ? { max_turns: turns } : {}),
            ...(includeExternal.value ? { include_external: true } : {}),
          };
      autonomous.value = (await api<{ autonomous: Autonomous | null }>('/session-os/main-brain/autonomous', { method: 'POST', body })).autonomous;
    } catch (e) {
      error.value = e instanceof Error ? e.message : String(e);
    } finally {
      busy.value = false;
    }
  };

  return (
    <section aria-labelledby="supervision-title">
      <h2 id="supervision-title">Supervision</h2>
      <BrainPresenceBanner />
      <div class="card supervision">
        <div class="switch-row">
          <button type="button" role="switch" aria-checked={on} aria-label="Supervision" class={on ? 'switch on' : 'switch'} disabled={busy.value} onClick={() => void toggle().catch(report)}>
            <span class="knob" />
          </button>
          <span>{on ? 'On: the main brain is woken when a supervised session needs it.' : 'Off: nothing wakes the main brain.'}</span>
        </div>
        {on ? null : (
          <div class="fields">
            <label>
              Task hint (optional)
              <input value={taskHint.value} onInput={(e) => (taskHint.value = e.currentTarget.value)} maxLength={2000} />
            </label>
            <label>
              Max turns (optional)
              <input type="number" min={1} inputMode="numeric" value={maxTurns.value} onInput={(e) => (maxTurns.value = e.currentTarget.value)} />
            </label>
            <label class="check">
              <input type="checkbox" checked={includeExternal.value} onChange={(e) => (includeExternal.value = e.currentTarget.checked)} />
              Include the claude sessions I run myself (external)
            </label>
          </div>
        )}
        <ErrorAlert message={error.value} />
        {state ? (
          <dl class="facts">
            <dt>Turns used</dt>
            <dd>
              {state.turns_used} of {state.max_turns}
            </dd>
            <dt>Task hint</dt>
            <dd>{state.task_hint ?? '—'}</dd>
            <dt>Round in flight</dt>
            <dd>{state.round_in_flight ?? 'none'}</dd>
            <dt>Waiting, not yet in a round</dt>
            <dd aria-label="Waiting, not yet in a round">{state.pending.length ? state.pending.map((p) => `${p.alias} (${p.state}, since ${p.since})`).join(', ') : 'none'}</dd>
            {state.closed_reason ? (
              <>
                <dt>Closed</dt>
                <dd>{state.closed_reason}</dd>
              </>
            ) : null}
          </dl>
        ) : (
          <p class="muted">Supervision has never been turned on.</p>
        )}
      </div>
      <ClaudeHooksCard />
      <RoundsTimeline />
    </section>
  );
}
