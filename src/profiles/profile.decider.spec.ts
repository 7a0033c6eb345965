import { ProfileCommand, ProfileEvent, ProfileStream, ProfilesIndex, decide, decideIndex, emptyIndex, emptyStream, evolve, evolveIndex } from './profile.decider';
import { normalizeDocument } from './profile.schema';
import { dumpProfileYaml } from './profile.yaml';

const AT = '2026-11-26T10:00:00.000Z';
const NO_NAMES: ReadonlyMap<string, string> = new Map();
const doc = (name: string, extra: object = {}) => normalizeDocument({ name, ...extra });

/** Given: the stream's journal, folded as boot, appends and followers fold it. */
function given(id: string, ...events: ProfileEvent[]): ProfileStream {
  return events.reduce((s, e, i) => evolve(s, { ...e, seq: 10 * (i + 1), version: i + 1, at: `2026-11-26T09:00:0${i}.000Z` }), emptyStream(id));
}

function givenIndex(...events: ProfileEvent[]): ProfilesIndex {
  return events.reduce((s, e, i) => evolveIndex(s, { ...e, seq: 10 * (i + 1), version: i + 1, at: AT }), emptyIndex());
}

const created = (id: string, name = 'Reviewer', extra: object = {}): ProfileEvent => {
  const d = doc(name, extra);
  return { type: 'profile.created', data: { id, name, source: 'user', scope: 'shared', at: AT, doc: d, text: dumpProfileYaml(d) } };
};
const update = (changes: Record<string, unknown>, names = NO_NAMES, scope?: 'shared' | 'personal'): ProfileCommand => ({ type: 'update', changes, scope, at: AT, names });

