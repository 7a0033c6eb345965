import { Logger, OnModuleInit } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { EventBus } from '../bus/event-bus';
import { NewDomainEvent } from '../bus/domain-event';
import { DomainError } from '../common/domain-error';
import { KeyedMutex } from './keyed-mutex';
import { jsonMergePatch } from './merge-patch';
import { LintFinding, LintResult, lintProfile } from './profile.lint';
import {
  METADATA_FIELDS,
  MetadataField,
  PROFILE_ID_PATTERN,
  PROFILE_SCOPES,
  ProfileDoc,
  ProfileScope,
  ProfileSource,
  Runtime,
  parseProfileDocument,
  toPlain,
} from './profile.schema';
import { slugify, uniqueId, uniqueName } from './profile.slug';
import { FileStamp, ProfileStore } from './profile.store';
import { dumpProfileYaml, parseProfileYaml } from './profile.yaml';
import {
  JournaledFile,
  ProfileHistoryEvent,
  ProfileMetadata,
  ProfilesState,
  StoredMetadata,
  parseProfilesState,
  rebuildProfileFiles,
  rebuildProfilesState,
} from './profiles-state';
import { BUILTIN_PROFILES, BUILTIN_TEMPLATES_RELEASED_AT, DEFAULT_PROFILE_ID } from './templates';

export type Clock = () => Date;

/** The journal's profile events in order: what a damaged state file is rebuilt from. */
export type ProfileHistory = () => AsyncIterable<ProfileHistoryEvent>;
/** The events of the named profiles' streams (`profile-<id>`), in journal order. */
export type ProfileStreams = (ids: readonly string[]) => Promise<ProfileHistoryEvent[]>;

/** What a save could not do although the profile was saved: an auto-apply that failed. */
export interface SaveWarning {
  path: 'auto_apply_dir';
  code: 'auto_apply_failed';
  message: string;
}

/** Called after a profile is saved (create, update); auto-apply listens here, and answers what it could not do. */
export type SavedListener = (id: string, doc: ProfileDoc) => Promise<SaveWarning[]>;

/** A profile as a save check sees it: the document and its scope. */
export interface ProfileSide {
  doc: ProfileDoc;
  scope: ProfileScope;
}

/**
 * Judges a save before anything is written, inside the lock the save holds (so nothing changes the profile between
 * the check and the write): `before` is null for a new profile. It refuses by throwing.
 */
export type SaveCheck = (before: (ProfileSide & { id: string }) | null, after: ProfileSide) => void;

export type { ProfileMetadata } from './profiles-state';

/** The document in API names (`target_runtime`), its metadata, and whether it is the default. */
export type ProfileView = { id: string } & Omit<ProfileDoc, 'runtime'> & { target_runtime: Runtime } & ProfileMetadata & {
    is_default: boolean;
    error: null;
  };

/** A file that does not parse or validate: listed with its error instead of breaking the listing. */
export type MalformedProfileView = { id: string; name: null } & ProfileMetadata & { is_default: boolean; error: string };

export type ProfileItem = ProfileView | MalformedProfileView;

/** The answer to a create or an update: the profile, and what the save could not do besides. */
export type SavedProfile = ProfileView & { warnings: SaveWarning[] };

export interface ProfileList {
  profiles: ProfileItem[];
  default_profile_id: string;
}

export type ImportNoteCode = 'default_cwd_dropped' | 'auto_apply_dir_dropped' | 'metadata_ignored' | 'renamed';

export interface ImportResult {
  profile: ProfileView;
  warnings: Array<{ path: string; code: ImportNoteCode; message: string }>;
  lint: LintResult;
}

export interface ProjectBinding {
  project_dir: string;
  profile_id: string;
}

/** A create or update body, in API names. */
export type ProfileInput = Record<string, unknown>;

type ValidEntry = { id: string; doc: ProfileDoc; metadataKeys: MetadataField[]; meta: ProfileMetadata };
type Entry = ValidEntry | { id: string; error: string; meta: ProfileMetadata };
type ParsedFile = { doc: ProfileDoc; metadataKeys: MetadataField[] } | { error: string };
type CachedFile = { stamp: FileStamp; parsed: ParsedFile };


