import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { useAction } from './action';
import { api } from './api';
import { ErrorAlert } from './error-alert';
import { HooksChange, HooksInstall } from './types';

type Verb = 'install' | 'uninstall';
type Scope = 'user' | 'project';

/**
 * Brainstem's hooks in Claude Code's settings (POST …/external/claude-hooks/install|uninstall): the preview (the file's
 * diff) first, written only once the user confirms it. The service writes the file; the user's own hooks stay as they are.
 */
export function ClaudeHooksCard() {
  const installs = useSignal<HooksInstall[] | null>(null);
  const scope = useSignal<Scope>('user');
  const folder = useSignal('');
  const preview = useSignal<{ verb: Verb; change: HooksChange } | null>(null);
  const done = useSignal<string | null>(null);
  const { busy, error, attempt } = useAction();

  const load = async (): Promise<void> => {
    installs.value = (await api<{ installs: HooksInstall[] }>('/external/claude-hooks')).installs;
  };
  useEffect(() => void attempt(load), []);

  const target = () => (scope.value === 'user' ? { scope: 'user' } : { scope: 'project', project_dir: folder.value.trim() });
  const ask = (verb: Verb) =>
    attempt(async () => {
      done.value = null;
      const change = await api<HooksChange>(`/external/claude-hooks/${verb}`, { method: 'POST', body: { ...target(), dry_run: true } });
      if (change.diff === '') {
        preview.value = null;
        done.value = verb === 'install' ? `Brainstem's hooks are in ${change.path} already.` : `Brainstem's hooks are not in ${change.path}.`;
      } else preview.value = { verb, change };
    });
  const write = (verb: Verb) =>
    attempt(async () => {
      const change = await api<HooksChange>(`/external/claude-hooks/${verb}`, { method: 'POST', body: target() });
      preview.value = null;
      const backup = change.backup_path ? ` The file as it was: ${change.backup_path}.` : '';
      done.value = verb === 'install' ? `Installed into ${change.path}.${backup}` : `${change.restored === 'original' ? 'Restored, byte for byte:' : 'Taken out of'} ${change.path}.${backup}`;
      await load();
    });

  const p = preview.value;
  return (
    <div class="card claude-hooks" aria-labelledby="claude-hooks-title">
      <h3 id="claude-hooks-title">Claude sessions you run yourself</h3>
      <p class="muted">
        Brainstem's hooks in Claude Code's settings bring every claude you start (a terminal, an IDE, a background agent) in as an external session. They join
        supervision only when you include them.
      </p>
      {installs.value && installs.value.length > 0 ? (
        <ul class="installs">
          {installs.value.map((i) => (
            <li key={i.path}>
              {i.scope}: <code>{i.path}</code>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">Not installed.</p>
      )}
      <div class="fields">
        <label>
          Scope
          <select value={scope.value} onChange={(e) => ((scope.value = e.currentTarget.value as Scope), (preview.value = null))}>
            <option value="user">user: ~/.claude/settings.json</option>
            <option value="project">project: its .claude/settings.local.json</option>
          </select>
        </label>
        {scope.value === 'project' ? (
          <label>
            Project folder (absolute)
            <input value={folder.value} placeholder="/home/me/src/app" onInput={(e) => ((folder.value = e.currentTarget.value), (preview.value = null))} />
          </label>
        ) : null}
      </div>
      <div class="actions">
        <button type="button" disabled={busy.value} onClick={() => void ask('install')}>
          Preview install…
        </button>
        <button type="button" disabled={busy.value} onClick={() => void ask('uninstall')}>
          Preview uninstall…
        </button>
      </div>
      {p ? (
        <div class="preview" role="region" aria-label="Settings preview">
          <p>
            {p.verb === 'install' ? 'Installing' : 'Uninstalling'} changes <code>{p.change.path}</code> so:
          </p>
          <pre class="diff">{p.change.diff}</pre>
          <div class="actions">
            <button type="button" class="primary" disabled={busy.value} onClick={() => void write(p.verb)}>
              {p.verb === 'install' ? 'Install the hooks' : 'Uninstall the hooks'}
            </button>
            <button type="button" onClick={() => (preview.value = null)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      {done.value ? <p role="status">{done.value}</p> : null}
      <ErrorAlert message={error.value} />
    </div>
  );
}
