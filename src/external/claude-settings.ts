import { isDeepStrictEqual } from 'node:util';
import { DomainError } from '../common/domain-error';
import { HOOK_EVENTS, HookEventName } from './claude-hook-event';

/**
 * Brainstem's hooks in a Claude Code settings file, pure: merged in beside the user's own (which are never changed),
 * and taken out again. The shape is claude's: `hooks: {<Event>: [{matcher?, hooks: [{type: "command", command,
 * timeout}]}]}`, timeout in seconds.
 */

export interface HookHandler {
  type: 'command';
  command: string;
  timeout: number;
}

/** One matcher group; Brainstem's have no matcher, so they run for every tool and every source. */
export interface HookGroup {
  hooks: HookHandler[];
}

export type BrainstemHooks = Record<HookEventName, HookGroup>;

/** How long claude lets each hook run, in seconds: the waiting ones a margin over their wait, the others briefly. */
export interface HookTimeouts {
  stop_wait_s: number;
  permission_wait_s: number;
}

/** Beyond a hook's wait, the time it may take to start and to be answered. */
const WAIT_MARGIN_S = 30;
const REPORT_TIMEOUT_S = 10;

/** Brainstem's group for each event: `command(event)` runs `brainstem hook <event>`. */
export function brainstemHooks(command: (event: HookEventName) => string, timeouts: HookTimeouts): BrainstemHooks {
  const timeoutOf = (e: HookEventName) =>
    e === 'Stop' ? timeouts.stop_wait_s + WAIT_MARGIN_S : e === 'PermissionRequest' ? timeouts.permission_wait_s + WAIT_MARGIN_S : REPORT_TIMEOUT_S;
  return Object.fromEntries(HOOK_EVENTS.map((e) => [e, { hooks: [{ type: 'command', command: command(e), timeout: timeoutOf(e) }] }])) as BrainstemHooks;
}

/** A value as a POSIX shell word (claude runs a hook's command through sh -c). */
export const shellWord = (s: string): string => (/^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.split("'").join(`'\\''`)}'`);

type Settings = Record<string, unknown>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The settings a file holds (none: an empty object), refused when claude would not read its hooks as hooks. */
function parse(path: string, text: string | null): Settings {
  if (text === null || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new DomainError('claude_settings_malformed', `${path}: not JSON (${(e as Error).message}); fix it, or move it away, first: nothing was written`);
  }
  if (!isObject(value)) throw new DomainError('claude_settings_malformed', `${path}: must hold a JSON object`);
  const hooks = value.hooks;
  if (hooks !== undefined && !isObject(hooks)) throw new DomainError('claude_settings_malformed', `${path}: hooks must be an object of events`);
  for (const e of HOOK_EVENTS) {
    const groups = isObject(hooks) ? hooks[e] : undefined;
    if (groups !== undefined && !Array.isArray(groups)) throw new DomainError('claude_settings_malformed', `${path}: hooks.${e} must be a list of matcher groups`);
  }
  return value;
}

/** The indentation the file is written with (two spaces when it cannot tell), so a merge keeps its look. */
function indentOf(text: string | null): string {
  const line = (text ?? '').split('\n').find((l) => /^[ \t]+\S/.test(l));
  return line ? (/^[ \t]+/.exec(line)?.[0] ?? '  ') : '  ';
}

/** A settings value written back as the file was written (indentation, final newline). */
function serialize(settings: Settings, original: string | null): string {
  const endsWithNewline = original === null || original === '' || original.endsWith('\n');
  return JSON.stringify(settings, null, indentOf(original)) + (endsWithNewline ? '\n' : '');
}

/** The groups of an event with those of `remove` taken out (compared whole: a group the user edited is theirs now). */
function without(groups: unknown, remove: HookGroup | undefined): unknown[] {
  const list = Array.isArray(groups) ? groups : [];
  return remove === undefined ? list : list.filter((g) => !isDeepStrictEqual(g, remove));
}

/**
 * The file's text with Brainstem's groups added at the end of each event's list; `previous` (the groups an earlier
 * install wrote, as recorded) are taken out first, so installing again replaces them. Nothing else changes.
 */
export function withBrainstemHooks(path: string, text: string | null, hooks: BrainstemHooks, previous: BrainstemHooks | null): string {
  const settings = parse(path, text);
  const current = isObject(settings.hooks) ? settings.hooks : {};
  const merged: Record<string, unknown> = { ...current };
  for (const e of HOOK_EVENTS) merged[e] = [...without(current[e], previous?.[e]), hooks[e]];
  return serialize({ ...settings, hooks: merged }, text);
}

/**
 * The file's text without Brainstem's groups (as recorded at install); an event list, or the hooks object, that only
 * they filled goes with them. Null when nothing of Brainstem's is in it.
 */
export function withoutBrainstemHooks(path: string, text: string | null, hooks: BrainstemHooks): string | null {
  const settings = parse(path, text);
  if (!isObject(settings.hooks)) return null;
  const current = settings.hooks;
  const left: Record<string, unknown> = { ...current };
  let removed = false;
  for (const e of HOOK_EVENTS) {
    if (!Array.isArray(current[e])) continue;
    const kept = without(current[e], hooks[e]);
    if (kept.length === current[e].length) continue;
    removed = true;
    if (kept.length > 0) left[e] = kept;
    else delete left[e];
  }
  if (!removed) return null;
  // Assigned in place, so the keys keep their order.
  const out: Settings = { ...settings, hooks: left };
  if (Object.keys(left).length === 0) delete out.hooks;
  return serialize(out, text);
}
