import { existsSync, mkdirSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProfilesService } from '../../src/profiles/profiles.service';
import { tempDir } from '../support/temp-dir';
import { startTestApp } from '../support/test-app';
import { useTestApp } from '../support/use-test-app';

const API = '/api/v1/agent-profiles';

describe('Agent Profile files on disk', () => {
  const root = tempDir('brainstem-profiles-int-');
  const dir = join(root.path, 'custom', 'profiles');
  const t = useTestApp({ BRAINSTEM_PROFILES_DIR: dir });
  afterAll(() => root.remove());

  const get = (url: string) => t.inject({ method: 'GET', url });
  const post = (url: string, payload?: object) => t.inject({ method: 'POST', url, ...(payload ? { payload } : {}) });
  const patch = (url: string, payload: object) => t.inject({ method: 'PATCH', url, payload });
  const listed = async (id: string) => (await get(API)).json().profiles.find((p: { id: string }) => p.id === id);

  it('uses BRAINSTEM_PROFILES_DIR and creates it on first use', async () => {
    // Given the directory named by the env var does not exist yet
    expect(t.config.profiles.dir).toBe(dir);
    expect(existsSync(dir)).toBe(false);
    expect((await get(API)).statusCode).toBe(200);
    // When a profile is created; Then its file is written there
    expect((await post(API, { name: 'First', version: 2 })).statusCode).toBe(201);
    expect(readdirSync(dir).filter((f) => f.endsWith('.yaml'))).toEqual(['first.yaml']);
  });

  it('picks up a hand edit of a file on the next read', async () => {
    // Given a profile written by the service
    await post(API, { name: 'Hand Edited', version: 2 });
    const file = join(dir, 'hand-edited.yaml');
    const before = (await get(`${API}/hand-edited`)).json();
    // When someone edits the file by hand
    writeFileSync(file, readFileSync(file, 'utf8').replace("description: ''", 'description: edited by hand'));
    // Whole seconds: sub-millisecond mtimes do not survive the float round trip exactly.
    const later = new Date(Math.floor(Date.parse(before.updated_at) / 1000) * 1000 + 60_000);
    utimesSync(file, later, later);
    // Then the next read shows the edit, and updated_at follows the file
    const after = (await get(`${API}/hand-edited`)).json();
    expect(after.description).toBe('edited by hand');
    expect(after.updated_at).toBe(later.toISOString());
    expect(after.created_at).toBe(before.created_at);
    expect((await listed('hand-edited')).description).toBe('edited by hand');
  });

  it('lists a hand-written file as a user profile, ignoring the metadata it sets (lint warns)', async () => {
    const file = join(dir, 'written-by-hand.yaml');
    writeFileSync(file, 'version: 2\nname: Written By Hand\nlocked: true\nsource: builtin\nowner_pack_id: p1\n');
    const written = new Date('2026-01-02T03:04:05.000Z');
    utimesSync(file, written, written);
    const p = await listed('written-by-hand');
    expect(p).toMatchObject({ name: 'Written By Hand', source: 'user', locked: false, owner_pack_id: null, error: null });
    expect(p).toMatchObject({ created_at: written.toISOString(), updated_at: written.toISOString() });
    const lint = (await get(`${API}/written-by-hand/lint`)).json();
    expect(lint.warnings.map((w: { path: string }) => w.path)).toEqual(['source', 'locked', 'owner_pack_id']);
    // And it is editable although it claims to be locked
    expect((await patch(`${API}/written-by-hand`, { description: 'ok' })).statusCode).toBe(200);
  });

  it('lists malformed files with their error without breaking the listing', async () => {
    // Given a file that is not YAML, one that breaks the schema and one over 256 KiB
    writeFileSync(join(dir, 'broken-yaml.yaml'), 'name: [unclosed\n');
    writeFileSync(join(dir, 'broken-schema.yaml'), 'name: Broken\npermissions: {mode: yolo}\n');
    writeFileSync(join(dir, 'too-big.yaml'), `name: Big\ndescription: ${'x'.repeat(300 * 1024)}\n`);
    writeFileSync(join(dir, 'member-key.yaml'), 'name: Member Key\nmodel: {options: {constructor: v}}\n');
    // When listing; Then every file is listed, the bad ones with their error
    const res = await get(API);
    expect(res.statusCode).toBe(200);
    const byId = new Map(res.json().profiles.map((p: { id: string }) => [p.id, p]));
    expect(byId.get('broken-yaml')).toMatchObject({ name: null, source: 'user', error: expect.stringContaining('invalid YAML') });
    expect(byId.get('broken-schema')).toMatchObject({ error: expect.stringContaining('permissions.mode:') });
    expect(byId.get('too-big')).toMatchObject({ error: expect.stringContaining('256 KiB') });
    expect(byId.get('member-key')).toMatchObject({ name: null, error: expect.stringContaining('model.options.constructor') });
    expect(byId.get('first')).toMatchObject({ error: null });
    // And each endpoint treats them consistently
    expect((await get(`${API}/broken-schema`)).json().error).toContain('permissions.mode');
    expect((await get(`${API}/broken-schema/lint`)).json()).toMatchObject({ valid: false, errors: [{ code: 'schema', path: '' }] });
    expect((await patch(`${API}/broken-schema`, { description: 'x' })).json()).toMatchObject({ statusCode: 409, code: 'profile_malformed' });
    expect((await get(`${API}/broken-yaml/export`)).json().code).toBe('profile_malformed');
    expect((await t.inject({ method: 'DELETE', url: `${API}/too-big` })).statusCode).toBe(204);
  });

  it('lists a hand-edited file whose MCP server key is regex syntax (c++) as malformed while every other profile keeps working', async () => {
    // Given one file where the server under "c++" is not a mapping (its error names the key), and one where it is fine
    writeFileSync(join(dir, 'cpp-broken.yaml'), 'name: Cpp Broken\ntools:\n  mcp_servers:\n    "c++": 5\n');
    writeFileSync(join(dir, 'cpp-fine.yaml'), 'name: Cpp Fine\ntools:\n  mcp_servers:\n    "c++": {type: stdio, command: "true"}\n');
    // When listing; Then the broken one is listed with its error and the fine one as a profile
    expect((await get(API)).statusCode).toBe(200);
    expect(await listed('cpp-broken')).toMatchObject({ name: null, error: expect.stringContaining('tools.mcp_servers.c++:') });
    expect(await listed('cpp-fine')).toMatchObject({ name: 'Cpp Fine', error: null });
    // And reading the broken one shows the error; copying, exporting, previewing or applying it is a 409
    expect((await get(`${API}/cpp-broken`)).json()).toMatchObject({ id: 'cpp-broken', name: null, error: expect.stringContaining('c++') });
    const project = join(root.path, 'cpp-project');
    mkdirSync(project);
    for (const res of [
      await post(`${API}/cpp-broken/duplicate`, {}),
      await get(`${API}/cpp-broken/export`),
      await get(`${API}/cpp-broken/preview?runtime=claude-code&dir=${encodeURIComponent(project)}`),
      await post(`${API}/cpp-broken/apply`, { runtime: 'claude-code', dir: project }),
    ]) {
      expect(res.json()).toMatchObject({ statusCode: 409, code: 'profile_malformed', message: expect.stringContaining('tools.mcp_servers.c++') });
    }
    // And the routes that read every file (copies check names against all of them) still work
    expect((await post(`${API}/cpp-fine/duplicate`, {})).statusCode).toBe(201);
    expect((await post(API, { name: 'After Cpp' })).statusCode).toBe(201);
    expect((await post(`${API}/import`, { yaml: 'name: Imported Cpp\ntools:\n  mcp_servers:\n    "c++": 5\n' })).json()).toMatchObject({
      statusCode: 400,
      message: expect.stringContaining('tools.mcp_servers.c++:'),
    });
  });

  it('ignores files whose names are not ids and files shadowing a built-in', async () => {
    writeFileSync(join(dir, 'Not An Id.yaml'), 'name: Ignored\n');
    writeFileSync(join(dir, 'code-reviewer.yaml'), 'name: Impostor\n');
    const ids = (await get(API)).json().profiles.map((p: { id: string }) => p.id);
    expect(ids.filter((id: string) => id === 'code-reviewer')).toHaveLength(1);
    expect((await get(`${API}/code-reviewer`)).json()).toMatchObject({ name: 'Code Reviewer', source: 'builtin' });
  });

  it('loses no update when PATCHes to one profile race', async () => {
    // Given one profile; When 25 PATCHes each add their own MCP server at the same time
    await post(API, { name: 'Contended', version: 2 });
    const results = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        patch(`${API}/contended`, { tools: { mcp_servers: { [`s${i}`]: { type: 'stdio', command: `server-${i}` } } } }),
      ),
    );
    // Then all succeed and the file holds every one of them
    expect(results.map((r) => r.statusCode)).toEqual(Array(25).fill(200));
    const servers = (await get(`${API}/contended`)).json().tools.mcp_servers;
    expect(Object.keys(servers).sort()).toEqual(Array.from({ length: 25 }, (_, i) => `s${i}`).sort());
  });

  it('resolves the profile of a new session: named, else nearest bound directory, else the default', async () => {
    await post(API, { name: 'Outer' });
    await post(API, { name: 'Inner' });
    await post(`${API}/project-binding`, { project_dir: '/repo', profile_id: 'outer' });
    await post(`${API}/project-binding`, { project_dir: '/repo/packages/web', profile_id: 'inner' });
    const profiles = t.app.get(ProfilesService);
    expect(await profiles.resolveForSession({ cwd: '/repo/packages/web/src' })).toBe('inner');
    expect(await profiles.resolveForSession({ cwd: '/repo/packages/api' })).toBe('outer');
    expect(await profiles.resolveForSession({ cwd: '/repository' })).toBe('coding-assistant');
    expect(await profiles.resolveForSession({ cwd: '/repo', profile_id: 'researcher' })).toBe('researcher');
    expect(await profiles.resolveForSession({})).toBe('coding-assistant');
  });

  it('keeps default, bindings and metadata across a restart on the same directory', async () => {
    await post(`${API}/outer/set-default`);
    const before = (await get(`${API}/outer`)).json();
    const again = await startTestApp({ BRAINSTEM_PROFILES_DIR: dir });
    try {
      const list = (await again.inject({ method: 'GET', url: API })).json();
      expect(list.default_profile_id).toBe('outer');
      expect(list.profiles.find((p: { id: string }) => p.id === 'outer')).toEqual(before);
      expect((await again.inject({ method: 'GET', url: `${API}/project-binding` })).json().bindings).toHaveLength(2);
    } finally {
      await again.close();
    }
  });

  it('leaves no temp files behind', () => {
    expect(readdirSync(dir).filter((f) => f.startsWith('.') && f !== '.brainstem-profiles.json')).toEqual([]);
  });
});