const BUILTIN_META: ProfileMetadata = {
  created_at: BUILTIN_TEMPLATES_RELEASED_AT,
  updated_at: BUILTIN_TEMPLATES_RELEASED_AT,
  source: 'builtin',
  locked: true,
  owner_pack_id: null,
  scope: 'shared',
};
const BUILTINS = new Map(BUILTIN_PROFILES.map((t) => [t.id, t.doc]));
/** Static routes under /agent-profiles that a profile id must not shadow. */
const ROUTE_IDS = ['import', 'project-binding', 'lint'];
const CATALOG = '#catalog';
const STATE = '#state';

/**
 * Agent Profiles: built-ins from the code, user profiles from `<dir>/<id>.yaml`. The journal is the truth: every
 * change is journaled on `profile-<id>` with the whole document first, and the file is then written from it.
 * Parsed files are cached and re-read when their stamp (mtime, size, inode) changes; a file that then differs from
 * what the journal says is a hand edit, journaled as `profile.edited_on_disk`. At boot, missing files and files the
 * service itself wrote before the journal moved on are written again from the journal.
 */
export class ProfilesService implements OnModuleInit {
  private readonly cache = new Map<string, CachedFile>();
  private readonly locks = new KeyedMutex();
  private state: Promise<ProfilesState> | null = null;
  /** What the journal says each live profile's file holds: folded from the history once, then kept current. */
  private journaled: Promise<Map<string, JournaledFile>> | null = null;
  private readonly logger = new Logger('profiles');
  private savedListener: SavedListener | null = null;

  constructor(
    private readonly store: ProfileStore,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly history: ProfileHistory = async function* () {},
    private readonly streams: ProfileStreams | null = null,
  ) {}

  async list(): Promise<ProfileList> {
    const [entries, defaultId] = await Promise.all([this.entries(), this.defaultId()]);
    return { profiles: entries.map((e) => this.view(e, defaultId)), default_profile_id: defaultId };
  }

  async get(id: string): Promise<ProfileItem> {
    return this.view(await this.entry(id), await this.defaultId());
  }

  async create(input: ProfileInput, check?: SaveCheck): Promise<SavedProfile> {
    return this.afterSave(await this.createLocked(input, check));
  }

  private createLocked(input: ProfileInput, check?: SaveCheck): Promise<ProfileView> {
    return this.locks.run(CATALOG, async () => {
      const { scope = 'shared', fields } = takeScope(input);
      const doc = validated(fromApi(fields));
      check?.(null, { doc, scope });
      await this.assertNameFree(doc.name);
      const id = uniqueId(slugify(doc.name), await this.idTaken());
      const at = this.now();
      const text = serialised(doc);
      return this.writeNew(id, doc, text, newMeta(at, 'user', scope), { type: 'profile.created', data: { id, name: doc.name, source: 'user', scope, at, doc, text } });
    });
  }

  async update(id: string, patch: ProfileInput, check?: SaveCheck): Promise<SavedProfile> {
    const { scope, fields } = takeScope(patch);
    const changes = fromApi(fields);
    const renaming = typeof changes.name === 'string';
    const apply = () =>
      this.locks.run(id, async () => {
        const current = await this.editable(id);
        const doc = validated(jsonMergePatch(current.doc, changes));
        check?.({ id, doc: current.doc, scope: current.meta.scope }, { doc, scope: scope ?? current.meta.scope });
        if (renaming && doc.name !== current.doc.name) await this.assertNameFree(doc.name, id);
        const at = this.now();
        const fields = [...Object.keys(changes), ...(scope ? ['scope'] : [])].sort();
        const text = serialised(doc);
        const stamp = await this.project(id, doc, text, { type: 'profile.updated', data: { id, fields, ...(scope && { scope }), at, doc, text } });
        const meta = await this.saveMeta(id, { ...current.meta, scope: scope ?? current.meta.scope, updated_at: at }, stamp);
        return this.validView({ id, doc, metadataKeys: [], meta }, await this.defaultId());
      });
    // A rename takes the catalog lock first (same order as create), so two renames cannot claim one name.
    return this.afterSave(await (renaming ? this.locks.run(CATALOG, apply) : apply()));
  }

