import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';

const API = '/api/v1/agent-profiles';

describe('the profiles state file (default, bindings, metadata) when it is damaged', () => {
  let root: ReturnType<typeof tempDir>;
  let env: Record<string, string>;
  let t: TestApp | null = null;

  beforeEach(() => {
    root = tempDir('brainstem-state-');
    env = { BRAINSTEM_JOURNAL_DIR: join(root.path, 'journal'), BRAINSTEM_PROFILES_DIR: join(root.path, 'profiles') };
  });
  afterEach(async () => {
    await t?.close();
    t = null;
    root.remove();
  });

  const restart = async () => {
    await t?.close();
    t = await startTestApp(env);
    return t;
  };

  it.each([
    ['truncated JSON', '{"default_profile_id": "rev'],
    ['the wrong shape', '{"default_profile_id": 7, "project_bindings": [], "profiles": {}}'],
    ['a default that is a path, not an id', '{"default_profile_id": "../evil", "project_bindings": {}, "profiles": {}}'],
  ])('given %s, listing still answers, and default, bindings and metadata are rebuilt from the journal', async (_, damage) => {
    let app = await restart();
    expect((await app.inject({ method: 'POST', url: API, payload: { name: 'Reviewer Plus' } })).statusCode).toBe(201);
    expect((await app.inject({ method: 'POST', url: `${API}/import`, headers: { 'content-type': 'application/yaml' }, payload: 'name: Imported One\n' })).statusCode).toBe(201);
    await app.inject({ method: 'POST', url: API, payload: { name: 'Gone Soon' } });
    await app.inject({ method: 'POST', url: `${API}/project-binding`, payload: { project_dir: '/work/gone', profile_id: 'gone-soon' } });
    await app.inject({ method: 'DELETE', url: `${API}/gone-soon` });
    await app.inject({ method: 'POST', url: `${API}/reviewer-plus/set-default` });
    await app.inject({ method: 'POST', url: `${API}/project-binding`, payload: { project_dir: '/work/app', profile_id: 'imported-one' } });
    const before = (await app.inject({ method: 'GET', url: API })).json();
    const stateFile = join(env.BRAINSTEM_PROFILES_DIR, '.brainstem-profiles.json');

    writeFileSync(stateFile, damage);
    app = await restart();

    const list = await app.inject({ method: 'GET', url: API });
    expect(list.statusCode).toBe(200);
    expect(list.json().default_profile_id).toBe('reviewer-plus');
    const byId = (l: { profiles: Array<{ id: string; source: string; created_at: string }> }, id: string) => l.profiles.find((p) => p.id === id);
    expect(byId(list.json(), 'imported-one')).toMatchObject({ source: 'import', created_at: byId(before, 'imported-one')?.created_at });
    expect(byId(list.json(), 'reviewer-plus')).toMatchObject({ source: 'user', created_at: byId(before, 'reviewer-plus')?.created_at });
    expect((await app.inject({ method: 'GET', url: `${API}/project-binding` })).json()).toEqual({ bindings: [{ project_dir: '/work/app', profile_id: 'imported-one' }] });
    // The damaged file is kept for inspection, and a sound one written in its place.
    const aside = readdirSync(env.BRAINSTEM_PROFILES_DIR).filter((f) => f.startsWith('.brainstem-profiles.json.damaged-'));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(env.BRAINSTEM_PROFILES_DIR, aside[0]), 'utf8')).toBe(damage);
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).default_profile_id).toBe('reviewer-plus');
  });
});