describe('profile decider', () => {
  describe('create, import, duplicate', () => {
    it('Given no profile, When one is created, Then profile.created carries the document and the text its file is written from, and the fold holds it', () => {
      const d = decide({ type: 'create', doc: doc('Reviewer'), scope: 'personal', at: AT, names: NO_NAMES }, emptyStream('reviewer'));
      expect(d.error).toBeUndefined();
      expect(d.events).toEqual([
        { type: 'profile.created', data: { id: 'reviewer', name: 'Reviewer', source: 'user', scope: 'personal', at: AT, doc: doc('Reviewer'), text: dumpProfileYaml(doc('Reviewer')) } },
      ]);
      expect(given('reviewer', ...d.events).profile).toEqual({
        meta: { created_at: AT, updated_at: AT, source: 'user', locked: false, owner_pack_id: null, scope: 'personal' },
        text: dumpProfileYaml(doc('Reviewer')),
        error: null,
      });
    });

    it('Given a profile named so (any case), When another takes the name, Then it is refused as profile_name_taken', () => {
      const names = new Map([['reviewer', 'other']]);
      expect(decide({ type: 'create', doc: doc(' REVIEWER '), scope: 'shared', at: AT, names }, emptyStream('reviewer-2')).error).toEqual({
        code: 'profile_name_taken',
        message: 'a profile named " REVIEWER " already exists',
        details: { name: ' REVIEWER ' },
      });
    });

    it("Given the stream holds a profile (another node took the id first), When one is created on it, Then it is refused as conflict", () => {
      expect(decide({ type: 'create', doc: doc('Other'), scope: 'shared', at: AT, names: NO_NAMES }, given('reviewer', created('reviewer'))).error?.code).toBe('conflict');
    });

    it("When a profile is created on a built-in's id, Then it is refused as profile_locked", () => {
      expect(decide({ type: 'create', doc: doc('Mine'), scope: 'shared', at: AT, names: NO_NAMES }, emptyStream('code-reviewer')).error?.code).toBe('profile_locked');
    });

    it('Given a deleted profile, When its id is taken again, Then the stream holds the new profile', () => {
      const s = given('reviewer', created('reviewer'), { type: 'profile.deleted', data: { id: 'reviewer' } });
      const d = decide({ type: 'create', doc: doc('Reviewer'), scope: 'shared', at: AT, names: NO_NAMES }, s);
      expect(d.events.map((e) => e.type)).toEqual(['profile.created']);
    });

    it('When a file is imported or a profile duplicated, Then profile.imported (always shared) and profile.duplicated name where they come from', () => {
      const imported = decide({ type: 'import', doc: doc('Imported'), warnings: ['renamed'], at: AT, names: NO_NAMES }, emptyStream('imported'));
      expect(imported.events[0]).toMatchObject({ type: 'profile.imported', data: { id: 'imported', name: 'Imported', warnings: ['renamed'] } });
      expect(given('imported', ...imported.events).profile?.meta).toMatchObject({ source: 'import', scope: 'shared' });
      const copy = decide({ type: 'duplicate', from: 'a', doc: doc('A (copy)'), scope: 'personal', at: AT, names: NO_NAMES }, emptyStream('a-copy'));
      expect(copy.events[0]).toMatchObject({ type: 'profile.duplicated', data: { id: 'a-copy', from: 'a', name: 'A (copy)', scope: 'personal' } });
    });
  });

  describe('update', () => {
    it('Given a profile, When fields change, Then profile.updated names them (sorted, scope included) and carries the merged document', () => {
      const s = given('reviewer', created('reviewer', 'Reviewer', { model: { model: 'm1', provider: 'p' } }));
      const d = decide(update({ model: { model: 'm2' }, description: 'new' }, NO_NAMES, 'personal'), s);
      expect(d.events).toHaveLength(1);
      const e = d.events[0] as Extract<ProfileEvent, { type: 'profile.updated' }>;
      expect(e.data).toMatchObject({ id: 'reviewer', fields: ['description', 'model', 'scope'], scope: 'personal', at: AT });
      expect(e.data.doc).toMatchObject({ description: 'new', model: { model: 'm2', provider: 'p' } });
      expect(given('reviewer', created('reviewer'), e).profile?.meta).toMatchObject({ updated_at: AT, scope: 'personal' });
    });

    it('Given another profile has the name, When a profile is renamed to it, Then it is refused; keeping its own name is no rename', () => {
      const s = given('reviewer', created('reviewer'));
      const names = new Map([['taken', 'other'], ['reviewer', 'reviewer']]);
      expect(decide(update({ name: 'Taken' }, names), s).error?.code).toBe('profile_name_taken');
      expect(decide(update({ name: 'Reviewer' }, names), s).error).toBeUndefined();
    });

    it('When a change breaks the schema, Then it is refused as invalid_input, naming what is wrong, and nothing is journaled', () => {
      const d = decide(update({ permissions: { mode: 'yolo' } }), given('reviewer', created('reviewer')));
      expect(d.events).toEqual([]);
      expect(d.error).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('permissions.mode') });
    });

    it('Given a built-in, a missing or deleted profile, or a malformed hand edit, When it is updated, Then it is refused as locked, not_found or malformed', () => {
      expect(decide(update({ description: 'x' }), emptyStream('code-reviewer')).error?.code).toBe('profile_locked');
      expect(decide(update({ description: 'x' }), emptyStream('nobody')).error?.code).toBe('not_found');
      expect(decide(update({ description: 'x' }), given('gone', created('gone'), { type: 'profile.deleted', data: { id: 'gone' } })).error?.code).toBe('not_found');
      const broken = given('broken', created('broken'), { type: 'profile.edited_on_disk', data: { id: 'broken', text: 'name: [', doc: null, error: 'invalid YAML: x', at: AT } });
      expect(decide(update({ description: 'x' }), broken).error).toEqual({ code: 'profile_malformed', message: 'profile broken is malformed: invalid YAML: x', details: { id: 'broken' } });
    });

    it('Given a hand edit journaled, When the profile is updated, Then the update builds on the edit', () => {
      const s = given('reviewer', created('reviewer'), {
        type: 'profile.edited_on_disk',
        data: { id: 'reviewer', text: '# mine\nname: Reviewer\ndescription: by hand\n', doc: null, error: null, at: AT },
      });
      expect(decide(update({ icon: 'star' }), s).events[0]).toMatchObject({ data: { doc: { description: 'by hand', icon: 'star' } } });
    });
  });

  describe('delete and set_default', () => {
    it('Given a profile, When it is deleted, Then profile.deleted, and the stream holds none; a built-in is locked, a missing one not found', () => {
      const d = decide({ type: 'delete' }, given('reviewer', created('reviewer')));
      expect(d.events).toEqual([{ type: 'profile.deleted', data: { id: 'reviewer' } }]);
      expect(given('reviewer', created('reviewer'), ...d.events).profile).toBeNull();
      expect(decide({ type: 'delete' }, emptyStream('researcher')).error?.code).toBe('profile_locked');
      expect(decide({ type: 'delete' }, emptyStream('nobody')).error?.code).toBe('not_found');
    });

    it('When a built-in or a valid profile is made the default, Then profile.default_set names the previous one; a malformed or missing one is refused', () => {
      expect(decide({ type: 'set_default', previous: 'coding-assistant' }, emptyStream('researcher')).events).toEqual([
        { type: 'profile.default_set', data: { id: 'researcher', previous: 'coding-assistant' } },
      ]);
      expect(decide({ type: 'set_default', previous: 'researcher' }, given('mine', created('mine'))).events).toHaveLength(1);
      const broken = given('broken', { type: 'profile.edited_on_disk', data: { id: 'broken', text: 'name: [', doc: null, error: 'invalid YAML', at: AT } });
      expect(decide({ type: 'set_default', previous: 'x' }, broken).error?.code).toBe('profile_malformed');
      expect(decide({ type: 'set_default', previous: 'x' }, emptyStream('nobody')).error?.code).toBe('not_found');
    });
  });

  describe('notice_edit (a file on disk)', () => {
    const notice = (text: string | null, observed_version: number, extra: Partial<Extract<ProfileCommand, { type: 'notice_edit' }>> = {}): ProfileCommand => ({
      type: 'notice_edit',
      text,
      error: null,
      at: '2026-11-26T11:00:00.000Z',
      observed_version,
      ...extra,
    });

    it('Given a profile, When its file holds other text, Then profile.edited_on_disk takes the text (not its document, which the text parses to), and it is the last update', () => {
      const s = given('reviewer', created('reviewer'));
      const d = decide(notice('name: Reviewer\n# edited\n', 1), s);
      expect(d.events).toEqual([{ type: 'profile.edited_on_disk', data: { id: 'reviewer', text: 'name: Reviewer\n# edited\n', error: null, at: '2026-11-26T11:00:00.000Z' } }]);
      expect(given('reviewer', created('reviewer'), ...d.events).profile).toMatchObject({ text: 'name: Reviewer\n# edited\n', meta: { created_at: AT, updated_at: '2026-11-26T11:00:00.000Z' } });
    });

    it('Given a hand edit journaled with its document, as edits were before, When folded, Then it folds as the same edit without one', () => {
      const text = 'name: Reviewer\ndescription: by hand\n';
      const edit = { id: 'reviewer', text, error: null, at: '2026-11-26T11:00:00.000Z' };
      const before = given('reviewer', created('reviewer'), { type: 'profile.edited_on_disk', data: { ...edit, doc: doc('Reviewer', { description: 'by hand' }) } });
      const now = given('reviewer', created('reviewer'), { type: 'profile.edited_on_disk', data: edit });
      expect(before).toEqual(now);
      expect(decide(update({ icon: 'star' }), before).events[0]).toMatchObject({ data: { doc: { description: 'by hand', icon: 'star' } } });
    });

    it('Given the journal holds what the file holds, When it is noticed, Then nothing is journaled', () => {
      const s = given('reviewer', created('reviewer'));
      expect(decide(notice(s.profile?.text ?? null, 1), s).events).toEqual([]);
    });

    it('Given the stream changed after the file was read, When the read is noticed, Then nothing is journaled (the file is read again later)', () => {
      const s = given('reviewer', created('reviewer'), { type: 'profile.updated', data: { id: 'reviewer', fields: ['icon'], at: AT, text: 'name: Reviewer\nicon: star\n' } });
      expect(decide(notice('name: Reviewer\n', 1), s).events).toEqual([]);
    });

    it('Given no profile, When a file is found with what a state file kept of it, Then the edit creates the profile with that metadata', () => {
      const meta = { created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-02T00:00:00.000Z', source: 'import' as const, locked: false, owner_pack_id: null, scope: 'personal' as const };
      const d = decide(notice('name: Kept\n', 0, { meta }), emptyStream('kept'));
      expect(d.events[0]).toMatchObject({ data: { meta } });
      expect(given('kept', ...d.events).profile?.meta).toEqual(meta);
      expect(given('new', ...decide(notice('name: New\n', 0), emptyStream('new')).events).profile?.meta).toMatchObject({ source: 'user', scope: 'shared', created_at: '2026-11-26T11:00:00.000Z' });
    });

    it("Given a file named like a built-in, When it is noticed, Then it is ignored", () => {
      expect(decide(notice('name: Impostor\n', 0), emptyStream('code-reviewer')).events).toEqual([]);
    });

    it('Given a file that cannot be read, When it is noticed twice, Then its error is journaled once', () => {
      const d = decide(notice(null, 0, { error: 'the file is over the limit of 256 KiB' }), emptyStream('big'));
      expect(d.events).toHaveLength(1);
      expect(decide(notice(null, 1, { error: 'the file is over the limit of 256 KiB' }), given('big', ...d.events)).events).toEqual([]);
    });
  });

  it('When an apply is recorded, Then profile.applied, on a built-in as on a user profile', () => {
    const result = { trigger: 'api' as const, dir: '/w', runtime: 'claude-code', ok: true, files: [], error: null };
    expect(decide({ type: 'record_apply', result }, emptyStream('researcher')).events).toEqual([{ type: 'profile.applied', data: { id: 'researcher', ...result } }]);
  });

  it('Given a stream journaled before documents were carried, When folded, Then the journal cannot say what its file holds', () => {
    expect(given('old', { type: 'profile.created', data: { id: 'old', name: 'Old', source: 'user' } }).profile).toMatchObject({ text: null, error: null, meta: { created_at: '2026-11-26T09:00:00.000Z' } });
  });

  describe('the index (stream profiles)', () => {
    it('When a directory is bound to a valid profile, Then profile.project_bound, and the binding holds; When unbound, Then it is gone', () => {
      const d = decideIndex({ type: 'bind', project_dir: '/w/app', profile_id: 'mine', target: 'valid' }, emptyIndex());
      expect(d.events).toEqual([{ type: 'profile.project_bound', data: { project_dir: '/w/app', profile_id: 'mine' } }]);
      const bound = givenIndex(...d.events);
      expect(bound.bindings).toEqual({ '/w/app': { profile_id: 'mine', seq: 10 } });
      const unbound = decideIndex({ type: 'bind', project_dir: '/w/app', profile_id: null, target: null }, bound);
      expect(givenIndex(...d.events, ...unbound.events).bindings).toEqual({});
    });

    it('When a binding names a relative directory, a missing or a malformed profile, Then it is refused', () => {
      expect(decideIndex({ type: 'bind', project_dir: 'w/app', profile_id: null, target: null }, emptyIndex()).error?.code).toBe('invalid_input');
      expect(decideIndex({ type: 'bind', project_dir: '/w', profile_id: 'nobody', target: 'missing' }, emptyIndex()).error?.code).toBe('not_found');
      expect(decideIndex({ type: 'bind', project_dir: '/w', profile_id: 'bad', target: { malformed: 'invalid YAML' } }, emptyIndex()).error).toEqual({
        code: 'profile_malformed',
        message: 'profile bad is malformed: invalid YAML',
        details: { id: 'bad' },
      });
    });

    it('When streams are registered, Then profile.registered names them; none to register journals nothing', () => {
      expect(decideIndex({ type: 'register', ids: ['a', 'b'] }, emptyIndex()).events).toEqual([{ type: 'profile.registered', data: { ids: ['a', 'b'] } }]);
      expect(decideIndex({ type: 'register', ids: [] }, emptyIndex()).events).toEqual([]);
    });
  });
});
