import { useSignal } from '@preact/signals';
import { checkToken, setToken } from './api';
import { ErrorAlert } from './error-alert';

/** Asks for the user's token once per tab; it is checked before it is kept. */
export function TokenPrompt() {
  const value = useSignal('');
  const error = useSignal<string | null>(null);
  const busy = useSignal(false);
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    const candidate = value.value.trim();
    if (candidate === '') return;
    busy.value = true;
    error.value = null;
    try {
      const check = await checkToken(candidate);
      if (check.ok) setToken(candidate);
      else error.value = check.message;
    } catch (err) {
      error.value = err instanceof Error ? err.message : String(err);
    } finally {
      busy.value = false;
    }
  };
  return (
    <main class="token-prompt">
      <h1>Brainstem</h1>
      <form onSubmit={submit}>
        <label for="token">API token</label>
        <p class="muted">
          Paste the token printed by <code>npx brainstem token</code>. It is kept in this tab only.
        </p>
        <input id="token" type="password" autocomplete="off" value={value.value} onInput={(e) => (value.value = e.currentTarget.value)} autofocus />
        <ErrorAlert message={error.value} />
        <button type="submit" class="primary" disabled={busy.value}>
          Open the dashboard
        </button>
      </form>
    </main>
  );
}
