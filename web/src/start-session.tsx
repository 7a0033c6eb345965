import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { errorText } from './error-text';
import { ProfileItem } from './profile-draft';
import { settings } from './store';
import { Session } from './types';

/** Starts a session (POST /coding-sessions): runtime, profile, cwd and prompt; the command runtime takes a command and its arguments. */
export function StartSessionForm({ onStarted }: { onStarted: (s: Session) => void }) {
  const runtime = useSignal('auto');
  const profile = useSignal('');
  const profiles = useSignal<ProfileItem[]>([]);
  const title = useSignal('');
  const cwd = useSignal('');
  const prompt = useSignal('');
  const command = useSignal('');
  const args = useSignal('');
  const isolation = useSignal<'' | 'none' | 'worktree'>('');
  const baseRef = useSignal('');
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const started = useSignal<Session | null>(null);

  useEffect(() => {
    api<{ profiles: ProfileItem[] }>('/agent-profiles').then(
      (r) => (profiles.value = r.profiles),
      (e: unknown) => (error.value = `profiles: ${errorText(e)}`),
    );
  }, []);

  // The service's runtimes; until they come, only auto (which the service resolves) can be chosen.
  const options = settings.value?.session_runtimes ?? [{ name: 'auto', takes_command: false, installed: true }];
  const takesCommand = options.find((o) => o.name === runtime.value)?.takes_command === true;

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    busy.value = true;
    error.value = null;
    started.value = null;
    const isCommand = takesCommand;
    const body = {
      ...(runtime.value !== 'auto' ? { runtime: runtime.value } : {}),
      ...(profile.value !== '' ? { profile_id: profile.value } : {}),
      ...(title.value.trim() !== '' ? { title: title.value.trim() } : {}),
      ...(cwd.value.trim() !== '' ? { cwd: cwd.value.trim() } : {}),
      ...(prompt.value.trim() !== '' ? { prompt: prompt.value } : {}),
      ...(isCommand ? { command: command.value.trim() } : {}),
      ...(isCommand && args.value.trim() !== '' ? { args: args.value.split('\n').filter((a) => a !== '') } : {}),
      ...(isolation.value !== '' ? { isolation: isolation.value } : {}),
      ...(isolation.value === 'worktree' && baseRef.value.trim() !== '' ? { base_ref: baseRef.value.trim() } : {}),
    };
    try {
      const s = await api<Session>('/coding-sessions', { method: 'POST', body });
      started.value = s;
      prompt.value = '';
      onStarted(s);
    } catch (err) {
      error.value = errorText(err);
    } finally {
      busy.value = false;
    }
  };

  return (
    <form class="card start" onSubmit={submit} aria-labelledby="start-title">
      <h3 id="start-title">Start a session</h3>
      <div class="fields">
        <label>
          Runtime
          <select value={runtime.value} onChange={(e) => (runtime.value = e.currentTarget.value)}>
            {options.map((r) => (
              <option key={r.name} value={r.name}>
                {r.installed ? r.name : `${r.name} (not installed)`}
              </option>
            ))}
          </select>
        </label>
        <label>
          Profile
          <select value={profile.value} onChange={(e) => (profile.value = e.currentTarget.value)}>
            <option value="">the default profile</option>
            {profiles.value.map((p) => (
              <option key={p.id} value={p.id} disabled={p.name === null}>
                {p.name ?? 'malformed'} ({p.id})
              </option>
            ))}
          </select>
        </label>
        <label>
          Title (optional)
          <input value={title.value} maxLength={200} onInput={(e) => (title.value = e.currentTarget.value)} />
        </label>
        <label>
          Working folder
          <input value={cwd.value} placeholder="the service's folder" onInput={(e) => (cwd.value = e.currentTarget.value)} />
        </label>
        <label>
          Isolation
          <select value={isolation.value} onChange={(e) => (isolation.value = e.currentTarget.value as '' | 'none' | 'worktree')}>
            <option value="">the profile's (none unless it says)</option>
            <option value="none">none: the folder as it is</option>
            <option value="worktree">worktree: a branch and folder of its own</option>
          </select>
        </label>
        {isolation.value === 'worktree' ? (
          <label>
            Base (branch, tag or commit)
            <input value={baseRef.value} placeholder="the checkout's HEAD" onInput={(e) => (baseRef.value = e.currentTarget.value)} />
          </label>
        ) : null}
        {takesCommand ? (
          <>
            <label>
              Command
              <input value={command.value} required onInput={(e) => (command.value = e.currentTarget.value)} />
            </label>
            <label>
              Arguments (one a line)
              <textarea rows={2} value={args.value} onInput={(e) => (args.value = e.currentTarget.value)} />
            </label>
          </>
        ) : null}
      </div>
      <label class="compose">
        Prompt
        <textarea rows={3} value={prompt.value} onInput={(e) => (prompt.value = e.currentTarget.value)} />
      </label>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy.value}>
          Start the session
        </button>
      </div>
      {started.value ? (
        <p role="status">
          Started {started.value.alias} ({started.value.id}).
        </p>
      ) : null}
      <ErrorAlert message={error.value} />
    </form>
  );
}