  onSaved(listener: SavedListener): void {
    this.savedListener = listener;
  }

  /** A valid profile and its lint findings in its own scope, for preview, apply and sessions. */
  async forApply(id: string): Promise<{ doc: ProfileDoc; lint: LintResult }> {
    const entry = await this.valid(id);
    return { doc: entry.doc, lint: await this.lint(id) };
  }

  /** Project directories bound to this profile. */
  async boundProjects(id: string): Promise<string[]> {
    const { project_bindings } = await this.loadState();
    return Object.entries(project_bindings).filter(([, bound]) => bound === id).map(([dir]) => dir).sort();
  }

  private async afterSave(view: ProfileView): Promise<SavedProfile> {
    const warnings = this.savedListener && view.auto_apply_dir ? await this.savedListener(view.id, (await this.valid(view.id)).doc) : [];
    return { ...view, warnings };
  }

  async remove(id: string): Promise<void> {
    await this.locks.run(id, async () => {
      if (BUILTINS.has(id)) throw locked(id);
      if (!PROFILE_ID_PATTERN.test(id) || !(await this.store.stamp(id))) throw notFound(id);
      await this.locks.run(onDisk(id), async () => {
        await this.bus.emit(`profile-${id}`, [{ type: 'profile.deleted', data: { id } }]);
        (await this.journaledFiles()).delete(id);
        await this.store.remove(id);
        this.cache.delete(id);
      });
      await this.mutateState((s) => {
        delete s.profiles[id];
        if (s.default_profile_id === id) s.default_profile_id = null;
        for (const [dir, bound] of Object.entries(s.project_bindings)) if (bound === id) delete s.project_bindings[dir];
      });
    });
  }

  async duplicate(id: string, name?: string | null): Promise<ProfileView> {
    return this.locks.run(CATALOG, async () => {
      const source = await this.valid(id);
      const names = await this.namesTaken();
      if (name != null && names(name)) throw nameTaken(name);
      const doc: ProfileDoc = { ...source.doc, name: name ?? uniqueName(source.doc.name, names, ' (copy)') };
      const copyId = uniqueId(`${id.slice(0, 59).replace(/-+$/, '')}-copy`, await this.idTaken());
      const at = this.now();
      const scope = source.meta.scope;
      const text = serialised(doc);
      const event = { type: 'profile.duplicated', data: { id: copyId, from: id, name: doc.name, scope, at, doc, text } } as const;
      return this.writeNew(copyId, doc, text, newMeta(at, 'user', scope), event);
    });
  }

  async setDefault(id: string): Promise<ProfileView> {
    const entry = await this.valid(id);
    const previous = await this.defaultId();
    await this.bus.emit(`profile-${id}`, [{ type: 'profile.default_set', data: { id, previous } }]);
    await this.mutateState((s) => {
      s.default_profile_id = id;
    });
    return this.validView(entry, id);
  }

  /** Lints in the profile's own scope, or in the scope asked for (built-ins are shared whatever is asked). */
  async lint(id: string, scope?: ProfileScope): Promise<LintResult> {
    const entry = await this.entry(id);
    if ('error' in entry) return { valid: false, errors: [{ path: '', code: 'schema', message: entry.error }], warnings: [] };
    const { doc, metadataKeys, meta } = entry;
    const shared = meta.source === 'builtin' || (scope ?? meta.scope) === 'shared';
    return lintProfile(doc, { shared, metadataKeys, skillFileExists: (p) => existsSync(join(this.skillDir(doc, p), 'SKILL.md')) });
  }

