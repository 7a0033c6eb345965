import { useSignal } from '@preact/signals';
import { ComponentChildren } from 'preact';
import { ErrorAlert } from './error-alert';
import { envOf, envText, fieldOf, freshKey, listOf, renamedAt, textOf } from './profile-draft';
import { JsonObject } from './types';

/** As src/profiles/profile.schema.ts has them. */
export const HOOK_EVENTS = ['SessionStart', 'PreToolUse', 'PostToolUse'] as const;
const HOOK_TYPES = ['command', 'http', 'prompt'] as const;
const MCP_TYPES = ['stdio', 'http'] as const;
type HookType = (typeof HOOK_TYPES)[number];

/** The field each hook type runs: a command's shell line, an http hook's URL, a prompt hook's prompt. */
const HOOK_FIELD: Record<HookType, { key: string; label: string }> = {
  command: { key: 'command', label: 'command' },
  http: { key: 'url', label: 'URL' },
  prompt: { key: 'prompt', label: 'prompt' },
};

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const recordOf = (v: unknown): JsonObject => (isObject(v) ? v : {});
const stringOf = (v: unknown): string => (typeof v === 'string' ? v : '');
const without = (o: JsonObject, keys: readonly string[]): JsonObject => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

/**
 * A textarea whose text is parsed into the draft as it is typed. It shows what was typed while that still reads as
 * the draft's value (a trailing newline, a key without `=` yet), and the draft's own text once the draft changed elsewhere.
 */
export function ParsedText<T>(props: { label: string; hint?: string; /** Shown instead of the label, which stays the accessible name. */ caption?: string; value: unknown; parse: (text: string) => T; format: (value: unknown) => string; readOnly: boolean; rows?: number; onChange: (value: T) => void }) {
  const typed = useSignal<string | null>(null);
  const own = props.format(props.value);
  const shown = typed.value !== null && props.format(props.parse(typed.value)) === own ? typed.value : own;
  return (
    <label>
      <span class={props.caption ? 'muted' : undefined}>
        {props.caption ?? props.label} {props.hint ? <span class="muted">({props.hint})</span> : null}
      </span>
      <textarea
        aria-label={props.caption ? props.label : undefined}
        rows={props.rows ?? 3}
        value={shown}
        readOnly={props.readOnly}
        onInput={(e) => {
          typed.value = e.currentTarget.value;
          props.onChange(props.parse(typed.value));
        }}
      />
    </label>
  );
}

/** A list edited one item a line. */
export const LinesField = (props: { label: string; value: unknown; readOnly: boolean; onChange: (value: string[]) => void }) => (
  <ParsedText label={props.label} hint="one a line" value={props.value} parse={listOf} format={textOf} readOnly={props.readOnly} onChange={props.onChange} />
);

function Select(props: { label: string; value: string; options: readonly string[]; readOnly: boolean; onChange: (value: string) => void }) {
  return (
    <select aria-label={props.label} value={props.value} disabled={props.readOnly} onChange={(e) => props.onChange(e.currentTarget.value)}>
      {props.options.map((o) => (
        <option key={o} value={o}>
          {o}
        </option>
      ))}
    </select>
  );
}

/** A short visible caption over an input whose accessible name (which contains the caption) says which row it is. */
function Labelled(props: { caption: string; children: ComponentChildren }) {
  return (
    <label>
      <span class="muted">{props.caption}</span>
      {props.children}
    </label>
  );
}

/**
 * The hooks, per event: a row per hook with its type, what it runs (command, URL or prompt, by type), matcher and
 * timeout. An event whose last hook is removed leaves the draft, so saving removes it on the service.
 */
