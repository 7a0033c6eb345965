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

/**
 * The profiles dir's state file, a projection of the journal written after each change: default profile, project
 * bindings, and metadata the service manages. `format` 2 says the journal registers every profile stream on stream
 * `profiles`; a file without it was written before, and the service then reads the whole journal once.
 */
export interface ProfilesState {
  format?: 2;
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
  if (state.format !== undefined && state.format !== 2) return { ok: false, error: 'format: must be 2 or absent' };
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