  /**
   * Lints an unsaved draft (in API names) as if it had `scope`: schema problems come back as findings, not as a
   * refusal, since a draft is linted while it is typed. Nothing is written or journaled.
   */
  lintDraft(document: ProfileInput, scope: ProfileScope = 'shared'): LintResult {
    const parsed = parseProfileDocument(fromApi(document));
    if (!parsed.ok) return { valid: false, errors: parsed.errors.map(schemaFinding), warnings: [] };
    const { doc, metadataKeys } = parsed;
    return lintProfile(doc, { shared: scope === 'shared', metadataKeys, skillFileExists: (p) => existsSync(join(this.skillDir(doc, p), 'SKILL.md')) });
  }

  async importYaml(text: string, check?: SaveCheck): Promise<ImportResult> {
    const parsed = parseProfileYaml(text);
    if (!parsed.ok) throw new DomainError('invalid_input', `yaml: ${parsed.error}`);
    const raw = parsed.value;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new DomainError('invalid_input', 'yaml: must be a mapping');
    const warnings: ImportResult['warnings'] = [];
    const fields: Record<string, unknown> = { ...raw };
    for (const key of METADATA_FIELDS) {
      if (key in fields) {
        delete fields[key];
        warnings.push({ path: key, code: 'metadata_ignored', message: `${key} is managed by the service and was ignored` });
      }
    }
    // Both name directories of the machine the file came from; an auto_apply_dir kept would also have an imported
    // file write hooks (commands) into a project here before anyone looked at it.
    for (const key of ['default_cwd', 'auto_apply_dir'] as const) {
      if (typeof fields[key] === 'string' && fields[key] !== '') {
        warnings.push({ path: key, code: `${key}_dropped`, message: `${key} is not imported; edit the profile to set one` });
      }
      delete fields[key];
    }
    const doc = validated(fields);
    check?.(null, { doc, scope: 'shared' });
    return this.locks.run(CATALOG, async () => {
      const name = uniqueName(doc.name, await this.namesTaken());
      if (name !== doc.name) warnings.push({ path: 'name', code: 'renamed', message: `the name "${doc.name}" is taken; imported as "${name}"` });
      const id = uniqueId(slugify(name), await this.idTaken());
      const at = this.now();
      const named = { ...doc, name };
      const text = serialised(named);
      const event = { type: 'profile.imported', data: { id, name, warnings: warnings.map((w) => w.code), at, doc: named, text } } as const;
      const profile = await this.writeNew(id, named, text, newMeta(at, 'import', 'shared'), event);
      return { profile, warnings, lint: await this.lint(id) };
    });
  }

  async exportYaml(id: string): Promise<string> {
    return dumpProfileYaml((await this.valid(id)).doc);
  }

  async bindProject(projectDir: string, profileId: string | null): Promise<{ project_dir: string; profile_id: string | null }> {
    if (!isAbsolute(projectDir)) throw new DomainError('invalid_input', 'project_dir: must be an absolute path');
    const dir = resolve(projectDir);
    if (profileId !== null) await this.valid(profileId);
    await this.bus.emit('profiles', [{ type: 'profile.project_bound', data: { project_dir: dir, profile_id: profileId } }]);
    await this.mutateState((s) => {
      if (profileId === null) delete s.project_bindings[dir];
      else s.project_bindings[dir] = profileId;
    });
    return { project_dir: dir, profile_id: profileId };
  }

  async bindings(): Promise<{ bindings: ProjectBinding[] }> {
    const state = await this.loadState();
    const bindings = Object.entries(state.project_bindings).map(([project_dir, profile_id]) => ({ project_dir, profile_id }));
    return { bindings: bindings.sort((a, b) => a.project_dir.localeCompare(b.project_dir)) };
  }

  /** The profile a new session uses: the one it names, else its directory's (or nearest ancestor's) binding, else the default. */
  async resolveForSession(request: { profile_id?: string | null; cwd?: string | null }): Promise<string> {
    if (request.profile_id) return request.profile_id;
    const bound = request.cwd ? await this.bindingOf(request.cwd) : null;
    return bound?.profile_id ?? this.defaultId();
  }

