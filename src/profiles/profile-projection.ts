import { LoggerService } from '@nestjs/common';
import { JournalEvent, JournalReader } from '../journal/journal.port';
import { ProfileCatalog, profileIdOf } from './profile-catalog';
import { ProfileRecord, ProfileStatus, decide, decideIndex, parsedRecord, rememberParsed } from './profile.decider';
import { BUILTIN_DOCS, ParsedFile, ROUTE_IDS, nameKey, newMeta, parseProfileText } from './profile-document';
import { DiskFile, ProfileFiles, ReadFile } from './profile-files';
import { CommandPart, ProfileCommands, loadCatalog } from './profile-journal';
import { PROFILE_ID_PATTERN } from './profile.schema';
import { ProfileStore } from './profile.store';
import { Entry, builtinEntry, entryOf } from './profile-views';
import { ProfileMetadata, ProfilesState, parseProfilesState } from './profiles-state';
import { BUILTIN_PROFILES, DEFAULT_PROFILE_ID } from './templates';

/** Events after which the journal holds a new text for the profile's file. */
const NEW_TEXT = new Set(['profile.created', 'profile.duplicated', 'profile.imported', 'profile.updated', 'profile.edited_on_disk']);

/**
 * The profiles directory as a projection of the journal: each user profile's `<id>.yaml` written from the text the
 * journal holds, and the state file. Files differing from the journal are hand edits, journaled as
 * `profile.edited_on_disk` (a user's edit on disk is a change like any other); until the journal takes one, the file
 * is what is read. Nothing here decides: commands go through ProfileCommands.
 */
export class ProfileProjection {
  private readonly files: ProfileFiles;
  /** The state file as last read or written (null: none), so an unchanged state is not written again. */
  private stateText: string | null = null;
  /** How many times the state file was brought up to date: reconcile's last check is skipped when an append did it. */
  private stateChecks = 0;
  /** The state file as it was at boot. */
  private bootState: ProfilesState | null = null;
  /** Each file's mtime when it last agreed with the journal, as the state file had it at boot. */
  private bootMtimes: Record<string, number> = {};
  /** Parsed texts of files the journal does not hold (yet), by id. */
  private readonly parsedDisk = new Map<string, { text: string; parsed: ParsedFile }>();

  constructor(
    private readonly store: ProfileStore,
    private readonly catalog: ProfileCatalog,
    private readonly commands: ProfileCommands,
    private readonly logger: LoggerService,
  ) {
    this.files = new ProfileFiles(store);
  }

  get dir(): string {
    return this.store.dir;
  }

  /**
   * Reads the state file (a damaged one is set aside, never deleted) and folds the journal into the catalogue: a state
   * file from before the index (or none) has the whole journal read, once (loadCatalog).
   */
  async load(journal: JournalReader): Promise<void> {
    const text = await this.store.readState();
    let state: ProfilesState | null = null;
    if (text !== null) {
      const parsed = parseProfilesState(text);
      if (parsed.ok) state = parsed.state;
      else this.logger.error(`profiles state file is damaged (${parsed.error}); kept as ${await this.store.setStateAside()}, rebuilt from the journaled profile events`);
    }
    this.stateText = state ? text : null;
    this.bootState = state;
    this.bootMtimes = Object.fromEntries(Object.entries(state?.profiles ?? {}).map(([id, m]) => [id, m.file_mtime_ms]));
    await loadCatalog(journal, this.catalog, state?.format === 2, (m) => this.logger.warn(m));
  }

