import { Decision, Refusal } from '../journal/command-handler';
import { jsonMergePatch, isPlainObject } from './merge-patch';
import { BUILTIN_DOCS, ParsedFile, nameKey, newMeta, parseProfileText, serialise } from './profile-document';
import { ProfileEventMap } from './profile.events';
import { ProfileDoc, ProfileScope, parseProfileDocument } from './profile.schema';
import { ProfileMetadata } from './profiles-state';

/**
 * Agent Profiles' rules, pure. Each profile is a stream, `profile-<id>`: decide() judges a command against the stream's
 * state and answers the events to journal or why it is refused; evolve() folds a journaled event into that state. The
 * stream `profiles` holds the project bindings and registers every profile stream (decideIndex, evolveIndex). These
 * folds are the only ones: the service builds its catalogue with them at boot, on its own appends and on other nodes'.
 */

export type ProfileEvent = { [K in keyof ProfileEventMap]: { type: K; data: ProfileEventMap[K] } }[keyof ProfileEventMap];

/** A journaled event as the folds read it. Data is checked as it is read: a journal written by an older version is folded too. */
export interface StoredEvent {
  type: string;
  data: unknown;
  seq: number;
  version: number;
  /** When it was journaled: the time of events that carry none of their own. */
  at: string;
}

/** A user profile as the journal holds it. */
export interface ProfileRecord {
  meta: ProfileMetadata;
  /**
   * The file's text: what the projection writes to disk. Null when the journal cannot say (events journaled before
   * documents were carried, a file that could not be read).
   */
  text: string | null;
  /** Why the journaled file is no valid profile (a malformed hand edit); null otherwise. */
  error: string | null;
}

/** The fold of stream `profile-<id>`. */
export interface ProfileStream {
  id: string;
  version: number;
  /** The user profile it holds: null before its first event, after its deletion, and always for a built-in. */
  profile: ProfileRecord | null;
  /** Seqs of its last profile.default_set and of its last deletion (0: none): the default is derived from them (defaultOf). */
  default_set_seq: number;
  deleted_seq: number;
}

/** A project binding, with the seq it was made at: deleting its profile after that undoes it (bindingsOf). */
export interface Binding {
  profile_id: string;
  seq: number;
}

/** The fold of stream `profiles`. */
export interface ProfilesIndex {
  version: number;
  bindings: Readonly<Record<string, Binding>>;
}

export const emptyStream = (id: string): ProfileStream => ({ id, version: 0, profile: null, default_set_seq: 0, deleted_seq: 0 });
export const emptyIndex = (): ProfilesIndex => ({ version: 0, bindings: {} });

/** Names in use by valid profiles, built-ins included: name key → profile id. */
export type NamesInUse = ReadonlyMap<string, string>;

export type ProfileCommand =
  | { type: 'create'; doc: ProfileDoc; scope: ProfileScope; at: string; names: NamesInUse }
  | { type: 'import'; doc: ProfileDoc; warnings: readonly string[]; at: string; names: NamesInUse }
  | { type: 'duplicate'; from: string; doc: ProfileDoc; scope: ProfileScope; at: string; names: NamesInUse }
  /** `changes` is a JSON merge patch in YAML names, merged into the journaled document. */
  | { type: 'update'; changes: Record<string, unknown>; scope?: ProfileScope; at: string; names: NamesInUse }
  | { type: 'delete' }
  | { type: 'set_default'; previous: string }
  /**
   * The file on disk, read when the stream was at `observed_version`: journaled as a hand edit when it differs from
   * what the journal says the file holds. `at` is the file's mtime.
   */
  | { type: 'notice_edit'; text: string | null; error: string | null; at: string; observed_version: number; meta?: ProfileMetadata }
  | { type: 'record_apply'; result: Omit<ProfileEventMap['profile.applied'], 'id'> };

/** A profile as a command on another stream sees it (a binding's target). */
export type ProfileStatus = 'valid' | 'missing' | { malformed: string };

export type IndexCommand =
  /** `project_dir` is absolute and normalised. */
  | { type: 'bind'; project_dir: string; profile_id: string | null; target: ProfileStatus | null }
  | { type: 'register'; ids: readonly string[] };

export type ProfileDecision = Decision<ProfileEvent>;

const refuse = (error: Refusal): ProfileDecision => ({ events: [], error });
const none: ProfileDecision = { events: [] };