  /** The project binding that covers a directory: its own, else its nearest ancestor's; null when none does. */
  async bindingOf(cwd: string): Promise<ProjectBinding | null> {
    const { project_bindings } = await this.loadState();
    for (let dir = resolve(cwd); ; dir = dirname(dir)) {
      if (project_bindings[dir]) return { project_dir: dir, profile_id: project_bindings[dir] };
      if (dir === dirname(dir)) return null;
    }
  }

  // ---- reading ----

  private async entries(): Promise<Entry[]> {
    const files = await this.store.list();
    const state = await this.loadState();
    const user = await Promise.all(files.filter((f) => !BUILTINS.has(f.id)).map((f) => this.loadFile(f.id, f.stamp, state)));
    const builtins: Entry[] = BUILTIN_PROFILES.map((t) => ({ id: t.id, doc: t.doc, metadataKeys: [], meta: BUILTIN_META }));
    // Drop cache entries of files that disappeared.
    const present = new Set(files.map((f) => f.id));
    for (const id of this.cache.keys()) if (!present.has(id)) this.cache.delete(id);
    return [...builtins, ...user.filter((e): e is Entry => e !== null).sort((a, b) => a.id.localeCompare(b.id))];
  }

  private async entry(id: string): Promise<Entry> {
    if (!PROFILE_ID_PATTERN.test(id)) throw notFound(id);
    const builtin = BUILTINS.get(id);
    if (builtin) return { id, doc: builtin, metadataKeys: [], meta: BUILTIN_META };
    const stamp = await this.store.stamp(id);
    const entry = stamp && (await this.loadFile(id, stamp, await this.loadState()));
    if (!entry) throw notFound(id);
    return entry;
  }

  /** A profile that parsed; malformed files cannot be copied, exported or edited by merging. */
  private async valid(id: string): Promise<ValidEntry> {
    const entry = await this.entry(id);
    if ('error' in entry) throw new DomainError('profile_malformed', `profile ${id} is malformed: ${entry.error}`, { id });
    return entry;
  }

  private async editable(id: string): Promise<ValidEntry> {
    if (BUILTINS.has(id)) throw locked(id);
    const entry = await this.valid(id);
    if (entry.meta.locked) throw locked(id);
    return entry;
  }

  private async loadFile(id: string, stamp: FileStamp, state: ProfilesState): Promise<Entry | null> {
    const cached = this.cachedAt(id, stamp);
    const file = cached ? { stamp, parsed: cached } : await this.locks.run(onDisk(id), () => this.readFile(id));
    if (!file) return null;
    const { parsed } = file;
    const meta = metadataOf(state.profiles[id], file.stamp);
    return 'error' in parsed ? { id, error: parsed.error, meta } : { id, doc: parsed.doc, metadataKeys: parsed.metadataKeys, meta };
  }

  /** Reads a file the cache does not hold (inside its disk lock, so never between a journaled change and its write). */
  private async readFile(id: string): Promise<CachedFile | null> {
    const file = await this.store.read(id);
    if (!file) return null;
    const hit = this.cachedAt(id, file.stamp);
    if (hit) return { stamp: file.stamp, parsed: hit };
    const parsed: ParsedFile =
      'text' in file ? parseFile(file.text) : { error: 'tooLarge' in file ? 'the file is over the limit of 256 KiB' : 'not a regular file' };
    const read = { stamp: file.stamp, parsed };
    // Cached only once the journal agrees with the file, so an edit that could not be journaled is tried again.
    if (await this.noticeEdit(id, 'text' in file ? file.text : null, read)) this.cache.set(id, read);
    return read;
  }