  /**
   * Boot, after load: writes each live profile's file that is missing, or that still holds what agreed with the journal
   * before the journal moved on (its mtime is the one the state file recorded: a crash between an append and its
   * write), and removes a deleted profile's file left so. Any other difference is a hand edit made while the service
   * was not watching, journaled with the files the journal does not know. Profile streams journaled before the index
   * are registered on it.
   */
  async reconcile(): Promise<void> {
    const adopting = this.catalog.empty;
    const read = new Map<string, ReadFile>();
    await this.files.scan(undefined, (id) => this.catalog.stream(id).version, (file) => {
      read.set(file.id, file);
      // Parsed as it arrives, while the other files are still being read: the first list needs every document.
      const record = this.catalog.record(file.id);
      if (record && agrees(record, file)) parsedRecord(record);
      else if (file.text !== null) this.parseDisk(file.id, file.text);
    });
    const found: ReadFile[] = [];
    for (const [id, record] of [...this.catalog.records()]) {
      const file = read.get(id);
      read.delete(id);
      if (file && agrees(record, file)) this.files.saw(file, true);
      else if (record.text !== null && (!file || this.bootMtimes[id] === file.stamp.mtimeMs)) {
        await this.files.write(id, record.text);
        this.logger.log(`profile ${id}: file written from the journal`);
      } else if (file) found.push(file);
    }
    for (const file of read.values()) {
      if (this.catalog.stream(file.id).version > 0 && this.bootMtimes[file.id] === file.stamp.mtimeMs) {
        await this.files.remove(file.id);
        this.logger.log(`profile ${file.id}: deleted in the journal, its file removed`);
      } else found.push(file);
    }
    const checked = this.stateChecks;
    await this.notice(found);
    if (adopting && this.bootState) await this.adopt(this.bootState);
    const unregistered = this.catalog.unregistered();
    if (unregistered.length > 0) {
      await this.commands.run([{ kind: 'index', decide: (s) => decideIndex({ type: 'register', ids: unregistered }, s) }], () => this.writeState());
    }
    // Written already by the appends above, which came after every file was looked at (1,000 profiles: 5 ms).
    if (this.stateChecks === checked) await this.writeState();
  }

  /**
   * A profiles directory brought to a journal that knows no profile: its state file's default and bindings are
   * journaled (its profiles' metadata went with their files' notices).
   */
  private async adopt(state: ProfilesState): Promise<void> {
    const parts: CommandPart[] = Object.entries(state.project_bindings).map(([dir, id]) => ({
      kind: 'index',
      decide: (s) => decideIndex({ type: 'bind', project_dir: dir, profile_id: id, target: this.status(id) }, s),
    }));
    const chosen = state.default_profile_id;
    if (chosen) parts.push({ kind: 'profile', id: chosen, decide: (s) => decide({ type: 'set_default', previous: DEFAULT_PROFILE_ID }, s) });
    for (const part of parts) {
      try {
        await this.commands.run([part], (stored) => this.project(stored));
      } catch (e) {
        this.logger.warn(`profiles: the state file's ${part.kind === 'index' ? 'binding' : 'default'} was not taken up (${(e as Error).message})`);
      }
    }
  }

  /** What a command on another stream (a binding) sees of a profile. */
  status(id: string): ProfileStatus {
    if (BUILTIN_DOCS.has(id)) return 'valid';
    const entry = this.entry(id);
    if (!entry) return 'missing';
    return 'error' in entry ? { malformed: entry.error } : 'valid';
  }

  /** Looks at the files (all, or those named): answers those that differ from the journal, to notice. */
  async scan(only?: readonly string[]): Promise<ReadFile[]> {
    const found: ReadFile[] = [];
    await this.files.scan(only, (id) => this.catalog.stream(id).version, (file) => {
      const agreed = agrees(this.catalog.record(file.id), file);
      this.files.saw(file, agreed);
      if (agreed) return;
      if (file.text !== null) this.parseDisk(file.id, file.text);
      found.push(file);
    });
    return found;
  }

  /** scan() and notice(), for a command that decides on what the files hold: runs in the command queue. */
  async syncLocked(only?: readonly string[]): Promise<void> {
    await this.notice(await this.scan(only));
  }

