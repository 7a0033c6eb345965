import { ProfileCatalog } from './profile-catalog';

/** Events as the journal stores them: each on its stream (`profiles` for bindings), with its seq and stream version. */
function journal(...events: Array<{ type: string; at: string; data: Record<string, unknown> }>) {
  const versions = new Map<string, number>();
  return events.map((e, i) => {
    const stream = e.type === 'profile.project_bound' || e.type === 'profile.registered' ? 'profiles' : `profile-${e.data.id as string}`;
    const version = (versions.get(stream) ?? 0) + 1;
    versions.set(stream, version);
    return { ...e, stream, seq: i + 1, version };
  });
}

function folded(events: ReturnType<typeof journal>): ProfileCatalog {
  const catalog = new ProfileCatalog();
  for (const e of events) catalog.apply(e);
  return catalog;
}

const ev = (type: string, at: string, data: Record<string, unknown>) => ({ type, at, data });

describe('the profile catalogue, folded from the journal', () => {
  it('Given no history, Then the state file holds nothing', () => {
    expect(folded(journal()).stateFile(() => undefined)).toEqual({ format: 2, default_profile_id: null, project_bindings: {}, profiles: {} });
  });

  it('Given the journaled changes, Then metadata, default and bindings are what the service had written', () => {
    const s = folded(
      journal(
        ev('profile.created', 'c1', { id: 'a', name: 'A', source: 'user', at: 's1' }),
        ev('profile.imported', 'c2', { id: 'b', name: 'B', warnings: [] }),
        ev('profile.duplicated', 'c3', { id: 'a-copy', from: 'a', name: 'A (copy)', at: 's3' }),
        ev('profile.updated', 'c4', { id: 'a', fields: ['model'], at: 's4' }),
        ev('profile.created', 'c4a', { id: 'p', name: 'P', source: 'user', scope: 'personal', at: 's4a' }),
        ev('profile.duplicated', 'c4b', { id: 'p-copy', from: 'p', name: 'P (copy)', scope: 'personal', at: 's4b' }),
        ev('profile.updated', 'c4c', { id: 'p-copy', fields: ['scope'], scope: 'shared', at: 's4c' }),
        ev('profile.updated', 'c4d', { id: 'b', fields: ['scope'], scope: 'personal', at: 's4d' }),
        ev('profile.default_set', 'c5', { id: 'a-copy', previous: 'coding-assistant' }),
        ev('profile.project_bound', 'c6', { project_dir: '/w/one', profile_id: 'a-copy' }),
        ev('profile.project_bound', 'c7', { project_dir: '/w/two', profile_id: 'b' }),
        ev('profile.project_bound', 'c8', { project_dir: '/w/two', profile_id: null }),
        ev('profile.deleted', 'c9', { id: 'a-copy' }),
        ev('profile.applied', 'c10', { id: 'a' }),
      ),
    ).stateFile(() => undefined);
    expect(s).toEqual({
      format: 2,
      default_profile_id: null,
      project_bindings: {},
      profiles: {
        a: { created_at: 's1', updated_at: 's4', source: 'user', locked: false, owner_pack_id: null, scope: 'shared', file_mtime_ms: 0 },
        b: { created_at: 'c2', updated_at: 's4d', source: 'import', locked: false, owner_pack_id: null, scope: 'personal', file_mtime_ms: 0 },
        p: { created_at: 's4a', updated_at: 's4a', source: 'user', locked: false, owner_pack_id: null, scope: 'personal', file_mtime_ms: 0 },
        'p-copy': { created_at: 's4b', updated_at: 's4c', source: 'user', locked: false, owner_pack_id: null, scope: 'shared', file_mtime_ms: 0 },
      },
    });
  });

  it('Given a default set to a built-in and a binding, Then both survive', () => {
    const c = folded(
      journal(
        ev('profile.default_set', 'c1', { id: 'code-reviewer', previous: 'coding-assistant' }),
        ev('profile.project_bound', 'c2', { project_dir: '/w/one', profile_id: 'researcher' }),
      ),
    );
    expect(c.defaultId()).toBe('code-reviewer');
    expect(c.bindings()).toEqual({ '/w/one': 'researcher' });
  });

  it('Given the default set to a profile deleted after, and a binding to it, Then neither comes back with a profile of the same id', () => {
    const c = folded(
      journal(
        ev('profile.default_set', 'c1', { id: 'researcher', previous: 'coding-assistant' }),
        ev('profile.created', 'c2', { id: 'x', name: 'X', source: 'user', at: 's2' }),
        ev('profile.default_set', 'c3', { id: 'x', previous: 'researcher' }),
        ev('profile.project_bound', 'c4', { project_dir: '/w/x', profile_id: 'x' }),
        ev('profile.deleted', 'c5', { id: 'x' }),
        ev('profile.created', 'c6', { id: 'x', name: 'X', source: 'user', at: 's6' }),
      ),
    );
    expect(c.defaultId()).toBeNull();
    expect(c.bindings()).toEqual({});
    expect(c.record('x')?.meta.created_at).toBe('s6');
  });

  it('Given hand edits, Then the edit is the last update, and a file the journal did not know becomes a user profile', () => {
    const c = folded(
      journal(
        ev('profile.created', 'c1', { id: 'a', name: 'A', source: 'user', at: 's1' }),
        ev('profile.edited_on_disk', 'c2', { id: 'a', text: 'name: A2\n', doc: null, error: null, at: 'm2' }),
        ev('profile.edited_on_disk', 'c3', { id: 'h', text: 'name: [', doc: null, error: 'invalid YAML', at: 'm3' }),
      ),
    );
    expect(c.record('a')?.meta).toMatchObject({ created_at: 's1', updated_at: 'm2' });
    expect(c.record('h')?.meta).toMatchObject({ created_at: 'm3', updated_at: 'm3', source: 'user', scope: 'shared' });
  });

  it('Given changes carrying documents and hand edits, Then each live file is the last text, deleted ones absent', () => {
    const c = folded(
      journal(
        ev('profile.created', 'c', { id: 'a', doc: { name: 'A' }, text: 'name: A\n' }),
        ev('profile.updated', 'c', { id: 'a', doc: { name: 'A2' }, text: 'name: A2\n' }),
        ev('profile.imported', 'c', { id: 'b', doc: { name: 'B' }, text: 'name: B\n' }),
        ev('profile.edited_on_disk', 'c', { id: 'b', text: '# mine\nname: B\n', doc: { name: 'B' }, error: null }),
        ev('profile.duplicated', 'c', { id: 'c', doc: { name: 'C' }, text: 'name: C\n' }),
        ev('profile.deleted', 'c', { id: 'c' }),
        ev('profile.edited_on_disk', 'c', { id: 'd', text: null, doc: null, error: 'the file is over the limit of 256 KiB' }),
        ev('profile.default_set', 'c', { id: 'a', previous: 'x' }),
      ),
    );
    const files = Object.fromEntries([...c.records()].map(([id, r]) => [id, { text: r.text, error: r.error }]));
    expect(files).toEqual({
      a: { text: 'name: A2\n', error: null },
      b: { text: '# mine\nname: B\n', error: null },
      d: { text: null, error: 'the file is over the limit of 256 KiB' },
    });
  });

  it('Given a change journaled before documents were carried, Then the journal cannot say what its file holds', () => {
    expect(folded(journal(ev('profile.created', 'c', { id: 'a', name: 'A' }))).record('a')).toMatchObject({ text: null, error: null });
  });

  it('Given an event folded already (a follower hands on what an append applied), Then it is not folded twice', () => {
    const events = journal(ev('profile.created', 'c1', { id: 'a', at: 's1' }), ev('profile.updated', 'c2', { id: 'a', at: 's2', text: 't' }));
    const c = folded(events);
    c.apply(events[1]);
    c.apply({ ...events[0], seq: 9 });
    expect(c.stream('a')).toMatchObject({ version: 2, profile: { text: 't', meta: { updated_at: 's2' } } });
  });

  it('Given profile streams journaled before the index, Then they are the unregistered ones; registered ones and built-ins are not', () => {
    const c = folded(
      journal(
        ev('profile.created', 'c1', { id: 'old', at: 's1' }),
        ev('profile.created', 'c2', { id: 'new', at: 's2' }),
        ev('profile.registered', 'c2', { ids: ['new'] }),
        ev('profile.default_set', 'c3', { id: 'researcher', previous: 'coding-assistant' }),
      ),
    );
    expect(c.unregistered()).toEqual(['old']);
    expect(c.isRegistered('new')).toBe(true);
  });
});