  /**
   * A file that differs from what the journal says it holds was edited by hand (or written by another tool, or is
   * one the journal has never seen): the journal takes it as it is. A malformed edit is journaled with its error and
   * listed as malformed; it never fails the read. Answers whether the journal now agrees with the file.
   */
  private async noticeEdit(id: string, text: string | null, { stamp, parsed }: CachedFile): Promise<boolean> {
    const files = await this.journaledFiles();
    const journaled = files.get(id);
    const error = 'error' in parsed ? parsed.error : null;
    if (journaled && journaled.text === text && (text !== null || journaled.error === error)) return true;
    const doc = 'doc' in parsed ? parsed.doc : null;
    const at = new Date(stamp.mtimeMs).toISOString();
    try {
      await this.bus.emit(`profile-${id}`, [{ type: 'profile.edited_on_disk', data: { id, text, doc, error, at } }]);
    } catch (e) {
      this.logger.error(`profile ${id}: a change to its file could not be journaled (${(e as Error).message})`);
      return false;
    }
    files.set(id, { text, error });
    // The edit is the profile's last update; a file the state does not know yet is a user profile created by it.
    await this.mutateState((s) => {
      const known = s.profiles[id];
      if (known?.file_mtime_ms === stamp.mtimeMs) return;
      s.profiles[id] = { ...(known ?? newMeta(at, 'user', 'shared')), updated_at: at, file_mtime_ms: stamp.mtimeMs };
    });
    if (error !== null) this.logger.warn(`profile ${id}: its file was edited and is malformed: ${error}`);
    return true;
  }

  private cachedAt(id: string, stamp: FileStamp): ParsedFile | null {
    const hit = this.cache.get(id);
    const fresh = hit && hit.stamp.mtimeMs === stamp.mtimeMs && hit.stamp.size === stamp.size && hit.stamp.ino === stamp.ino;
    return fresh ? hit.parsed : null;
  }

  private view(entry: Entry, defaultId: string): ProfileItem {
    if ('error' in entry) return { id: entry.id, name: null, ...entry.meta, is_default: entry.id === defaultId, error: entry.error };
    return this.validView(entry, defaultId);
  }

  private validView(entry: ValidEntry, defaultId: string): ProfileView {
    const { runtime, ...rest } = entry.doc;
    return { id: entry.id, ...rest, target_runtime: runtime, ...entry.meta, is_default: entry.id === defaultId, error: null };
  }

  private async namesTaken(): Promise<(name: string) => boolean> {
    const names = new Set((await this.entries()).flatMap((e) => ('doc' in e ? [nameKey(e.doc.name)] : [])));
    return (name) => names.has(nameKey(name));
  }

  private async assertNameFree(name: string, exceptId?: string): Promise<void> {
    const clash = (await this.entries()).find((e) => 'doc' in e && e.id !== exceptId && nameKey(e.doc.name) === nameKey(name));
    if (clash) throw nameTaken(name);
  }

  private async idTaken(): Promise<(id: string) => boolean> {
    const ids = new Set([...BUILTINS.keys(), ...ROUTE_IDS, ...(await this.store.list()).map((f) => f.id)]);
    return (id) => ids.has(id);
  }

  private async defaultId(): Promise<string> {
    const chosen = (await this.loadState()).default_profile_id;
    return chosen && (BUILTINS.has(chosen) || (await this.store.stamp(chosen))) ? chosen : DEFAULT_PROFILE_ID;
  }

  /** Relative skill paths are read against the profile's default_cwd, else the profiles directory. */
  skillDir(doc: ProfileDoc, path: string): string {
    const expanded = path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
    return resolve(doc.default_cwd || this.store.dir, expanded);
  }

  // ---- writing ----

  private async writeNew(id: string, doc: ProfileDoc, text: string, meta: ProfileMetadata, event: NewDomainEvent): Promise<ProfileView> {
    const stamp = await this.project(id, doc, text, event);
    await this.saveMeta(id, meta, stamp);
    return this.validView({ id, doc, metadataKeys: [], meta }, await this.defaultId());
  }

  /**
   * Journals the change, then writes the file from the text it carries: the file is a projection of the journal,
   * so a change the journal refuses leaves no file. Readers wait on the same disk lock, so none takes the file for
   * a hand edit between the two.
   */
  private project(id: string, doc: ProfileDoc, text: string, event: NewDomainEvent): Promise<FileStamp> {
    return this.locks.run(onDisk(id), async () => {
      const files = await this.journaledFiles();
      await this.bus.emit(`profile-${id}`, [event]);
      files.set(id, { text, error: null });
      const stamp = await this.store.write(id, text);
      this.cache.set(id, { stamp, parsed: { doc, metadataKeys: [] } });
      return stamp;
    });
  }

