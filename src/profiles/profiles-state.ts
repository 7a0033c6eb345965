import { PROFILE_ID_PATTERN, PROFILE_SCOPES, ProfileScope, ProfileSource } from './profile.schema';

export interface ProfileMetadata {
  created_at: string;
  updated_at: string;
  source: ProfileSource;
  locked: boolean;
  owner_pack_id: string | null;
  scope: ProfileScope;
}

/** What the state file remembers per user profile; `file_mtime_ms` tells our writes from hand edits. */
export interface StoredMetadata extends ProfileMetadata {
  file_mtime_ms: number;
}

/** The profiles dir's state file: default profile, project bindings, and metadata the service manages. */
export interface ProfilesState {
  default_profile_id: string | null;
  project_bindings: Record<string, string>;
  profiles: Record<string, StoredMetadata>;
}

export const emptyProfilesState = (): ProfilesState => ({ default_profile_id: null, project_bindings: {}, profiles: {} });

export type ParsedState = { ok: true; state: ProfilesState } | { ok: false; error: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const SOURCES: ReadonlySet<unknown> = new Set(['builtin', 'user', 'import']);
const SCOPES: ReadonlySet<unknown> = new Set(PROFILE_SCOPES);
/** Ids from the state file reach file paths: anything but a valid id marks the file as damaged. */
const isId = (v: unknown): v is string => typeof v === 'string' && PROFILE_ID_PATTERN.test(v);

/** Parses the state file, checking its shape: a damaged file must be noticed, not half-used. */
export function parseProfilesState(text: string): ParsedState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `not JSON: ${(e as Error).message}` };
  }
  if (!isRecord(value)) return { ok: false, error: 'not a JSON object' };
  const state = { ...emptyProfilesState(), ...value };
  if (state.default_profile_id !== null && !isId(state.default_profile_id)) return { ok: false, error: 'default_profile_id: must be a profile id or null' };
  if (!isRecord(state.project_bindings) || !Object.values(state.project_bindings).every(isId)) {
    return { ok: false, error: 'project_bindings: must map directories to profile ids' };
  }
  if (!isRecord(state.profiles)) return { ok: false, error: 'profiles: must be an object' };
  for (const [id, m] of Object.entries(state.profiles)) {
    const ok =
      isId(id) &&
      isRecord(m) &&
      typeof m.created_at === 'string' &&
      typeof m.updated_at === 'string' &&
      SOURCES.has(m.source) &&
      typeof m.locked === 'boolean' &&
      (m.owner_pack_id === null || typeof m.owner_pack_id === 'string') &&
      typeof m.file_mtime_ms === 'number' &&
      (m.scope === undefined || SCOPES.has(m.scope));
    if (!ok) return { ok: false, error: `profiles.${id}: malformed metadata` };
    // Written before profiles had a scope: every profile was shared then.
    m.scope ??= 'shared';
  }
  return { ok: true, state: state as ProfilesState };
}

/** A journaled profile event, as replay sees it. */
export interface ProfileHistoryEvent {
  type: string;
  at: string;
  data: unknown;
}

/**
 * The state folded from the journal's profile events (every change is journaled): what a damaged state
 * file is rebuilt from. File times are unknown here (0), so each profile's file time counts as its last update.
 */
export function rebuildProfilesState(history: Iterable<ProfileHistoryEvent>): ProfilesState {
  const s = emptyProfilesState();
  const created = (id: string, at: string, source: 'user' | 'import', scope: unknown) => {
    s.profiles[id] = { created_at: at, updated_at: at, source, locked: false, owner_pack_id: null, scope: asScope(scope), file_mtime_ms: 0 };
  };
  for (const { type, at: committedAt, data } of history) {
    if (!isRecord(data)) continue;
    const id = typeof data.id === 'string' ? data.id : null;
    // The service's own stamp when the event carries it (the commit time trails it by a few ms).
    const at = typeof data.at === 'string' ? data.at : committedAt;
    switch (type) {
      case 'profile.created':
      case 'profile.duplicated':
        if (id) created(id, at, 'user', data.scope);
        break;
      case 'profile.imported':
        if (id) created(id, at, 'import', 'shared');
        break;
      case 'profile.updated':
        if (!id || !s.profiles[id]) break;
        s.profiles[id].updated_at = at;
        if (data.scope !== undefined) s.profiles[id].scope = asScope(data.scope);
        break;
      case 'profile.deleted':
        if (!id) break;
        delete s.profiles[id];
        if (s.default_profile_id === id) s.default_profile_id = null;
        for (const [dir, bound] of Object.entries(s.project_bindings)) if (bound === id) delete s.project_bindings[dir];
        break;
      case 'profile.edited_on_disk':
        if (!id) break;
        if (s.profiles[id]) s.profiles[id].updated_at = at;
        else created(id, at, 'user', 'shared');
        break;
      case 'profile.default_set':
        if (id) s.default_profile_id = id;
        break;
      case 'profile.project_bound':
        if (typeof data.project_dir !== 'string') break;
        if (typeof data.profile_id === 'string') s.project_bindings[data.project_dir] = data.profile_id;
        else delete s.project_bindings[data.project_dir];
        break;
    }
  }
  return s;
}

/** What the journal says a profile's file holds; `text` is null when it cannot say (events from before documents were journaled, an unreadable hand edit). */
export interface JournaledFile {
  text: string | null;
  error: string | null;
}

/**
 * Each live profile's file as the journal's profile events describe it: the text a change wrote, or the text a hand
 * edit left. Deleted profiles are absent. The text is carried beside the document because the journal stores data as
 * canonical JSON, which sorts keys: the document alone would not give back the file's order (an MCP server list's).
 */
export function rebuildProfileFiles(history: Iterable<ProfileHistoryEvent>): Map<string, JournaledFile> {
  const files = new Map<string, JournaledFile>();
  for (const { type, data } of history) {
    if (!isRecord(data) || typeof data.id !== 'string') continue;
    const text = typeof data.text === 'string' ? data.text : null;
    switch (type) {
      case 'profile.created':
      case 'profile.duplicated':
      case 'profile.imported':
      case 'profile.updated':
        files.set(data.id, { text, error: null });
        break;
      case 'profile.edited_on_disk':
        files.set(data.id, { text, error: typeof data.error === 'string' ? data.error : null });
        break;
      case 'profile.deleted':
        files.delete(data.id);
        break;
    }
  }
  return files;
}

/** Events journaled before profiles had a scope carry none: those profiles were shared. */
function asScope(value: unknown): ProfileScope {
  return value === 'personal' ? 'personal' : 'shared';
}