export function decide(cmd: ProfileCommand, state: ProfileStream): ProfileDecision {
  const { id, profile } = state;
  const builtin = BUILTIN_DOCS.has(id);
  switch (cmd.type) {
    case 'create':
    case 'import':
    case 'duplicate': {
      if (builtin) return refuse(locked(id));
      if (cmd.names.has(nameKey(cmd.doc.name))) return refuse(nameTaken(cmd.doc.name));
      // Another node took the id first (a name of the same slug): saving again picks the next id.
      if (profile) return refuse({ code: 'conflict', message: `profile ${id} exists already; save it again to get a new id`, details: { id } });
      const file = serialise(cmd.doc);
      if ('error' in file) return refuse({ code: 'invalid_input', message: file.error });
      const { doc, at } = cmd;
      const { text } = file;
      if (cmd.type === 'create') return { events: [{ type: 'profile.created', data: { id, name: doc.name, source: 'user', scope: cmd.scope, at, doc, text } }] };
      if (cmd.type === 'import') return { events: [{ type: 'profile.imported', data: { id, name: doc.name, warnings: [...cmd.warnings], at, doc, text } }] };
      return { events: [{ type: 'profile.duplicated', data: { id, from: cmd.from, name: doc.name, scope: cmd.scope, at, doc, text } }] };
    }
    case 'update':
      return update(cmd, state);
    case 'delete':
      if (builtin) return refuse(locked(id));
      if (!profile) return refuse(notFound(id));
      return { events: [{ type: 'profile.deleted', data: { id } }] };
    case 'set_default': {
      const found = builtin ? null : documentOf(state);
      if (found && 'code' in found) return refuse(found);
      return { events: [{ type: 'profile.default_set', data: { id, previous: cmd.previous } }] };
    }
    case 'notice_edit': {
      // A file named like a built-in is not read; an observation older than the stream's last change is looked at again.
      if (builtin || state.version !== cmd.observed_version) return none;
      const agrees = profile !== null && profile.text === cmd.text && (cmd.text !== null || profile.error === cmd.error);
      if (agrees) return none;
      const meta = profile === null && cmd.meta ? { meta: cmd.meta } : {};
      return { events: [{ type: 'profile.edited_on_disk', data: { id, text: cmd.text, error: cmd.error, at: cmd.at, ...meta } }] };
    }
    case 'record_apply':
      return { events: [{ type: 'profile.applied', data: { id, ...cmd.result } }] };
  }
}

function update(cmd: Extract<ProfileCommand, { type: 'update' }>, state: ProfileStream): ProfileDecision {
  const { id } = state;
  const updated = updatedDocument(state, cmd.changes);
  if ('code' in updated) return refuse(updated);
  const { before, doc } = updated;
  const renamed = typeof cmd.changes.name === 'string' && doc.name !== before.name;
  if (renamed && nameOwner(cmd.names, doc.name, id)) return refuse(nameTaken(doc.name));
  const file = serialise(doc);
  if ('error' in file) return refuse({ code: 'invalid_input', message: file.error });
  const fields = [...Object.keys(cmd.changes), ...(cmd.scope ? ['scope'] : [])].sort();
  return { events: [{ type: 'profile.updated', data: { id, fields, ...(cmd.scope && { scope: cmd.scope }), at: cmd.at, doc, text: file.text } }] };
}

/**
 * The document an update would save (`changes` merged into the journaled one, validated) beside the one it replaces,
 * or why the profile cannot be updated so: what a save check judges before the update is decided.
 */
export function updatedDocument(state: ProfileStream, changes: Record<string, unknown>): { before: ProfileDoc; doc: ProfileDoc } | Refusal {
  const { id } = state;
  if (BUILTIN_DOCS.has(id)) return locked(id);
  const current = documentOf(state);
  if ('code' in current) return current;
  if (state.profile?.meta.locked) return locked(id);
  const parsed = parseProfileDocument(jsonMergePatch(current.doc, changes));
  if (!parsed.ok) return { code: 'invalid_input', message: parsed.errors.join('; '), details: { errors: parsed.errors } };
  return { before: current.doc, doc: parsed.doc };
}

export function decideIndex(cmd: IndexCommand, _index: ProfilesIndex): ProfileDecision {
  if (cmd.type === 'register') return cmd.ids.length ? { events: [{ type: 'profile.registered', data: { ids: [...cmd.ids] } }] } : none;
  if (!cmd.project_dir.startsWith('/')) return refuse({ code: 'invalid_input', message: 'project_dir: must be an absolute path' });
  if (cmd.profile_id !== null) {
    if (cmd.target === 'missing' || cmd.target === null) return refuse(notFound(cmd.profile_id));
    if (typeof cmd.target === 'object') return refuse(malformed(cmd.profile_id, cmd.target.malformed));
  }
  return { events: [{ type: 'profile.project_bound', data: { project_dir: cmd.project_dir, profile_id: cmd.profile_id } }] };
}

/** Folds one event of stream `profile-<id>` into its state. */
export function evolve(state: ProfileStream, e: StoredEvent): ProfileStream {
  const data = isPlainObject(e.data) ? e.data : {};
  // The service's own stamp when the event carries it (the commit time trails it by a few ms).
  const at = typeof data.at === 'string' ? data.at : e.at;
  const text = typeof data.text === 'string' ? data.text : null;
  const next: ProfileStream = { ...state, version: e.version };
  const { profile } = state;
  switch (e.type) {
    case 'profile.created':
    case 'profile.duplicated':
      return { ...next, profile: { meta: newMeta(at, 'user', asScope(data.scope)), text, error: null } };
    case 'profile.imported':
      return { ...next, profile: { meta: newMeta(at, 'import', 'shared'), text, error: null } };
    case 'profile.updated': {
      if (!profile) return next;
      const meta = { ...profile.meta, updated_at: at, ...(data.scope !== undefined && { scope: asScope(data.scope) }) };
      return { ...next, profile: { meta, text, error: null } };
    }
    case 'profile.edited_on_disk': {
      // The edit is the profile's last update; a file the journal did not know is a user profile created by it.
      const meta = profile ? { ...profile.meta, updated_at: at } : (asMetadata(data.meta) ?? newMeta(at, 'user', 'shared'));
      return { ...next, profile: { meta, text, error: typeof data.error === 'string' ? data.error : null } };
    }
    case 'profile.deleted':
      return { ...next, profile: null, deleted_seq: e.seq };
    case 'profile.default_set':
      return { ...next, default_set_seq: e.seq };
    default:
      return next;
  }
}