  /** Boot: the files are brought in line with the journal before the service answers anything. */
  async onModuleInit(): Promise<void> {
    await this.rebuildFiles();
  }

  /**
   * Writes from the journal each live profile's file that is missing, or that still holds the service's own earlier
   * write (its mtime is the one recorded at that write) although the journal has moved on, after a crash between
   * the two. Any other difference is a hand edit made while the service was not watching: it is journaled as
   * `profile.edited_on_disk`, as are files the journal does not know. Profiles whose text the journal cannot give
   * (journaled before documents were carried) keep their file, which the journal then takes up.
   */
  async rebuildFiles(): Promise<void> {
    const files = await this.journaledFiles();
    const state = await this.loadState();
    for (const [id, journaled] of [...files]) {
      if (journaled.text === null || BUILTINS.has(id)) continue;
      const text = journaled.text;
      await this.locks.run(onDisk(id), async () => {
        const stamp = await this.store.stamp(id);
        const ownWrite = stamp !== null && state.profiles[id]?.file_mtime_ms === stamp.mtimeMs;
        if (stamp !== null && !ownWrite) return;
        const current = ownWrite ? await this.store.read(id) : null;
        if (current && 'text' in current && current.text === text) return;
        const written = await this.store.write(id, text);
        this.cache.set(id, { stamp: written, parsed: parseFile(text) });
        await this.mutateState((s) => {
          const known = s.profiles[id];
          if (known) known.file_mtime_ms = written.mtimeMs;
        });
        this.logger.log(`profile ${id}: file written from the journal`);
      });
    }
    await this.entries();
  }

  private async saveMeta(id: string, meta: ProfileMetadata, stamp: FileStamp): Promise<ProfileMetadata> {
    await this.mutateState((s) => {
      s.profiles[id] = { ...meta, file_mtime_ms: stamp.mtimeMs };
    });
    return meta;
  }

  private mutateState(change: (state: ProfilesState) => void): Promise<void> {
    return this.locks.run(STATE, async () => {
      const next = structuredClone(await this.loadState());
      change(next);
      await this.store.writeState(JSON.stringify(next));
      this.state = Promise.resolve(next);
    });
  }

  private loadState(): Promise<ProfilesState> {
    this.state ??= this.readState().catch((e: unknown) => {
      this.state = null;
      throw e;
    });
    return this.state;
  }

  /**
   * A damaged state file is set aside (never deleted) and the state rebuilt from the journal, where every
   * change to it was recorded; one bad file must not fail every profile request.
   */
  private async readState(): Promise<ProfilesState> {
    const text = await this.store.readState();
    // A missing state file (a new or deleted directory) is the journal's state, as is a damaged one.
    if (text === null) return rebuildProfilesState(await this.historyEvents());
    const parsed = parseProfilesState(text);
    if (parsed.ok) return parsed.state;
    const state = rebuildProfilesState(await this.historyEvents());
    const aside = await this.store.setStateAside();
    await this.store.writeState(JSON.stringify(state));
    this.logger.error(`profiles state file is damaged (${parsed.error}); kept as ${aside}, rebuilt from the journaled profile events`);
    return state;
  }

  /**
   * Read per profile stream, not from the whole journal: the profiles are those the state file names (itself rebuilt
   * from the whole history when missing or damaged) and those with a file.
   */
  private journaledFiles(): Promise<Map<string, JournaledFile>> {
    this.journaled ??= this.journaledEvents()
      .then(rebuildProfileFiles)
      .catch((e: unknown) => {
        this.journaled = null;
        throw e;
      });
    return this.journaled;
  }

  private async journaledEvents(): Promise<ProfileHistoryEvent[]> {
    if (!this.streams) return this.historyEvents();
    const [state, files] = await Promise.all([this.loadState(), this.store.list()]);
    const ids = new Set([...Object.keys(state.profiles), ...files.map((f) => f.id)]);
    return this.streams([...ids].filter((id) => !BUILTINS.has(id)));
  }