export function HooksForm(props: { value: unknown; readOnly: boolean; onChange: (hooks: JsonObject) => void }) {
  const hooks = recordOf(props.value);
  const setEvent = (event: string, rows: JsonObject[]): void => props.onChange(rows.length === 0 ? without(hooks, [event]) : { ...hooks, [event]: rows });
  return (
    <fieldset class="rows">
      <legend>Hooks</legend>
      {HOOK_EVENTS.map((event) => {
        const rows = (Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : []).map(recordOf);
        const edit = (i: number, row: JsonObject): void => setEvent(event, rows.map((r, j) => (j === i ? row : r)));
        return (
          <fieldset class="rows" key={event}>
            <legend>{event}</legend>
            {rows.length === 0 ? <p class="muted">No {event} hooks.</p> : null}
            {rows.map((row, i) => {
              const name = `${event} hook ${i + 1}`;
              const type = (HOOK_TYPES as readonly string[]).includes(stringOf(row.type)) ? (row.type as HookType) : 'command';
              const field = HOOK_FIELD[type];
              const timeout = fieldOf(row, 'timeout');
              return (
                <div class="fields hook" key={i}>
                  <Labelled caption="Type">
                    <Select
                      label={`${name} type`}
                      value={type}
                      options={HOOK_TYPES}
                      readOnly={props.readOnly}
                      // What the old type ran means nothing to the new one: it is dropped, not left hidden in the draft.
                      onChange={(t) => edit(i, { ...without(row, ['type', 'command', 'url', 'prompt']), type: t, [HOOK_FIELD[t as HookType].key]: '' })}
                    />
                  </Labelled>
                  <Labelled caption={field.label[0].toUpperCase() + field.label.slice(1)}>
                    <input aria-label={`${name} ${field.label}`} value={stringOf(fieldOf(row, field.key))} readOnly={props.readOnly} onInput={(e) => edit(i, { ...row, [field.key]: e.currentTarget.value })} />
                  </Labelled>
                  <Labelled caption="Matcher">
                    <input
                      aria-label={`${name} matcher`}
                      placeholder={event === 'SessionStart' ? 'startup, resume…' : 'tool name or pattern'}
                      value={stringOf(fieldOf(row, 'matcher'))}
                      readOnly={props.readOnly}
                      onInput={(e) => edit(i, e.currentTarget.value === '' ? without(row, ['matcher']) : { ...row, matcher: e.currentTarget.value })}
                    />
                  </Labelled>
                  <Labelled caption="Timeout (s)">
                    <input
                      aria-label={`${name} timeout (s)`}
                      type="number"
                      min={1}
                      max={86400}
                      placeholder="60"
                      value={typeof timeout === 'number' ? String(timeout) : ''}
                      readOnly={props.readOnly}
                      onInput={(e) => {
                        const v = e.currentTarget.value;
                        edit(i, v === '' ? without(row, ['timeout']) : { ...row, timeout: Number(v) });
                      }}
                    />
                  </Labelled>
                  {props.readOnly ? null : (
                    <button type="button" onClick={() => setEvent(event, rows.filter((_, j) => j !== i))}>
                      Remove {name}
                    </button>
                  )}
                </div>
              );
            })}
            {props.readOnly ? null : (
              <div class="actions">
                <button type="button" onClick={() => setEvent(event, [...rows, { type: 'command', command: '' }])}>
                  Add {event} hook
                </button>
                {rows.length > 0 ? (
                  <button type="button" onClick={() => setEvent(event, [])}>
                    Remove all {event} hooks
                  </button>
                ) : null}
              </div>
            )}
          </fieldset>
        );
      })}
    </fieldset>
  );
}

/**
 * The MCP servers: a row per server with its name (its key), type, command and arguments or URL, and environment.
 * A removed server leaves the draft, so saving removes it on the service.
 */
