import { useSignal } from '@preact/signals';
import { useAction } from './action';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { putFresh } from './store';
import { Session } from './types';
import { budgetFromFields, formatBudget, formatTokens, formatUsd } from './usage-format';

/** A session's tokens and cost, short: what the list shows on each row. */
export function SpendLine({ session: s }: { session: Session }) {
  return (
    <span class="spend" title={`${s.usage.tokens} tokens in ${s.usage.turns} turns`}>
      {formatTokens(s.usage.tokens)} tokens · {formatUsd(s.usage.cost_usd, s.usage.cost_estimated)}
    </span>
  );
}

/**
 * A session's usage in full, its rate limit, and its budget, which the user may set (PATCH …/budget): a budget raised
 * past what it used releases the session its budget held.
 */
export function SessionSpending({ session: s }: { session: Session }) {
  const tokens = useSignal(s.budget?.tokens !== undefined ? String(s.budget.tokens) : '');
  const usd = useSignal(s.budget?.usd !== undefined ? String(s.budget.usd) : '');
  const { busy, error, attempt } = useAction();
  const save = async (): Promise<void> => {
    await attempt(async () => {
      const read = budgetFromFields(tokens.value, usd.value);
      if ('error' in read) throw new Error(read.error);
      putFresh(await api<Session>(`/coding-sessions/${encodeURIComponent(s.id)}/budget`, { method: 'PATCH', body: read.budget }));
    });
  };
  const u = s.usage;
  return (
    <div class="spending" aria-label={`Usage of ${s.alias}`}>
      <p class="label">usage</p>
      <dl class="facts">
        <dt>cost</dt>
        <dd>
          {formatUsd(u.cost_usd, u.cost_estimated)}
          {u.cost_estimated ? <span class="muted"> (partly estimated from the price table)</span> : null}
        </dd>
        <dt>tokens</dt>
        <dd>
          {u.tokens.toLocaleString('en-US')} in {u.turns} {u.turns === 1 ? 'turn' : 'turns'}: {u.input_tokens.toLocaleString('en-US')} in, {u.output_tokens.toLocaleString('en-US')} out,{' '}
          {u.cache_read_tokens.toLocaleString('en-US')} cache read, {u.cache_write_tokens.toLocaleString('en-US')} cache write
        </dd>
        <dt>budget</dt>
        <dd>{s.budget ? formatBudget(s.budget) : "its profile's, if any"}</dd>
        {s.rate_limit ? (
          <>
            <dt>rate limit</dt>
            <dd class={s.rate_limit.status === 'rejected' ? 'error' : undefined}>
              {s.rate_limit.status}
              {s.rate_limit.limit_type ? ` (${s.rate_limit.limit_type})` : ''}
              {s.rate_limit.resets_at ? `, resets ${new Date(s.rate_limit.resets_at).toLocaleString()}` : ''}
            </dd>
          </>
        ) : null}
      </dl>
      <form
        class="fields budget"
        aria-label={`Budget of ${s.alias}`}
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label>
          Budget, tokens
          <input inputMode="numeric" value={tokens.value} placeholder="no limit" onInput={(e) => (tokens.value = e.currentTarget.value)} />
        </label>
        <label>
          Budget, dollars
          <input inputMode="decimal" value={usd.value} placeholder="no limit" onInput={(e) => (usd.value = e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy.value}>
          Save the budget of {s.alias}
        </button>
      </form>
      <ErrorAlert message={error.value} />
    </div>
  );
}