  /**
   * Journals the files that differ from the journal as hand edits, in one append (a malformed one with its error: it
   * never fails the read). One that cannot be journaled is logged, read from disk meanwhile, and tried again next time.
   */
  async notice(found: readonly ReadFile[]): Promise<void> {
    if (found.length === 0) return;
    const parts: CommandPart[] = found.map((f) => {
      const parsed = f.text === null ? { error: f.unreadable ?? 'unreadable' } : this.parseDisk(f.id, f.text);
      const error = 'error' in parsed ? parsed.error : null;
      const at = new Date(f.stamp.mtimeMs).toISOString();
      const meta = this.keptMeta(f);
      return { kind: 'profile', id: f.id, decide: (s) => decide({ type: 'notice_edit', text: f.text, error, at, observed_version: f.observed_version, meta }, s) };
    });
    let marked = false;
    try {
      await this.commands.run(parts, async (stored) => {
        // Before the state file is written: it records the mtimes of the files that now agree with the journal.
        this.journaled(found);
        marked = true;
        await this.project(stored);
      });
    } catch (e) {
      this.logger.error(`profiles ${found.map((f) => f.id).join(', ')}: a change to their files could not be journaled (${(e as Error).message})`);
      return;
    }
    // Nothing was appended (the journal already held them): no effects ran.
    if (!marked) this.journaled(found);
  }

  private journaled(found: readonly ReadFile[]): void {
    for (const f of found) {
      const record = this.catalog.record(f.id);
      if (!agrees(record, f)) continue;
      this.files.saw(f, true);
      // The journal now holds the text just parsed: its record need not parse it again.
      const parsed = f.text === null ? null : this.parsedDisk.get(f.id);
      if (record && parsed?.text === f.text) rememberParsed(record, parsed.parsed);
      this.parsedDisk.delete(f.id);
      if (record?.error) this.logger.warn(`profile ${f.id}: its file was edited and is malformed: ${record.error}`);
    }
  }

  /**
   * What the state file kept of a profile the journal never heard of (a directory brought to another journal): its
   * metadata, last updated when the file still has the mtime recorded with it, else when the file was edited.
   */
  private keptMeta(f: DiskFile): ProfileMetadata | undefined {
    const kept = this.catalog.stream(f.id).version === 0 ? this.bootState?.profiles[f.id] : undefined;
    if (!kept) return undefined;
    const { file_mtime_ms, ...meta } = kept;
    return file_mtime_ms === f.stamp.mtimeMs ? meta : { ...meta, updated_at: new Date(f.stamp.mtimeMs).toISOString() };
  }

  /** The effects of the service's own appends: the files written from the journal's texts, and the state file. */
  async project(stored: readonly JournalEvent[]): Promise<void> {
    const types = new Map<string, Set<string>>();
    for (const e of stored) {
      const id = profileIdOf(e.stream);
      if (id !== null) types.set(id, (types.get(id) ?? new Set()).add(e.type));
    }
    for (const [id, journaled] of types) {
      const record = this.catalog.record(id);
      if (!record && journaled.has('profile.deleted')) await this.files.remove(id);
      // A hand edit journaled is the file as it is: nothing to write.
      else if (record?.text != null && [...journaled].some((t) => NEW_TEXT.has(t) && t !== 'profile.edited_on_disk')) await this.files.write(id, record.text);
    }
    await this.writeState();
  }

  /** Another node's change: its file written here too, unless edited by hand since this node last looked. */
  async projectFollowed(e: JournalEvent): Promise<void> {
    const id = profileIdOf(e.stream);
    const record = id === null ? null : this.catalog.record(id);
    if (id !== null && e.type === 'profile.deleted' && !record) await this.files.remove(id);
    else if (id !== null && record?.text != null && NEW_TEXT.has(e.type)) await this.files.writeIfUnchanged(id, record.text);
    await this.writeState();
  }

