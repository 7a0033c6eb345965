import { Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { DomainError } from '../common/domain-error';
import { SerialQueue } from '../common/serial-queue';
import { Refusal } from '../journal/command-handler';
import { Journal, JournalEvent } from '../journal/journal.port';
import { LintResult, lintProfile } from './profile.lint';
import { ProfileCatalog, isProfileStream } from './profile-catalog';
import { ProfileCommand, ProfileDecision, ProfileStream, decide, decideIndex, malformed, notFound, updatedDocument } from './profile.decider';
import { BUILTIN_DOCS, ProfileInput, fromApi, importable, nameKey, schemaFinding, takeScope, validated } from './profile-document';
import { ProfileProjection } from './profile-projection';
import { CatalogSnapshots, CommandPart, ProfileCommands } from './profile-journal';
import { MetadataField, PROFILE_ID_PATTERN, ProfileDoc, ProfileScope, parseProfileDocument } from './profile.schema';
import { slugify, uniqueId, uniqueName } from './profile.slug';
import { ProfileStore } from './profile.store';
import { dumpProfileYaml } from './profile.yaml';
import { Entry, ImportResult, ProfileItem, ProfileList, ProfileView, ProjectBinding, SaveCheck, SavedListener, SavedProfile, ValidEntry, validView, viewOf } from './profile-views';

export type Clock = () => Date;

// The types other modules take from here.
export type { ProfileItem, ProfileView, SaveCheck, SavedProfile } from './profile-views';

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
      if (renaming) await this.disk.syncLocked();
      await this.visible(id);
      await this.commands.run([{ kind: 'profile', id, decide: (s) => this.checkedUpdate(s, changes, scope, check) }], (stored) => this.disk.project(stored));
    });
    return this.afterSave(id);
  }

  /**
   * The update decided, after the save check judged it as it would be saved (the document merged and valid), before
   * the name is checked, as a create's is.
   */
  private checkedUpdate(s: ProfileStream, changes: Record<string, unknown>, scope: ProfileScope | undefined, check?: SaveCheck): ProfileDecision {
    if (check && s.profile) {
      const updated = updatedDocument(s, changes);
      if ('doc' in updated) check({ id: s.id, doc: updated.before, scope: s.profile.meta.scope }, { doc: updated.doc, scope: scope ?? s.profile.meta.scope });
    }
    return decide({ type: 'update', changes, scope, at: this.now(), names: this.disk.namesInUse() }, s);
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
      await this.visible(id);
      await this.decide(id, () => ({ type: 'delete' }));
    });
  }

  async duplicate(id: string, name?: string | null): Promise<ProfileView> {
    const copyId = await this.change(async () => {
      await this.disk.syncLocked();
      const source = asValid(this.disk.profile(id) ?? raise(notFound(id)));
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
      await this.visible(id);
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
    return this.lintDoc(parsed.doc, parsed.metadataKeys, scope === 'shared');
  }

  async importYaml(text: string, check?: SaveCheck): Promise<ImportResult> {
    const { doc, notes: warnings } = importable(text);
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

  /** A profile as its file is now (its hand edit journaled first). */
  private async entry(id: string): Promise<Entry> {
    if (PROFILE_ID_PATTERN.test(id) && !BUILTIN_DOCS.has(id)) await this.sync([id]);
    return this.disk.profile(id) ?? raise(notFound(id));
  }

  /** A profile that parsed; malformed files cannot be copied, exported or applied. */
  private async valid(id: string): Promise<ValidEntry> {
    return asValid(await this.entry(id));
  }

  /** In the queue: a user profile must have its file to be changed (one deleted by hand is gone until the next start writes it back). */
  private async visible(id: string): Promise<void> {
    if (BUILTIN_DOCS.has(id)) return;
    await this.disk.syncLocked([id]);
    if (!this.disk.profile(id)) raise(notFound(id));
  }

  private lintEntry(entry: ValidEntry, scope?: ProfileScope): LintResult {
    return this.lintDoc(entry.doc, entry.metadataKeys, entry.meta.source === 'builtin' || (scope ?? entry.meta.scope) === 'shared', entry.id);
  }

  private lintDoc(doc: ProfileDoc, metadataKeys: MetadataField[], shared: boolean, selfId?: string): LintResult {
    return lintProfile(doc, {
      shared,
      metadataKeys,
      skillFileExists: (p) => existsSync(join(this.skillDir(doc, p), 'SKILL.md')),
      fallbackOf: (id) => this.fallbackOf(id),
      ...(selfId !== undefined ? { selfId } : {}),
    });
  }

  /** A profile's own fallback, for the linter: undefined when there is no valid profile by that id. */
  private fallbackOf(id: string): string | null | undefined {
    const entry = this.disk.profile(id);
    if (!entry || !('doc' in entry)) return undefined;
    return entry.doc.on_limit?.fallback_profile ?? null;
  }

  private defaultId(): string {
    return this.disk.defaultId();
  }

  private savedView(id: string): ProfileView {
    return validView(asValid(this.disk.profile(id) ?? raise(notFound(id))), this.defaultId());
  }

  private async afterSave(id: string): Promise<SavedProfile> {
    const view = this.savedView(id);
    const warnings = this.savedListener && view.auto_apply_dir ? await this.savedListener(id, asValid(this.disk.profile(id) ?? raise(notFound(id))).doc) : [];
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
  if ('error' in entry) raise(malformed(entry.id, entry.error));
  return entry;
}

function raise(refusal: Refusal): never {
  throw new DomainError(refusal.code, refusal.message, refusal.details);
}