  private async historyEvents(): Promise<ProfileHistoryEvent[]> {
    const events: ProfileHistoryEvent[] = [];
    for await (const e of this.history()) events.push(e);
    return events;
  }

  private now(): string {
    return this.clock().toISOString();
  }
}

function parseFile(text: string): ParsedFile {
  const yaml = parseProfileYaml(text);
  if (!yaml.ok) return { error: `invalid YAML: ${yaml.error}` };
  const parsed = parseProfileDocument(yaml.value);
  return parsed.ok ? { doc: parsed.doc, metadataKeys: parsed.metadataKeys } : { error: parsed.errors.join('; ') };
}

/**
 * The file text for a valid document, refused when the YAML reader would not take it back (over 256 KiB, nested too
 * deep): a request must not save a profile that lists as malformed afterwards. The schema was checked already.
 */
function serialised(doc: ProfileDoc): string {
  const text = dumpProfileYaml(doc);
  const back = parseProfileYaml(text);
  if (!back.ok) throw new DomainError('invalid_input', `the profile cannot be saved: its file would not read back (${back.error})`);
  return text;
}

function validated(raw: unknown): ProfileDoc {
  const parsed = parseProfileDocument(raw);
  if (!parsed.ok) throw new DomainError('invalid_input', parsed.errors.join('; '), { errors: parsed.errors });
  return parsed.doc;
}

/** A schema message (`path: what is wrong`) as a lint finding on that path. */
function schemaFinding(message: string): LintFinding {
  const at = message.indexOf(': ');
  return { path: at > 0 ? message.slice(0, at) : '', code: 'schema', message };
}

function newMeta(at: string, source: ProfileSource, scope: ProfileScope): ProfileMetadata {
  return { created_at: at, updated_at: at, source, locked: false, owner_pack_id: null, scope };
}

/** The lock under which a profile's file and the journal's record of it change together. */
function onDisk(id: string): string {
  return `disk:${id}`;
}

/**
 * A body's `scope` (service metadata, not part of the document) apart from its document fields. Checked here as well
 * as by the DTO, since the main brain's tool passes bodies in without one.
 */
function takeScope(input: ProfileInput): { scope?: ProfileScope; fields: ProfileInput } {
  const { scope, ...fields } = input;
  if (scope === undefined) return { fields };
  if (!PROFILE_SCOPES.includes(scope as ProfileScope)) throw new DomainError('invalid_input', `scope: must be one of the following values: ${PROFILE_SCOPES.join(', ')}`);
  return { scope: scope as ProfileScope, fields };
}

/** API names to YAML names: `target_runtime` is the document's `runtime`. */
function fromApi(input: ProfileInput): Record<string, unknown> {
  const { target_runtime, ...rest } = toPlain(input) as Record<string, unknown>;
  return target_runtime === undefined ? rest : { ...rest, runtime: target_runtime };
}

/** Files without a record (written by hand) get their file time; a hand edit after our write moves updated_at. */
function metadataOf(stored: StoredMetadata | undefined, stamp: FileStamp): ProfileMetadata {
  const fileTime = new Date(stamp.mtimeMs).toISOString();
  if (!stored) return { created_at: fileTime, updated_at: fileTime, source: 'user', locked: false, owner_pack_id: null, scope: 'shared' };
  const { file_mtime_ms, ...meta } = stored;
  return file_mtime_ms === stamp.mtimeMs ? meta : { ...meta, updated_at: fileTime };
}

function nameKey(name: string): string {
  return name.trim().toLowerCase();
}

function notFound(id: string): DomainError {
  return new DomainError('not_found', `no profile ${id}`, { id });
}

function locked(id: string): DomainError {
  return new DomainError('profile_locked', `profile ${id} is locked; duplicate it to edit`, { id });
}

function nameTaken(name: string): DomainError {
  return new DomainError('profile_name_taken', `a profile named "${name}" already exists`, { name });
}
