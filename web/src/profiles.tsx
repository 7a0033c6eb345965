import { Signal, useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { ApiError, api, apiText } from './api';
import { ErrorAlert } from './error-alert';
import { errorText } from './error-text';
import { lineDiff } from './line-diff';
import { dump, load } from 'js-yaml';
import { Binding, LintFinding, LintResult, Preview, ProfileItem, documentOf, draftOfYamlDocument, mergePatchOf, valueAt, withValue, yamlDocumentOf } from './profile-draft';
import { HooksForm, LinesField, McpServersForm } from './profile-forms';
import { settings } from './store';
import { JsonObject } from './types';

const MODES = ['default', 'acceptEdits', 'plan', 'auto', 'dontAsk', 'bypassPermissions'] as const;
const SCOPES = ['shared', 'personal'] as const;
const SKILL_SOURCES = ['local', 'registry', 'git'] as const;
type Scope = (typeof SCOPES)[number];

/** The runtimes a profile can target, as the service lists them. */
const profileRuntimes = (): readonly string[] => settings.value?.profile_runtimes ?? ['auto'];

/** The profiles' UI icon names, drawn as a text glyph (no emoji: a machine without an emoji font shows boxes); an unknown name shows as a plain mark. */
const ICONS: Record<string, string> = { layout: '▦', brain: '✺', users: '☻', server: '▤', shield: '◈', eye: '◉', code: '⌨', book: '▥', search: '⌕' };
/** A malformed profile (listed with its error) has no document, so no icon. */
const iconOf = (p: ProfileItem): string | undefined => (p.error === null ? p.icon : undefined);

/** Saves text as a file: a link to a blob URL (same origin, so the page's CSP allows it), clicked and let go. */
async function download(name: string, text: Promise<string>): Promise<void> {
  const url = URL.createObjectURL(new Blob([await text], { type: 'application/yaml' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // Let go a minute later, not at once: a browser may still be reading the blob when the click returns.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The draft being edited: a saved profile (its id) or a new one (null). */
interface Editing {
  id: string | null;
  locked: boolean;
}

/** Item 6: the profiles, an editor linted as it is typed, apply with a diff against disk, and project bindings. */
export function ProfilesView() {
  const profiles = useSignal<ProfileItem[]>([]);
  const error = useSignal<string | null>(null);
  const editing = useSignal<Editing | null>(null);
  const draft = useSignal<JsonObject>({});
  const scope = useSignal<Scope>('shared');

  const load = async (): Promise<ProfileItem[]> => {
    const list = (await api<{ profiles: ProfileItem[] }>('/agent-profiles')).profiles;
    profiles.value = list;
    return list;
  };
  const act = (work: () => Promise<unknown>) => () => {
    error.value = null;
    work().catch((e) => (error.value = errorText(e)));
  };
  const open = (p: ProfileItem): void => {
    editing.value = { id: p.id, locked: p.locked };
    draft.value = documentOf(p);
    scope.value = p.scope;
  };
  const openId = async (id: string): Promise<void> => {
    const found = (await load()).find((p) => p.id === id);
    if (found) open(found);
  };

  useEffect(() => {
    load().catch((e) => (error.value = errorText(e)));
  }, []);

  const current = editing.value;
  const selected = current?.id ? profiles.value.find((p) => p.id === current.id) : undefined;
  return (
    <section aria-labelledby="profiles-title">
      <h2 id="profiles-title">Profiles</h2>
      <ErrorAlert message={error.value} />
      <div class="profiles">
        <div>
          <ul class="profile-list" aria-label="Profiles">
            {profiles.value.map((p) => (
              <li key={p.id}>
                <button type="button" class="profile-item" aria-pressed={current?.id === p.id} onClick={() => open(p)}>
                  <span class="icon" aria-hidden="true" title={iconOf(p)}>
                    {ICONS[iconOf(p) ?? ''] ?? '◆'}
                  </span>
                  <span class="title">{p.name ?? p.id}</span>
                  <span class="chip">{p.source}</span>
                  {p.locked ? <span class="chip">locked</span> : null}
                  {p.is_default ? <span class="chip default">default</span> : null}
                  {p.error ? <span class="chip error">malformed</span> : null}
                </button>
              </li>
            ))}
          </ul>
          <button
            type="button"
            onClick={() => {
              editing.value = { id: null, locked: false };
              draft.value = { name: '', version: 2, target_runtime: 'claude-code' };
              scope.value = 'shared';
            }}
          >
            New profile
          </button>
        </div>
        <div>
          {current ? (
            <Editor
              key={current.id ?? '(new)'}
              editing={current}
              draft={draft}
              scope={scope}
              selected={selected}
              onSaved={(id) => openId(id)}
              onGone={async () => {
                editing.value = null;
                await load();
              }}
              act={act}
              reload={load}
            />
          ) : (
            <p class="muted">Choose a profile to edit or apply, or start a new one.</p>
          )}
          <ImportForm onImported={(id) => openId(id)} act={act} />
        </div>
      </div>
      <Bindings profiles={profiles.value} act={act} />
    </section>
  );
}

type Act = (work: () => Promise<unknown>) => () => void;

function Editor(props: {
  editing: Editing;
  draft: Signal<JsonObject>;
  scope: Signal<Scope>;
  selected: ProfileItem | undefined;
  onSaved: (id: string) => Promise<void>;
  onGone: () => Promise<void>;
  act: Act;
  reload: () => Promise<unknown>;
}) {
  const { editing, draft, scope, selected, act } = props;
  const lint = useSignal<LintShown | null>(null);
  const saved = useSignal<string | null>(null);
  const yaml = useSignal<string | null>(null);
  const asYaml = useSignal(false);
  const readOnly = editing.locked;
  const doc = draft.value;

  // Lint the draft as it is typed: the last change of a burst sends one request.
  useEffect(() => {
    const timer = setTimeout(() => {
      api<LintResult>('/agent-profiles/lint', { method: 'POST', body: { document: draft.value, scope: scope.value } }).then(
        (r) => (lint.value = r),
        (e) => (lint.value = { errors: [{ path: '', message: errorText(e) }], warnings: [] }),
      );
    }, 300);
    return () => clearTimeout(timer);
  }, [draft.value, scope.value]);

  const set = (path: string[], value: unknown): void => {
    saved.value = null;
    draft.value = withValue(draft.value, path, value);
  };
  const str = (path: string[]) => (valueAt(doc, path) as string | undefined) ?? '';
  const text = (label: string, path: string[], opts: { long?: boolean; optional?: boolean } = {}) => {
    const onInput = (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) => {
      const v = e.currentTarget.value;
      set(path, v === '' && opts.optional ? undefined : v);
    };
    return (
      <label>
        {label}
        {opts.long ? <textarea rows={4} value={str(path)} readOnly={readOnly} onInput={onInput} /> : <input value={str(path)} readOnly={readOnly} onInput={onInput} />}
      </label>
    );
  };
  const list = (label: string, path: string[]) => <LinesField label={label} value={valueAt(doc, path)} readOnly={readOnly} onChange={(v) => set(path, v)} />;
  const choice = (label: string, path: string[], options: readonly string[], fallback: string) => (
    <label>
      {label}
      <select value={str(path) || fallback} disabled={readOnly} onChange={(e) => set(path, e.currentTarget.value)}>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );

  const save = async (): Promise<void> => {
    // An update sends what changed against the saved profile, with null for what the draft took out (PATCH removes it).
    const body = { ...(editing.id === null || !selected ? draft.value : mergePatchOf(documentOf(selected), draft.value)), scope: scope.value };
    const result = editing.id === null ? await api<{ id: string }>('/agent-profiles', { method: 'POST', body }) : await api<{ id: string }>(`/agent-profiles/${encodeURIComponent(editing.id)}`, { method: 'PATCH', body });
    await props.onSaved(result.id);
    saved.value = `Saved ${result.id}.`;
  };
  const path = editing.id === null ? '' : `/agent-profiles/${encodeURIComponent(editing.id)}`;

  return (
    <div class="card editor">
      <h3>{editing.id === null ? 'New profile' : `Profile ${editing.id}`}</h3>
      {readOnly ? <p class="muted">This profile is locked: duplicate it to edit a copy.</p> : null}
      <div class="actions">
        <button type="button" aria-pressed={asYaml.value} onClick={() => (asYaml.value = !asYaml.value)}>
          {asYaml.value ? 'Edit as form' : 'Edit as YAML'}
        </button>
      </div>
      {asYaml.value ? (
        <YamlEditor draft={draft.value} readOnly={readOnly} onChange={(d) => ((saved.value = null), (draft.value = d))} />
      ) : (
        <>
          <div class="fields">
            {text('Name', ['name'])}
            {text('Icon', ['icon'], { optional: true })}
            {choice('Runtime', ['target_runtime'], profileRuntimes(), 'auto')}
            <label>
              Scope
              <select value={scope.value} disabled={readOnly} onChange={(e) => (scope.value = e.currentTarget.value as Scope)}>
                {SCOPES.map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
            {choice('Permission mode', ['permissions', 'mode'], MODES, 'acceptEdits')}
          </div>
          <div class="fields">
            {text('Model', ['model', 'model'], { optional: true })}
            {text('Model provider', ['model', 'provider'], { optional: true })}
            {list('Fallback models', ['model', 'fallback'])}
          </div>
          <div class="fields wide">
            <JsonField label="Model options (JSON)" value={valueAt(doc, ['model', 'options'])} readOnly={readOnly} onChange={(v) => set(['model', 'options'], v)} />
            {text('Description', ['description'], { optional: true, long: true })}
            {text('System prompt', ['instructions', 'system_prompt'], { optional: true, long: true })}
          </div>
          <div class="fields">
            {list('Instruction files', ['instructions', 'files'])}
            {text('Auto-apply directory', ['auto_apply_dir'], { optional: true })}
            {text('Default working directory', ['default_cwd'], { optional: true })}
          </div>
          <div class="fields">
            {choice('Isolation', ['isolation'], ['none', 'worktree'], 'none')}
            {text('Worktree setup command', ['worktree', 'setup'], { optional: true })}
            {list('Untracked files copied into worktrees', ['worktree', 'copy'])}
          </div>
          <Rows
            label="Path rules"
            item="rule"
            rows={valueAt(doc, ['instructions', 'rules'])}
            columns={[
              { key: 'glob', label: 'Glob' },
              { key: 'instruction', label: 'Instruction' },
            ]}
            blank={{ glob: '', instruction: '' }}
            readOnly={readOnly}
            onChange={(rows) => set(['instructions', 'rules'], rows)}
          />
          <Rows
            label="Skills"
            item="skill"
            rows={valueAt(doc, ['skills'])}
            columns={[
              { key: 'name', label: 'Name' },
              { key: 'source', label: 'Source', options: SKILL_SOURCES },
              { key: 'path', label: 'Path', optional: true },
              { key: 'version', label: 'Version', optional: true },
            ]}
            blank={{ name: '', source: 'local' }}
            readOnly={readOnly}
            onChange={(rows) => set(['skills'], rows)}
          />
          <div class="fields">
            {list('Built-in tools', ['tools', 'builtin'])}
            {list('Denied tools', ['tools', 'deny'])}
            {list('Allow rules', ['permissions', 'allow'])}
            {list('Deny rules', ['permissions', 'deny'])}
            {list('Ask rules', ['permissions', 'ask'])}
          </div>
          <McpServersForm value={valueAt(doc, ['tools', 'mcp_servers'])} readOnly={readOnly} onChange={(v) => set(['tools', 'mcp_servers'], v)} />
          <HooksForm value={valueAt(doc, ['hooks'])} readOnly={readOnly} onChange={(v) => set(['hooks'], v)} />
        </>
      )}
      <Findings lint={lint.value} />
      <div class="actions">
        {readOnly ? null : (
          <button type="button" class="primary" onClick={act(save)}>
            Save profile
          </button>
        )}
        {editing.id !== null ? (
          <>
            <button type="button" onClick={act(async () => props.onSaved((await api<{ id: string }>(`${path}/duplicate`, { method: 'POST', body: {} })).id))}>
              Duplicate
            </button>
            {selected?.is_default ? null : (
              <button type="button" onClick={act(async () => (await api(`${path}/set-default`, { method: 'POST' }), props.reload()))}>
                Set as default
              </button>
            )}
            <button type="button" onClick={act(() => download(`${editing.id}.yaml`, apiText(`${path}/export`)))}>
              Export YAML
            </button>
            <button type="button" onClick={act(async () => (yaml.value = yaml.value === null ? await apiText(`${path}/export`) : null))} aria-expanded={yaml.value !== null}>
              {yaml.value === null ? 'Show YAML' : 'Hide YAML'}
            </button>
            {readOnly ? null : (
              <button
                type="button"
                class="danger"
                onClick={act(async () => {
                  if (!confirm(`Delete profile ${editing.id}?`)) return;
                  await api(path, { method: 'DELETE' });
                  await props.onGone();
                })}
              >
                Delete
              </button>
            )}
          </>
        ) : null}
      </div>
      {saved.value ? <p role="status">{saved.value}</p> : null}
      {yaml.value !== null ? (
        <>
          <p class="label">YAML (as saved)</p>
          <pre aria-label="Profile YAML">{yaml.value}</pre>
        </>
      ) : null}
      {editing.id !== null ? <ApplyPanel id={editing.id} act={act} /> : null}
    </div>
  );
}

/** The draft as its YAML file reads: typed YAML that parses becomes the draft (and is linted); until then it says what is wrong. */
function YamlEditor(props: { draft: JsonObject; readOnly: boolean; onChange: (draft: JsonObject) => void }) {
  const text = useSignal(dump(yamlDocumentOf(props.draft), { noRefs: true, lineWidth: 120 }));
  const problem = useSignal<string | null>(null);
  return (
    <label class="yaml-editor">
      Profile YAML
      <textarea
        rows={24}
        class="code"
        spellcheck={false}
        value={text.value}
        readOnly={props.readOnly}
        aria-invalid={problem.value !== null}
        onInput={(e) => {
          text.value = e.currentTarget.value;
          let parsed: ReturnType<typeof draftOfYamlDocument>;
          try {
            parsed = draftOfYamlDocument(load(text.value));
          } catch (err) {
            parsed = { ok: false, error: errorText(err).split('\n')[0] };
          }
          if (parsed.ok) {
            problem.value = null;
            props.onChange(parsed.draft);
          } else problem.value = `not valid YAML: ${parsed.error}`;
        }}
      />
      <ErrorAlert message={problem.value} inline />
    </label>
  );
}

interface Column {
  key: string;
  label: string;
  options?: readonly string[];
  /** Left out of the row when blank. */
  optional?: boolean;
}

/** A list of small records (path rules, skills): one row of inputs each, added and removed by buttons. */
function Rows(props: { label: string; item: string; rows: unknown; columns: Column[]; blank: JsonObject; readOnly: boolean; onChange: (rows: JsonObject[]) => void }) {
  const rows = Array.isArray(props.rows) ? (props.rows as JsonObject[]) : [];
  const edit = (i: number, column: Column, value: string): void =>
    props.onChange(rows.map((r, j) => (j !== i ? r : Object.fromEntries(Object.entries({ ...r, [column.key]: value }).filter(([k, v]) => !(v === '' && props.columns.find((c) => c.key === k)?.optional))))));
  return (
    <fieldset class="rows">
      <legend>{props.label}</legend>
      {rows.length === 0 ? <p class="muted">None.</p> : null}
      {rows.map((row, i) => (
        <div class="fields" key={i}>
          {props.columns.map((c) => {
            const value = typeof row[c.key] === 'string' ? (row[c.key] as string) : '';
            const label = `${props.item} ${i + 1} ${c.label.toLowerCase()}`;
            return c.options ? (
              <select key={c.key} aria-label={label} value={value || c.options[0]} disabled={props.readOnly} onChange={(e) => edit(i, c, e.currentTarget.value)}>
                {c.options.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            ) : (
              <input key={c.key} aria-label={label} placeholder={c.label} value={value} readOnly={props.readOnly} onInput={(e) => edit(i, c, e.currentTarget.value)} />
            );
          })}
          {props.readOnly ? null : (
            <button type="button" onClick={() => props.onChange(rows.filter((_, j) => j !== i))}>
              Remove {props.item} {i + 1}
            </button>
          )}
        </div>
      ))}
      {props.readOnly ? null : (
        <button type="button" onClick={() => props.onChange([...rows, props.blank])}>
          Add {props.item}
        </button>
      )}
    </fieldset>
  );
}

/** A JSON-valued field: the draft changes only when the text parses; until then it says what is wrong. */
function JsonField(props: { label: string; value: unknown; readOnly: boolean; onChange: (value: unknown) => void }) {
  const text = useSignal(props.value === undefined ? '' : JSON.stringify(props.value, null, 2));
  const problem = useSignal<string | null>(null);
  return (
    <label>
      {props.label}
      <textarea
        rows={5}
        class="code"
        value={text.value}
        readOnly={props.readOnly}
        aria-invalid={problem.value !== null}
        onInput={(e) => {
          text.value = e.currentTarget.value;
          if (text.value.trim() === '') {
            problem.value = null;
            props.onChange(undefined);
            return;
          }
          try {
            props.onChange(JSON.parse(text.value));
            problem.value = null;
          } catch (err) {
            problem.value = `not JSON: ${errorText(err)}`;
          }
        }}
      />
      <ErrorAlert message={problem.value} inline />
    </label>
  );
}

type FindingShown = Pick<LintFinding, 'path' | 'message'>;
/** What the lint panel lists: the service's findings, or, when the lint request itself failed, that failure as an error. */
type LintShown = { errors: FindingShown[]; warnings: FindingShown[] };

function Findings({ lint }: { lint: LintShown | null }) {
  const item = (f: FindingShown, kind: 'error' | 'warning') => (
    <li key={`${kind}${f.path}${f.message}`} class={kind}>
      <strong>{kind}</strong> {f.path ? <code>{f.path}</code> : null} {f.message}
    </li>
  );
  return (
    <div class="lint" role="status" aria-live="polite" aria-label="Lint">
      {lint === null ? (
        <p class="muted">Linting…</p>
      ) : lint.errors.length + lint.warnings.length === 0 ? (
        <p>Lint: no problems.</p>
      ) : (
        <ul>
          {lint.errors.map((f) => item(f, 'error'))}
          {lint.warnings.map((f) => item(f, 'warning'))}
        </ul>
      )}
    </div>
  );
}

/** Preview shows each file as a diff of what is on disk against what apply would write; apply refuses drift without force. */
function ApplyPanel({ id, act }: { id: string; act: Act }) {
  const dir = useSignal('');
  const runtime = useSignal<string>('auto');
  const preview = useSignal<Preview | null>(null);
  const drift = useSignal<string | null>(null);
  const done = useSignal<string | null>(null);

  const load = async (): Promise<void> => {
    drift.value = null;
    done.value = null;
    const q = new URLSearchParams({ runtime: runtime.value, ...(dir.value.trim() ? { dir: dir.value.trim() } : {}) });
    preview.value = await api<Preview>(`/agent-profiles/${encodeURIComponent(id)}/preview?${q.toString()}`);
  };
  const apply = async (force: boolean): Promise<void> => {
    drift.value = null;
    try {
      const body = { runtime: runtime.value, force, ...(dir.value.trim() ? { dir: dir.value.trim() } : {}) };
      const result = await api<{ files: Array<{ path: string; action: string }> }>(`/agent-profiles/${encodeURIComponent(id)}/apply`, { method: 'POST', body });
      // The preview is taken again to show the files as they now are; the result is shown after, as load clears it.
      await load();
      done.value = `Applied: ${result.files.map((f) => `${f.path} ${f.action}`).join(', ')}`;
    } catch (e) {
      if (e instanceof ApiError && e.code === 'apply_drift') drift.value = e.message;
      else throw e;
    }
  };

  return (
    <div class="apply">
      <h4>Apply</h4>
      <div class="fields">
        <label>
          Apply into directory
          <input value={dir.value} placeholder="/path/to/project" onInput={(e) => (dir.value = e.currentTarget.value)} />
        </label>
        <label>
          Apply for runtime
          <select value={runtime.value} onChange={(e) => (runtime.value = e.currentTarget.value)}>
            {profileRuntimes().map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div class="actions">
        <button type="button" onClick={act(load)}>
          Preview
        </button>
        {preview.value ? (
          <button type="button" class="primary" onClick={act(() => apply(false))}>
            Apply
          </button>
        ) : null}
      </div>
      <ErrorAlert message={drift.value} />
      {drift.value ? (
        <button type="button" class="danger" onClick={act(() => apply(true))}>
          Apply anyway (force)
        </button>
      ) : null}
      {done.value ? <p role="status">{done.value}</p> : null}
      {preview.value ? (
        <div class="preview" aria-label="Apply preview">
          <p class="muted">
            {preview.value.runtime} ({preview.value.runtime_source}) into {preview.value.dir}
          </p>
          {preview.value.errors.map((f) => (
            <p key={f.path + f.message} class="error">
              {f.path} {f.message}
            </p>
          ))}
          {preview.value.files.map((f) => (
            <details key={f.path} open={f.action !== 'unchanged'} class="file">
              <summary>
                <code>{f.path}</code> <span class={`chip action-${f.action}`}>{f.action}</span> {f.reason ? <span class="muted">{f.reason}</span> : null}
              </summary>
              {f.current_too_large ? <p class="muted">The file on disk is too large to diff.</p> : null}
              <pre class="diff" aria-label={`Diff of ${f.path}`}>
                {lineDiff(f.current, f.content).map((l, i) => (
                  <span key={i} class={`diff-${l.kind}`}>
                    {l.kind === 'add' ? '+ ' : l.kind === 'del' ? '- ' : '  '}
                    {l.text}
                    {'\n'}
                  </span>
                ))}
              </pre>
            </details>
          ))}
        </div>
      ) : null}
    </div>
  );
}

function ImportForm({ onImported, act }: { onImported: (id: string) => Promise<void>; act: Act }) {
  const yaml = useSignal('');
  return (
    <details class="card import">
      <summary>Import a profile (YAML)</summary>
      <label>
        YAML document
        <textarea rows={6} class="code" value={yaml.value} onInput={(e) => (yaml.value = e.currentTarget.value)} />
      </label>
      <button
        type="button"
        onClick={act(async () => {
          const { profile } = await api<{ profile: { id: string } }>('/agent-profiles/import', { method: 'POST', body: { yaml: yaml.value } });
          yaml.value = '';
          await onImported(profile.id);
        })}
      >
        Import
      </button>
    </details>
  );
}

function Bindings({ profiles, act }: { profiles: ProfileItem[]; act: Act }) {
  const bindings = useSignal<Binding[]>([]);
  const dir = useSignal('');
  const profileId = useSignal('');
  const load = async (): Promise<void> => {
    bindings.value = (await api<{ bindings: Binding[] }>('/agent-profiles/project-binding')).bindings;
  };
  const bind = async (project_dir: string, profile_id: string | null): Promise<void> => {
    await api('/agent-profiles/project-binding', { method: 'POST', body: { project_dir, profile_id } });
    await load();
  };
  useEffect(() => {
    act(load)();
  }, []);
  return (
    <section class="card bindings" aria-labelledby="bindings-title">
      <h3 id="bindings-title">Project bindings</h3>
      {bindings.value.length === 0 ? <p class="muted">No directory is bound to a profile.</p> : null}
      <ul>
        {bindings.value.map((b) => (
          <li key={b.project_dir}>
            <code>{b.project_dir}</code> → {b.profile_id}{' '}
            <button type="button" onClick={act(() => bind(b.project_dir, null))}>
              Unbind {b.project_dir}
            </button>
          </li>
        ))}
      </ul>
      <div class="fields">
        <label>
          Project directory
          <input value={dir.value} placeholder="/path/to/project" onInput={(e) => (dir.value = e.currentTarget.value)} />
        </label>
        <label>
          Profile
          <select value={profileId.value} onChange={(e) => (profileId.value = e.currentTarget.value)}>
            <option value="">Choose…</option>
            {profiles
              .filter((p) => p.error === null)
              .map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name ?? p.id}
                </option>
              ))}
          </select>
        </label>
      </div>
      <button type="button" disabled={dir.value.trim() === '' || profileId.value === ''} onClick={act(() => bind(dir.value.trim(), profileId.value))}>
        Bind
      </button>
    </section>
  );
}
