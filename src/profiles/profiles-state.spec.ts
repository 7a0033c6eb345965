import { parseProfilesState } from './profiles-state';

const meta = { created_at: 't0', updated_at: 't1', source: 'user', locked: false, owner_pack_id: null, scope: 'personal', file_mtime_ms: 5 };

describe('parseProfilesState', () => {
  it('given a sound file, then it answers the state, with missing sections defaulted', () => {
    const r = parseProfilesState(JSON.stringify({ default_profile_id: 'a', profiles: { a: meta } }));
    expect(r).toEqual({ ok: true, state: { default_profile_id: 'a', project_bindings: {}, profiles: { a: meta } } });
  });

  it('given a file written since the journal registers profile streams, then it says so (format 2)', () => {
    const r = parseProfilesState(JSON.stringify({ format: 2, default_profile_id: null, project_bindings: {}, profiles: {} }));
    expect(r.ok && r.state.format).toBe(2);
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
    ['{"format": 3}', 'format'],
  ])('given %s, then it is refused naming %s', (text, named) => {
    const r = parseProfilesState(text);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain(named);
  });
});