  /** The profiles there are, built-ins first, then every user profile file by id. */
  entries(): Entry[] {
    const user = this.files.ids().sort().flatMap((id) => this.entry(id) ?? []);
    return [...BUILTIN_PROFILES.map((t) => builtinEntry(t.id, t.doc)), ...user];
  }

  /**
   * A user profile as its file was last seen: what the journal holds when they agree (or when only the journal's write
   * is still to come), else what the file holds. Null when there is no file.
   */
  entry(id: string): Entry | null {
    const seen = this.files.lastSeen(id);
    if (!seen) return null;
    const record = this.catalog.record(id);
    if (this.files.agreed(id)) return record ? recordEntry(id, record) : null;
    const parsed = seen.text === null ? { error: seen.unreadable ?? 'unreadable' } : this.parseDisk(id, seen.text);
    const fileTime = new Date(seen.stamp.mtimeMs).toISOString();
    return entryOf(id, parsed, record ? { ...record.meta, updated_at: fileTime } : newMeta(fileTime, 'user', 'shared'));
  }

  /** A profile as the files were last seen, built-ins from the code; null when there is none. */
  profile(id: string): Entry | null {
    if (!PROFILE_ID_PATTERN.test(id)) return null;
    const builtin = BUILTIN_DOCS.get(id);
    return builtin ? builtinEntry(id, builtin) : this.entry(id);
  }

  /** The default profile: the one the journal says was chosen while it has a file, else the built-in default. */
  defaultId(): string {
    const chosen = this.catalog.defaultId();
    return chosen && this.profile(chosen) ? chosen : DEFAULT_PROFILE_ID;
  }

  /**
   * Names of the valid profiles there are, built-ins included: name key → id. The journal's profiles count whether or
   * not their file is written yet (another node's, a moment ago), as do files the journal has not taken yet.
   */
  namesInUse(): Map<string, string> {
    const names = new Map(BUILTIN_PROFILES.map((t) => [nameKey(t.doc.name), t.id]));
    const add = (id: string, parsed: ParsedFile) => 'doc' in parsed && names.set(nameKey(parsed.doc.name), id);
    for (const [id, record] of this.catalog.records()) add(id, parsedRecord(record));
    for (const id of this.files.ids()) {
      const entry = this.files.agreed(id) ? null : this.entry(id);
      if (entry && 'doc' in entry) add(id, entry);
    }
    return names;
  }

  /** Whether a new profile may take an id: not a built-in's, a route's, a file's or a profile's the journal holds. */
  idTaken(): (id: string) => boolean {
    const ids = new Set([...BUILTIN_DOCS.keys(), ...ROUTE_IDS, ...this.files.ids(), ...[...this.catalog.records()].map(([id]) => id)]);
    return (id) => ids.has(id);
  }

  /** Writes the state file when what it holds changed; none is written while there is nothing to hold. */
  private async writeState(): Promise<void> {
    this.stateChecks++;
    const state = this.catalog.stateFile((id) => this.files.agreedMtime(id) ?? this.bootMtimes[id]);
    const empty = Object.keys(state.profiles).length === 0 && state.default_profile_id === null && Object.keys(state.project_bindings).length === 0;
    if (this.stateText === null && empty) return;
    const text = JSON.stringify(state);
    if (text === this.stateText) return;
    await this.store.writeState(text);
    this.stateText = text;
  }

  private parseDisk(id: string, text: string): ParsedFile {
    const cached = this.parsedDisk.get(id);
    if (cached?.text === text) return cached.parsed;
    const parsed = parseProfileText(text);
    this.parsedDisk.set(id, { text, parsed });
    return parsed;
  }
}

/** Whether the journal holds what the file does. */
function agrees(record: ProfileRecord | null, file: DiskFile): boolean {
  return record !== null && record.text === file.text && (file.text !== null || record.error === file.unreadable);
}

function recordEntry(id: string, record: ProfileRecord): Entry {
  return entryOf(id, parsedRecord(record), record.meta);
}
