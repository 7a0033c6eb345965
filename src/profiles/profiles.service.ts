import { Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { DomainError } from '../common/domain-error';
import { SerialQueue } from '../common/serial-queue';
import { Journal, JournalEvent } from '../journal/journal.port';
import { LintResult, lintProfile } from './profile.lint';
import { ProfileCatalog, isProfileStream } from './profile-catalog';
import { ProfileCommand, decide, decideIndex, locked, malformed, notFound, updatedDocument } from './profile.decider';
import { BUILTIN_DOCS, ProfileInput, fromApi, nameKey, schemaFinding, takeScope, validated } from './profile-document';
import { ProfileProjection } from './profile-projection';
import { CatalogSnapshots, CommandPart, ProfileCommands } from './profile-journal';
import { METADATA_FIELDS, PROFILE_ID_PATTERN, ProfileDoc, ProfileScope, parseProfileDocument } from './profile.schema';
import { slugify, uniqueId, uniqueName } from './profile.slug';
import { ProfileStore } from './profile.store';
import { dumpProfileYaml, parseProfileYaml } from './profile.yaml';
import { Entry, ImportResult, ProfileItem, ProfileList, ProfileView, ProjectBinding, SaveCheck, SavedListener, SavedProfile, ValidEntry, builtinEntry, validView, viewOf } from './profile-views';
import { DEFAULT_PROFILE_ID } from './templates';

export type Clock = () => Date;

export type { ProfileMetadata } from './profiles-state';
export type { ProfileInput } from './profile-document';
export type {
  ImportNoteCode,
  ImportResult,
  MalformedProfileView,
  ProfileItem,
  ProfileList,
  ProfileSide,
  ProfileView,
  ProjectBinding,
  SaveCheck,
  SavedListener,
  SavedProfile,
  SaveWarning,
} from './profile-views';

/**
 * Agent Profiles: built-ins from the code, user profiles from the journal (`profile-<id>`, folded by the decider's
 * evolve), projected to `<dir>/<id>.yaml` files that users may edit by hand. This class orchestrates: it loads, runs
 * each command through the one command path (ProfileCommands, then the disk projection), and answers queries.
 */
export class ProfilesService implements OnModuleInit, OnModuleDestroy {
  private readonly catalog = new ProfileCatalog();
  private readonly commands: ProfileCommands;
  private readonly disk: ProfileProjection;
  private readonly snapshots: CatalogSnapshots;
  /** Commands, hand edits found and writes from other nodes' changes, one at a time. */
  private readonly queue = new SerialQueue();
  private loading: Promise<void> | null = null;
  private unfollow: (() => void) | null = null;
  private savedListener: SavedListener | null = null;
  private readonly logger = new Logger('profiles');

  constructor(
    store: ProfileStore,
    private readonly journal: Journal,
    private readonly clock: Clock,
    private readonly env: { home: string },
  ) {
    this.commands = new ProfileCommands(journal, this.catalog);
    this.disk = new ProfileProjection(store, this.catalog, this.commands, this.logger);
    this.snapshots = new CatalogSnapshots(journal, this.catalog, (m) => this.logger.warn(m));
  }

  /** Boot: the catalogue is folded from the journal and the files brought in line with it before anything is answered. */
  async onModuleInit(): Promise<void> {
    await this.ready();
  }

  /** The next boot reads the snapshot taken here and nothing after it. */
  async onModuleDestroy(): Promise<void> {
    this.unfollow?.();
    if (this.loading) await this.snapshots.save(true);
  }

  async list(): Promise<ProfileList> {
    // A list that loaded the service answers from the files the load just read.
    if (!(await this.ready())) await this.sync();
    const defaultId = this.defaultId();
    return { profiles: this.disk.entries().map((e) => viewOf(e, defaultId)), default_profile_id: defaultId };
  }

  async get(id: string): Promise<ProfileItem> {
    return viewOf(await this.entry(id), this.defaultId());
  }

  async create(input: ProfileInput, check?: SaveCheck): Promise<SavedProfile> {
    const { scope = 'shared', fields } = takeScope(input);
    const doc = validated(fromApi(fields));
    const id = await this.change(async () => {
      await this.disk.syncLocked();
      check?.(null, { doc, scope });
      const created = uniqueId(slugify(doc.name), this.disk.idTaken());
      await this.decide(created, () => ({ type: 'create', doc, scope, at: this.now(), names: this.disk.namesInUse() }));
      return created;
    });
    return this.afterSave(id);
  }

  async update(id: string, patch: ProfileInput, check?: SaveCheck): Promise<SavedProfile> {
    const { scope, fields } = takeScope(patch);
    const changes = fromApi(fields);
    const renaming = typeof changes.name === 'string';
    await this.change(async () => {
      // A rename is checked against every name: every file is looked at first.
      await this.disk.syncLocked(renaming ? undefined : [id]);
      this.visible(id);
      await this.commands.run([{ kind: 'profile', id, decide: (s) => {
        // The check judges the update as it would be saved, before the name is checked (as a create's is).
        const updated = check && s.profile ? updatedDocument(s, changes) : null;
        if (check && s.profile && updated && 'doc' in updated) {
          check({ id, doc: updated.before, scope: s.profile.meta.scope }, { doc: updated.doc, scope: scope ?? s.profile.meta.scope });
        }
        return decide({ type: 'update', changes, scope, at: this.now(), names: this.disk.namesInUse() }, s);
      } }], (stored) => this.disk.project(stored));
    });
    return this.afterSave(id);
  }

  onSaved(listener: SavedListener): void {
    this.savedListener = listener;
  }

  /** A valid profile and its lint findings in its own scope, for preview, apply and sessions. */
  async forApply(id: string): Promise<{ doc: ProfileDoc; lint: LintResult }> {
    const entry = await this.valid(id);
    return { doc: entry.doc, lint: this.lintEntry(entry) };
  }

  /** Project directories bound to this profile. */
  async boundProjects(id: string): Promise<string[]> {
    await this.ready();
    return Object.entries(this.catalog.bindings()).filter(([, bound]) => bound === id).map(([dir]) => dir).sort();
  }

  async remove(id: string): Promise<void> {
    await this.change(async () => {
      if (!BUILTIN_DOCS.has(id)) {
        await this.disk.syncLocked([id]);
        this.visible(id);
      }
      await this.decide(id, () => ({ type: 'delete' }));
    });
  }

  async duplicate(id: string, name?: string | null): Promise<ProfileView> {
    const copyId = await this.change(async () => {
      await this.disk.syncLocked();
      const source = this.validNow(id);
      const names = this.disk.namesInUse();
      const doc: ProfileDoc = { ...source.doc, name: name ?? uniqueName(source.doc.name, (n) => names.has(nameKey(n)), ' (copy)') };
      const copy = uniqueId(`${id.slice(0, 59).replace(/-+$/, '')}-copy`, this.disk.idTaken());
      await this.decide(copy, () => ({ type: 'duplicate', from: id, doc, scope: source.meta.scope, at: this.now(), names: this.disk.namesInUse() }));
      return copy;
    });
    return this.savedView(copyId);
  }

  async setDefault(id: string): Promise<ProfileView> {
    await this.change(async () => {
      if (!BUILTIN_DOCS.has(id)) {
        await this.disk.syncLocked([id]);
        this.visible(id);
      }
      await this.decide(id, () => ({ type: 'set_default', previous: this.defaultId() }));
    });
    return this.savedView(id);
  }

  /** Records what an apply did (ProfileApplier): journaled on the profile's stream like every change. */
  async recordApply(id: string, result: Extract<ProfileCommand, { type: 'record_apply' }>['result']): Promise<void> {
    await this.change(() => this.decide(id, () => ({ type: 'record_apply', result })));
  }

  /** Lints in the profile's own scope, or in the scope asked for (built-ins are shared whatever is asked). */
  async lint(id: string, scope?: ProfileScope): Promise<LintResult> {
    const entry = await this.entry(id);
    if ('error' in entry) return { valid: false, errors: [{ path: '', code: 'schema', message: entry.error }], warnings: [] };
    return this.lintEntry(entry, scope);
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
    const { doc, warnings } = importable(text);
    check?.(null, { doc, scope: 'shared' });
    const id = await this.change(async () => {
      await this.disk.syncLocked();
      const names = this.disk.namesInUse();
      const name = uniqueName(doc.name, (n) => names.has(nameKey(n)));
      if (name !== doc.name) warnings.push({ path: 'name', code: 'renamed', message: `the name "${doc.name}" is taken; imported as "${name}"` });
      const imported = uniqueId(slugify(name), this.disk.idTaken());
      await this.decide(imported, () => ({ type: 'import', doc: { ...doc, name }, warnings: warnings.map((w) => w.code), at: this.now(), names: this.disk.namesInUse() }));
      return imported;
    });
    return { profile: await this.savedView(id), warnings, lint: await this.lint(id) };
  }

  async exportYaml(id: string): Promise<string> {
    return dumpProfileYaml((await this.valid(id)).doc);
  }

  async bindProject(projectDir: string, profileId: string | null): Promise<{ project_dir: string; profile_id: string | null }> {
    if (!isAbsolute(projectDir)) throw new DomainError('invalid_input', 'project_dir: must be an absolute path');
    const dir = resolve(projectDir);
    await this.change(async () => {
      if (profileId !== null && !BUILTIN_DOCS.has(profileId)) await this.disk.syncLocked([profileId]);
      const target = profileId === null ? null : this.disk.status(profileId);
      const part: CommandPart = { kind: 'index', decide: (s) => decideIndex({ type: 'bind', project_dir: dir, profile_id: profileId, target }, s) };
      await this.commands.run([part], (stored) => this.disk.project(stored));
    });
    return { project_dir: dir, profile_id: profileId };
  }

  async bindings(): Promise<{ bindings: ProjectBinding[] }> {
    await this.ready();
    const bindings = Object.entries(this.catalog.bindings()).map(([project_dir, profile_id]) => ({ project_dir, profile_id }));
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
    await this.ready();
    const bindings = this.catalog.bindings();
    for (let dir = resolve(cwd); ; dir = dirname(dir)) {
      if (bindings[dir]) return { project_dir: dir, profile_id: bindings[dir] };
      if (dir === dirname(dir)) return null;
    }
  }

  /** Relative skill paths are read against the profile's default_cwd, else the profiles directory. */
  skillDir(doc: ProfileDoc, path: string): string {
    const expanded = path === '~' || path.startsWith('~/') ? join(this.env.home, path.slice(1)) : path;
    return resolve(doc.default_cwd || this.disk.dir, expanded);
  }

  // ---- reading ----

  private async entry(id: string): Promise<Entry> {
    if (!PROFILE_ID_PATTERN.test(id)) throw domainError(notFound(id));
    const builtin = BUILTIN_DOCS.get(id);
    if (builtin) return builtinEntry(id, builtin);
    await this.sync([id]);
    const entry = this.disk.entry(id);
    if (!entry) throw domainError(notFound(id));
    return entry;
  }

  /** A profile that parsed; malformed files cannot be copied, exported or applied. */
  private async valid(id: string): Promise<ValidEntry> {
    return asValid(await this.entry(id));
  }

  /** As valid(), inside the queue, on what the last look at the files found. */
  private validNow(id: string): ValidEntry {
    if (!PROFILE_ID_PATTERN.test(id)) throw domainError(notFound(id));
    const builtin = BUILTIN_DOCS.get(id);
    const entry = builtin ? builtinEntry(id, builtin) : this.disk.entry(id);
    if (!entry) throw domainError(notFound(id));
    return asValid(entry);
  }

  /** A user profile must have its file to be used (one deleted by hand is gone until the next start writes it back). */
  private visible(id: string): void {
    if (!BUILTIN_DOCS.has(id) && this.disk.entry(id) === null) throw domainError(BUILTIN_DOCS.has(id) ? locked(id) : notFound(id));
  }

  private lintEntry(entry: ValidEntry, scope?: ProfileScope): LintResult {
    const { doc, metadataKeys, meta } = entry;
    const shared = meta.source === 'builtin' || (scope ?? meta.scope) === 'shared';
    return lintProfile(doc, { shared, metadataKeys, skillFileExists: (p) => existsSync(join(this.skillDir(doc, p), 'SKILL.md')) });
  }

  private defaultId(): string {
    const chosen = this.catalog.defaultId();
    return chosen && (BUILTIN_DOCS.has(chosen) || this.disk.entry(chosen) !== null) ? chosen : DEFAULT_PROFILE_ID;
  }

  private async savedView(id: string): Promise<ProfileView> {
    return validView(this.validNow(id), this.defaultId());
  }

  private async afterSave(id: string): Promise<SavedProfile> {
    const view = await this.savedView(id);
    const warnings = this.savedListener && view.auto_apply_dir ? await this.savedListener(id, this.validNow(id).doc) : [];
    return { ...view, warnings };
  }

  // ---- the command path ----

  /** Loads once; answers whether this call did (the files were read just now). */
  private async ready(): Promise<boolean> {
    if (this.loading) {
      await this.loading;
      return false;
    }
    this.loading = this.load().catch((e: unknown) => {
      this.loading = null;
      throw e;
    });
    await this.loading;
    return true;
  }

  /**
   * Folds the journal (followed from before it is read, so another node's change meanwhile is read or applied after),
   * then brings the files in line with it.
   */
  private async load(): Promise<void> {
    let early: JournalEvent[] | null = [];
    this.unfollow?.();
    this.unfollow = this.journal.follow((e) => {
      if (!isProfileStream(e.stream)) return;
      if (early) early.push(e);
      else this.followed(e);
    });
    await this.disk.load(this.journal);
    const followed = early;
    early = null;
    for (const e of followed) this.catalog.apply(e);
    await this.queue.run(() => this.disk.reconcile());
  }

  /** Another node's change: folded now, written to disk in turn. */
  private followed(e: JournalEvent): void {
    this.catalog.apply(e);
    void this.snapshots.save();
    this.queue.run(() => this.disk.projectFollowed(e)).catch((err: unknown) => this.logger.error(`profiles: ${e.stream} could not be written to disk (${(err as Error).message})`));
  }

  private async change<T>(job: () => Promise<T>): Promise<T> {
    await this.ready();
    try {
      return await this.queue.run(job);
    } finally {
      void this.snapshots.save();
    }
  }

  /**
   * One command on one profile's stream, then its projection. Runs in the queue. The command is made anew for each
   * decision: after another node's append, what it knows (names in use, the default) is taken again.
   */
  private async decide(id: string, command: () => ProfileCommand): Promise<void> {
    await this.commands.run([{ kind: 'profile', id, decide: (s) => decide(command(), s) }], (stored) => this.disk.project(stored));
  }

  /** Looks at the files (all, or those named) and journals the hand edits found. */
  private async sync(only?: readonly string[]): Promise<void> {
    await this.ready();
    const found = await this.disk.scan(only);
    if (found.length > 0) await this.queue.run(() => this.disk.notice(found));
  }

  private now(): string {
    return this.clock().toISOString();
  }
}

function asValid(entry: Entry): ValidEntry {
  if ('error' in entry) throw domainError(malformed(entry.id, entry.error));
  return entry;
}

function domainError(r: { code: DomainError['code']; message: string; details?: Record<string, unknown> }): DomainError {
  return new DomainError(r.code, r.message, r.details);
}

/** An exported file as a document to import, with what was left out of it and why. */
function importable(text: string): { doc: ProfileDoc; warnings: ImportResult['warnings'] } {
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
  return { doc: validated(fields), warnings };
}