/** Folds one event of stream `profiles` into the index. */
export function evolveIndex(index: ProfilesIndex, e: StoredEvent): ProfilesIndex {
  const next: ProfilesIndex = { ...index, version: e.version };
  const data = isPlainObject(e.data) ? e.data : {};
  if (e.type !== 'profile.project_bound' || typeof data.project_dir !== 'string') return next;
  const { [data.project_dir]: _old, ...rest } = index.bindings;
  const bindings = typeof data.profile_id === 'string' ? { ...rest, [data.project_dir]: { profile_id: data.profile_id, seq: e.seq } } : rest;
  return { ...next, bindings };
}

/** The ids a `profile.registered` event names. */
export function registeredIds(e: StoredEvent): string[] {
  const ids = isPlainObject(e.data) && Array.isArray(e.data.ids) ? e.data.ids : [];
  return e.type === 'profile.registered' ? ids.filter((id): id is string => typeof id === 'string') : [];
}

/** The default profile: the last one set, unless it was deleted after (null: none chosen). */
export function defaultOf(streams: Iterable<ProfileStream>): string | null {
  let last: ProfileStream | null = null;
  for (const s of streams) if (s.default_set_seq > (last?.default_set_seq ?? 0)) last = s;
  return last && last.deleted_seq < last.default_set_seq ? last.id : null;
}

/** The bindings in force: those whose profile was not deleted after they were made. */
export function bindingsOf(index: ProfilesIndex, stream: (id: string) => ProfileStream | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [dir, b] of Object.entries(index.bindings)) if ((stream(b.profile_id)?.deleted_seq ?? 0) < b.seq) out[dir] = b.profile_id;
  return out;
}

/** The journaled document of the stream's profile, or why there is none to use. */
export function documentOf(state: ProfileStream): { doc: ProfileDoc } | Refusal {
  const { id, profile } = state;
  if (!profile) return notFound(id);
  const parsed = parsedRecord(profile);
  return 'error' in parsed ? malformed(id, parsed.error) : { doc: parsed.doc };
}

/** Parsed once per record: records are immutable, so the same record always parses the same. */
const parsedRecords = new WeakMap<ProfileRecord, ParsedFile>();
export function parsedRecord(record: ProfileRecord): ParsedFile {
  let parsed = parsedRecords.get(record);
  if (!parsed) {
    if (record.error !== null) parsed = { error: record.error };
    else if (record.text === null) parsed = { error: 'the journal does not hold its file' };
    else parsed = parseProfileText(record.text);
    parsedRecords.set(record, parsed);
  }
  return parsed;
}

/** What a record's text parses to, when the caller parsed that very text already. */
export function rememberParsed(record: ProfileRecord, parsed: ParsedFile): void {
  parsedRecords.set(record, parsed);
}

function nameOwner(names: NamesInUse, name: string, self: string): string | null {
  const owner = names.get(nameKey(name));
  return owner !== undefined && owner !== self ? owner : null;
}

function asMetadata(value: unknown): ProfileMetadata | null {
  if (!isPlainObject(value)) return null;
  const { created_at, updated_at, source, locked, owner_pack_id, scope } = value;
  const ok =
    typeof created_at === 'string' &&
    typeof updated_at === 'string' &&
    (source === 'user' || source === 'import') &&
    typeof locked === 'boolean' &&
    (owner_pack_id === null || typeof owner_pack_id === 'string');
  return ok ? { created_at, updated_at, source, locked, owner_pack_id, scope: asScope(scope) } : null;
}

/** Events journaled before profiles had a scope carry none: those profiles were shared. */
function asScope(value: unknown): ProfileScope {
  return value === 'personal' ? 'personal' : 'shared';
}

export function notFound(id: string): Refusal {
  return { code: 'not_found', message: `no profile ${id}`, details: { id } };
}

export function locked(id: string): Refusal {
  return { code: 'profile_locked', message: `profile ${id} is locked; duplicate it to edit`, details: { id } };
}

export function malformed(id: string, error: string): Refusal {
  return { code: 'profile_malformed', message: `profile ${id} is malformed: ${error}`, details: { id } };
}

function nameTaken(name: string): Refusal {
  return { code: 'profile_name_taken', message: `a profile named "${name}" already exists`, details: { name } };
}
