import { ProfileHistoryEvent, emptyProfilesState, parseProfilesState, rebuildProfileFiles, rebuildProfilesState } from './profiles-state';

const meta = { created_at: 't0', updated_at: 't1', source: 'user', locked: false, owner_pack_id: null, scope: 'personal', file_mtime_ms: 5 };

describe('parseProfilesState', () => {
  it('given a sound file, then it answers the state, with missing sections defaulted', () => {
    const r = parseProfilesState(JSON.stringify({ default_profile_id: 'a', profiles: { a: meta } }));
    expect(r).toEqual({ ok: true, state: { default_profile_id: 'a', project_bindings: {}, profiles: { a: meta } } });
  });

  it('given a file written before profiles had a scope, then its profiles are shared, as they were', () => {
    const { scope: _scope, ...old } = meta;
    const r = parseProfilesState(JSON.stringify({ profiles: { a: old } }));
    expect(r.ok && r.state.profiles.a).toEqual({ ...old, scope: 'shared' });
  });

  it.each([
    ['{"default_profile_id":', 'not JSON'],
    ['[]', 'not a JSON object'],
    ['{"default_profile_id": 3}', 'default_profile_id'],
    ['{"project_bindings": {"/w": 1}}', 'project_bindings'],
    ['{"profiles": []}', 'profiles: must be an object'],
    [JSON.stringify({ profiles: { a: { ...meta, source: 'elsewhere' } } }), 'profiles.a'],
    [JSON.stringify({ profiles: { a: { ...meta, file_mtime_ms: '5' } } }), 'profiles.a'],
    [JSON.stringify({ profiles: { a: { ...meta, scope: 'public' } } }), 'profiles.a'],
    ['{"default_profile_id": "../evil"}', 'default_profile_id'],
    ['{"project_bindings": {"/w": "A/b"}}', 'project_bindings'],
    [JSON.stringify({ profiles: { '../x': meta } }), 'profiles.../x'],
  ])('given %s, then it is refused naming %s', (text, named) => {
    const r = parseProfilesState(text);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain(named);
  });
});

describe('rebuildProfilesState', () => {
  const ev = (type: string, at: string, data: object): ProfileHistoryEvent => ({ type, at, data });

  it('given no history, then the state is empty', () => {
    expect(rebuildProfilesState([])).toEqual(emptyProfilesState());
  });

  it('given the journaled changes, then metadata, default and bindings are what the service had written', () => {
    const s = rebuildProfilesState([
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
    ]);
    expect(s).toEqual({
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

  it('given a default set to a built-in and a binding, then both survive', () => {
    const s = rebuildProfilesState([
      ev('profile.default_set', 'c1', { id: 'code-reviewer', previous: 'coding-assistant' }),
      ev('profile.project_bound', 'c2', { project_dir: '/w/one', profile_id: 'researcher' }),
    ]);
    expect(s.default_profile_id).toBe('code-reviewer');
    expect(s.project_bindings).toEqual({ '/w/one': 'researcher' });
  });

  it('given hand edits, then the edit is the last update, and a file the journal did not know becomes a user profile', () => {
    const s = rebuildProfilesState([
      ev('profile.created', 'c1', { id: 'a', name: 'A', source: 'user', at: 's1' }),
      ev('profile.edited_on_disk', 'c2', { id: 'a', text: 'name: A2\n', doc: null, error: null, at: 'm2' }),
      ev('profile.edited_on_disk', 'c3', { id: 'h', text: 'name: [', doc: null, error: 'invalid YAML', at: 'm3' }),
    ]);
    expect(s.profiles.a).toMatchObject({ created_at: 's1', updated_at: 'm2' });
    expect(s.profiles.h).toMatchObject({ created_at: 'm3', updated_at: 'm3', source: 'user', scope: 'shared' });
  });
});

describe('rebuildProfileFiles', () => {
  const ev = (type: string, data: object): ProfileHistoryEvent => ({ type, at: 'c', data });

  it('given changes carrying documents and hand edits, then each live file is the last one, deleted ones absent', () => {
    const files = rebuildProfileFiles(
      [
        ev('profile.created', { id: 'a', doc: { name: 'A' }, text: 'name: A\n' }),
        ev('profile.updated', { id: 'a', doc: { name: 'A2' }, text: 'name: A2\n' }),
        ev('profile.imported', { id: 'b', doc: { name: 'B' }, text: 'name: B\n' }),
        ev('profile.edited_on_disk', { id: 'b', text: '# mine\nname: B\n', doc: { name: 'B' }, error: null }),
        ev('profile.duplicated', { id: 'c', doc: { name: 'C' }, text: 'name: C\n' }),
        ev('profile.deleted', { id: 'c' }),
        ev('profile.edited_on_disk', { id: 'd', text: null, doc: null, error: 'the file is over the limit of 256 KiB' }),
        ev('profile.default_set', { id: 'a', previous: 'x' }),
      ],
    );
    expect(Object.fromEntries(files)).toEqual({
      a: { text: 'name: A2\n', error: null },
      b: { text: '# mine\nname: B\n', error: null },
      d: { text: null, error: 'the file is over the limit of 256 KiB' },
    });
  });

  it('given a change journaled before documents were carried, then the journal cannot say what its file holds', () => {
    expect(rebuildProfileFiles([ev('profile.created', { id: 'a', name: 'A' })]).get('a')).toEqual({ text: null, error: null });
  });
});
