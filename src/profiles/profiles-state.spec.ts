import { ProfileHistoryEvent, emptyProfilesState, parseProfilesState, rebuildProfilesState } from './profiles-state';

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
});