export function McpServersForm(props: { value: unknown; readOnly: boolean; onChange: (servers: JsonObject | undefined) => void }) {
  const servers = recordOf(props.value);
  const entries = Object.entries(servers);
  const set = (next: JsonObject): void => props.onChange(Object.keys(next).length === 0 ? undefined : next);
  return (
    <fieldset class="rows">
      <legend>MCP servers</legend>
      {entries.length === 0 ? <p class="muted">None.</p> : null}
      {entries.map(([name, raw], i) => (
        <McpServerRow
          key={i}
          index={i}
          name={name}
          server={recordOf(raw)}
          taken={entries.filter((_, j) => j !== i).map(([n]) => n)}
          readOnly={props.readOnly}
          onRename={(next) => set(renamedAt(servers, i, next))}
          onChange={(server) => set({ ...servers, [name]: server })}
          onRemove={() => set(without(servers, [name]))}
        />
      ))}
      {props.readOnly ? null : (
        <button type="button" onClick={() => set({ ...servers, [freshKey(servers, 'server')]: { type: 'stdio', command: '' } })}>
          Add MCP server
        </button>
      )}
    </fieldset>
  );
}

function McpServerRow(props: {
  index: number;
  name: string;
  server: JsonObject;
  taken: string[];
  readOnly: boolean;
  onRename: (name: string) => void;
  onChange: (server: JsonObject) => void;
  onRemove: () => void;
}) {
  // A name that is blank or another server's stays in the input, not the draft, until it is a name of its own.
  const pending = useSignal<string | null>(null);
  const label = `MCP server ${props.index + 1}`;
  const { server } = props;
  const type = stringOf(server.type) === 'http' ? 'http' : 'stdio';
  const problem = pending.value === null ? null : pending.value.trim() === '' ? 'a server needs a name' : `another server is named ${pending.value}`;
  const edit = (key: string, value: unknown): void => props.onChange(value === undefined ? without(server, [key]) : { ...server, [key]: value });
  return (
    <div class="fields mcp-server">
      <Labelled caption="Name">
        <input
          aria-label={`${label} name`}
          aria-invalid={problem !== null}
          value={pending.value ?? props.name}
          readOnly={props.readOnly}
          onInput={(e) => {
            const v = e.currentTarget.value;
            if (v.trim() === '' || props.taken.includes(v)) pending.value = v;
            else {
              pending.value = null;
              props.onRename(v);
            }
          }}
        />
        <ErrorAlert message={problem} inline />
      </Labelled>
      <Labelled caption="Type">
        <Select
          label={`${label} type`}
          value={type}
          options={MCP_TYPES}
          readOnly={props.readOnly}
          // A stdio server runs a command, an http one is reached at a URL: the other type's fields are dropped.
          onChange={(t) => props.onChange(t === 'http' ? { ...without(server, ['type', 'command', 'args']), type: t, url: stringOf(fieldOf(server, 'url')) } : { ...without(server, ['type', 'url']), type: t, command: stringOf(fieldOf(server, 'command')) })}
        />
      </Labelled>
      {type === 'stdio' ? (
        <>
          <Labelled caption="Command">
            <input aria-label={`${label} command`} value={stringOf(fieldOf(server, 'command'))} readOnly={props.readOnly} onInput={(e) => edit('command', e.currentTarget.value)} />
          </Labelled>
          <ParsedText label={`${label} arguments`} caption="Arguments" hint="one a line" value={server.args} parse={listOf} format={textOf} readOnly={props.readOnly} onChange={(args) => edit('args', args.length === 0 ? undefined : args)} />
        </>
      ) : (
        <Labelled caption="URL">
          <input aria-label={`${label} URL`} type="url" value={stringOf(fieldOf(server, 'url'))} readOnly={props.readOnly} onInput={(e) => edit('url', e.currentTarget.value)} />
        </Labelled>
      )}
      <ParsedText
        label={`${label} environment`}
        caption="Environment"
        hint="KEY=VALUE a line"
        value={server.env}
        parse={envOf}
        format={envText}
        readOnly={props.readOnly}
        onChange={(env) => edit('env', Object.keys(env).length === 0 ? undefined : env)}
      />
      {props.readOnly ? null : (
        <button type="button" onClick={props.onRemove}>
          Remove {label}
        </button>
      )}
    </div>
  );
}
