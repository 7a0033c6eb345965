import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { useTestApp } from '../support/use-test-app';

const API = '/api/v1/agent-profiles';
const BUILTIN_IDS = [
  'coding-assistant',
  'code-reviewer',
  'researcher',
  'security-auditor',
  'frontend-developer',
  'documentation-writer',
  'devops-engineer',
  'pair-programmer',
  'main-brain',
];

describe('Agent Profile REST', () => {
  let dir: string;

  const t = useTestApp();
  beforeAll(() => {
    dir = t.config.profiles.dir;
  });

  const get = (url: string) => t.inject({ method: 'GET', url });
  const post = (url: string, payload?: object) => t.inject({ method: 'POST', url, ...(payload ? { payload } : {}) });
  const patch = (url: string, payload: object) => t.inject({ method: 'PATCH', url, payload });
  const del = (url: string) => t.inject({ method: 'DELETE', url });
  const yamlPost = (url: string, text: string) => t.inject({ method: 'POST', url, headers: { 'content-type': 'application/yaml' }, payload: text });
  const filesInDir = () => (existsSync(dir) ? readdirSync(dir).sort() : []);

  describe('listing', () => {
    it('lists the 9 locked built-ins (the 8 templates and the main-brain profile) with the default before anything is stored', async () => {
      // Given an empty profiles directory; When listing
      const res = await get(API);
      // Then every built-in is there, locked, and coding-assistant is the default
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.default_profile_id).toBe('coding-assistant');
      expect(body.profiles.map((p: { id: string }) => p.id)).toEqual(BUILTIN_IDS);
      for (const p of body.profiles) expect(p).toMatchObject({ source: 'builtin', locked: true, target_runtime: 'auto', error: null });
      expect(body.profiles[0].is_default).toBe(true);
      expect(body.profiles[0]).not.toHaveProperty('runtime');
    });

    it('gives the code reviewer its key defaults', async () => {
      const res = await get(`${API}/code-reviewer`);
      expect(res.statusCode).toBe(200);
      const p = res.json();
      expect(p.permissions.mode).toBe('plan');
      expect(p.tools.builtin).toEqual(['Read', 'Glob', 'Grep']);
      expect(p.permissions.deny).toEqual(expect.arrayContaining(['Bash', 'Write', 'Edit']));
      expect(p.instructions.system_prompt.length).toBeGreaterThan(500);
    });

    it('answers 404 for an unknown id and 400 for ids that are not slugs', async () => {
      expect((await get(`${API}/nope`)).json()).toMatchObject({ statusCode: 404, code: 'not_found' });
      for (const bad of ['a%2Fb', '..%2F..%2Fetc', 'a%00b', 'UPPER', '-lead']) {
        const res = await get(`${API}/${bad}`);
        expect([bad, res.statusCode]).toEqual([bad, 400]);
        expect(res.json().message).toMatch(/^id: /);
      }
      // A bare `..` segment (plain or encoded) is resolved by the router before it can become an id: no such route.
      for (const dots of ['..', '%2E%2E']) expect((await del(`${API}/${dots}`)).json().code).toBe('not_found');
    });
  });

  describe('create, update, delete', () => {
    it('creates a profile from a name, applies the defaults and writes <id>.yaml', async () => {
      // When creating with only a name and a runtime
      const res = await post(API, { name: 'Go Backend', target_runtime: 'codex' });
      // Then it is 201 with defaults applied and metadata set by the service
      expect(res.statusCode).toBe(201);
      const p = res.json();
      expect(p).toMatchObject({
        id: 'go-backend',
        name: 'Go Backend',
        version: 1,
        description: '',
        icon: 'bot',
        target_runtime: 'codex',
        permissions: { mode: 'acceptEdits', allow: [], deny: [], ask: [] },
        skills: [],
        hooks: {},
        source: 'user',
        locked: false,
        owner_pack_id: null,
        is_default: false,
      });
      expect(Date.parse(p.created_at)).not.toBeNaN();
      // And the file on disk uses the YAML name `runtime` and no metadata
      const onDisk = load(readFileSync(join(dir, 'go-backend.yaml'), 'utf8')) as Record<string, unknown>;
      expect(onDisk).toMatchObject({ name: 'Go Backend', runtime: 'codex' });
      expect(onDisk).not.toHaveProperty('created_at');
    });

    it('never gives a profile an id that a static route would shadow', async () => {
      expect((await post(API, { name: 'Project Binding' })).json().id).toBe('project-binding-2');
      expect((await post(API, { name: 'Import' })).json().id).toBe('import-2');
      expect((await get(`${API}/import-2`)).json().name).toBe('Import');
    });

    it('refuses a second profile with the same name with 409 profile_name_taken', async () => {
      const res = await post(API, { name: 'go backend' });
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('profile_name_taken');
      const builtinName = await post(API, { name: 'Code Reviewer' });
      expect(builtinName.json().code).toBe('profile_name_taken');
    });

    it('patches deep-merged objects and replaced arrays', async () => {
      // Given a profile with permissions and an MCP server
      await post(API, {
        name: 'Merge Me',
        permissions: { mode: 'plan', deny: ['Bash'] },
        tools: { builtin: ['Read', 'Grep'], mcp_servers: { gh: { type: 'stdio', command: 'gh-mcp', env: { T: '${GH_TOKEN}' } } } },
      });
      // When patching one nested field and one array
      const res = await patch(`${API}/merge-me`, { permissions: { allow: ['Read'] }, tools: { builtin: ['Edit'] }, description: 'merged' });
      // Then untouched nested fields survive and the array is replaced
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        description: 'merged',
        permissions: { mode: 'plan', allow: ['Read'], deny: ['Bash'] },
        tools: { builtin: ['Edit'], mcp_servers: { gh: { type: 'stdio', command: 'gh-mcp', env: { T: '${GH_TOKEN}' } } } },
      });
      expect((await get(`${API}/merge-me`)).json().description).toBe('merged');
    });

    it('removes what a PATCH sets to null (JSON merge patch): one MCP server and one hook event go, the rest stays', async () => {
      // Given a profile with two MCP servers and hooks on two events
      const hook = { type: 'command', command: 'echo hi' };
      await post(API, {
        name: 'Remove Me',
        tools: { mcp_servers: { gh: { type: 'stdio', command: 'gh-mcp' }, docs: { type: 'http', url: 'https://docs.example/mcp' } } },
        hooks: { SessionStart: [hook], PreToolUse: [hook] },
        model: { model: 'opus', provider: 'anthropic' },
      });
      // When one server, one hook event and the provider are patched to null
      const res = await patch(`${API}/remove-me`, { tools: { mcp_servers: { gh: null } }, hooks: { PreToolUse: null }, model: { provider: null } });
      // Then they are gone from the profile read back, and the others are kept
      expect(res.statusCode).toBe(200);
      const back = (await get(`${API}/remove-me`)).json();
      expect(Object.keys(back.tools.mcp_servers)).toEqual(['docs']);
      expect(Object.keys(back.hooks)).toEqual(['SessionStart']);
      expect(back.model).toEqual({ model: 'opus' });
      expect(readFileSync(join(dir, 'remove-me.yaml'), 'utf8')).not.toContain('gh-mcp');
    });

    it('renames through PATCH unless the name is taken', async () => {
      await post(API, { name: 'Rename Me' });
      expect((await patch(`${API}/rename-me`, { name: 'Go Backend' })).json().code).toBe('profile_name_taken');
      const ok = await patch(`${API}/rename-me`, { name: 'Renamed' });
      expect(ok.json()).toMatchObject({ id: 'rename-me', name: 'Renamed' });
    });

    it('answers 409 profile_locked for updating or deleting a built-in', async () => {
      const upd = await patch(`${API}/code-reviewer`, { description: 'mine now' });
      expect(upd.statusCode).toBe(409);
      expect(upd.json().code).toBe('profile_locked');
      const rm = await del(`${API}/researcher`);
      expect(rm.statusCode).toBe(409);
      expect(rm.json().code).toBe('profile_locked');
    });

    it('deletes a user profile with 204, then 404', async () => {
      await post(API, { name: 'Short Lived' });
      expect((await del(`${API}/short-lived`)).statusCode).toBe(204);
      expect(existsSync(join(dir, 'short-lived.yaml'))).toBe(false);
      expect((await del(`${API}/short-lived`)).statusCode).toBe(404);
      expect((await patch(`${API}/short-lived`, { description: 'x' })).statusCode).toBe(404);
    });

    it('journals every change on profile-<id>', async () => {
      await post(API, { name: 'Audited' });
      await patch(`${API}/audited`, { description: 'changed' });
      const written = readFileSync(join(dir, 'audited.yaml'), 'utf8');
      await del(`${API}/audited`);
      const events = await t.app.get<Journal>(JOURNAL).readStream('profile-audited');
      expect(events.map((e) => e.type)).toEqual(['profile.created', 'profile.updated', 'profile.deleted']);
      // The update carries the whole document, and the file's text written from it.
      expect(events[1].data).toEqual({
        id: 'audited',
        fields: ['description'],
        at: expect.any(String),
        doc: expect.objectContaining({ name: 'Audited', description: 'changed' }),
        text: written,
      });
    });
  });

  describe('bad input', () => {
    it.each([
      ['a wrong type', { name: 'X1', version: 'two' }, 'version'],
      ['an unknown top-level field', { name: 'X2', colour: 'red' }, 'colour'],
      ['an unknown nested field', { name: 'X3', permissions: { mode: 'plan', sudo: true } }, 'permissions.sudo'],
      ['an unknown permission mode', { name: 'X4', permissions: { mode: 'yolo' } }, 'permissions.mode'],
      ['a hook event other than the three', { name: 'X5', hooks: { Stop: [{ type: 'command', command: 'x' }] } }, 'hooks.Stop'],
      ['a bad MCP server type', { name: 'X6', tools: { mcp_servers: { s: { type: 'sse', url: 'http://x' } } } }, 'tools.mcp_servers.s.type'],
      ['the YAML name of the runtime', { name: 'X7', runtime: 'codex' }, 'runtime'],
      ['service metadata', { name: 'X8', locked: false }, 'locked'],
      ['a missing name', { description: 'nameless' }, 'name'],
      ['a NUL in default_cwd', { name: 'X9', default_cwd: '/tmp/\u0000x' }, 'default_cwd'],
      ['an unknown field named with regex syntax', { name: 'X10', '(': 1 }, '('],
      ['an MCP server named with regex syntax that is not a mapping', { name: 'X11', tools: { mcp_servers: { 'c++': 5 } } }, 'tools.mcp_servers.c++'],
    ])('rejects %s with 400 naming the path', async (_what, body, path) => {
      const before = filesInDir();
      const res = await post(API, body);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_input');
      expect(res.json().message).toContain(`${path}:`);
      expect(filesInDir()).toEqual(before);
    });

    it('rejects a PATCH that would make the profile invalid and leaves the file as it was', async () => {
      await post(API, { name: 'Stable' });
      const before = readFileSync(join(dir, 'stable.yaml'), 'utf8');
      const res = await patch(`${API}/stable`, { hooks: { PreToolUse: [{ type: 'webhook' }] } });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain('hooks.PreToolUse[0].type:');
      expect(readFileSync(join(dir, 'stable.yaml'), 'utf8')).toBe(before);
    });
  });

  describe('duplicate and default', () => {
    it('duplicates a locked built-in into an unlocked user copy named <id>-copy, then -copy-2', async () => {
      const first = await post(`${API}/code-reviewer/duplicate`);
      expect(first.statusCode).toBe(201);
      expect(first.json()).toMatchObject({ id: 'code-reviewer-copy', name: 'Code Reviewer (copy)', source: 'user', locked: false });
      expect(first.json().permissions.mode).toBe('plan');
      const second = await post(`${API}/code-reviewer/duplicate`, { name: 'Strict Reviewer' });
      expect(second.json()).toMatchObject({ id: 'code-reviewer-copy-2', name: 'Strict Reviewer' });
      const third = await post(`${API}/code-reviewer/duplicate`, {});
      expect(third.json()).toMatchObject({ id: 'code-reviewer-copy-3', name: 'Code Reviewer (copy) (2)' });
      const fourth = await post(`${API}/code-reviewer/duplicate`, { name: null });
      expect(fourth.json()).toMatchObject({ id: 'code-reviewer-copy-4', name: 'Code Reviewer (copy) (3)' });
      // And the copy is editable
      expect((await patch(`${API}/code-reviewer-copy`, { description: 'tuned' })).statusCode).toBe(200);
    });

    it('refuses a duplicate whose name is taken, and an unknown source', async () => {
      expect((await post(`${API}/researcher/duplicate`, { name: 'Strict Reviewer' })).json().code).toBe('profile_name_taken');
      expect((await post(`${API}/missing/duplicate`)).statusCode).toBe(404);
    });

    it('sets the default, persists it in the profiles dir and falls back when it is deleted', async () => {
      await post(API, { name: 'My Default' });
      const res = await post(`${API}/my-default/set-default`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ id: 'my-default', is_default: true });
      const list = (await get(API)).json();
      expect(list.default_profile_id).toBe('my-default');
      expect(list.profiles.filter((p: { is_default: boolean }) => p.is_default).map((p: { id: string }) => p.id)).toEqual(['my-default']);
      expect(JSON.parse(readFileSync(join(dir, '.brainstem-profiles.json'), 'utf8')).default_profile_id).toBe('my-default');
      await del(`${API}/my-default`);
      expect((await get(API)).json().default_profile_id).toBe('coding-assistant');
      expect((await post(`${API}/missing/set-default`)).statusCode).toBe(404);
    });
  });

  describe('lint', () => {
    it('lints an unsaved draft: schema problems and lint findings come back as findings, and nothing is written or journaled', async () => {
      // Given the journal's head and the profile files before
      const journal = t.app.get<Journal>(JOURNAL);
      const headBefore = journal.head().seq;
      expect(typeof headBefore).toBe('number');
      const filesBefore = filesInDir();
      // When linting a draft with an empty name and a permission rule that is not a string
      const broken = await post(`${API}/lint`, { document: { name: '', target_runtime: 'claude-code', permissions: { allow: [42] }, tools: { builtin: ['Nope'] } } });
      // Then 200 with schema findings on those paths
      expect(broken.statusCode).toBe(200);
      const body = broken.json();
      expect(body.valid).toBe(false);
      expect(new Set(body.errors.map((e: { path: string; code: string }) => `${e.code} ${e.path}`))).toEqual(new Set(['schema name', 'schema permissions.allow']));
      // When linting a valid draft in API names that only the linter objects to: Then its finding, in the scope asked
      const bypass = { name: 'Draft', version: 2, target_runtime: 'codex', permissions: { mode: 'bypassPermissions' } };
      expect((await post(`${API}/lint`, { document: bypass })).json().errors.map((e: { code: string }) => e.code)).toEqual(['bypass_permissions_shared']);
      expect((await post(`${API}/lint`, { document: bypass, scope: 'personal' })).json()).toEqual({ valid: true, errors: [], warnings: [] });
      // And a body that is not a draft is a 400 naming the field
      const bad = await post(`${API}/lint`, { document: 'name: x', scope: 'everyone' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toMatch(/document.*scope|scope.*document/s);
      // And nothing was written or journaled
      expect(filesInDir()).toEqual(filesBefore);
      expect(journal.head().seq).toBe(headBefore);
      expect((await get(`${API}/draft`)).statusCode).toBe(404);
    });

    it('reports the result shape and lints a profile as shared unless it is personal, or scope=personal asks', async () => {
      await post(API, { name: 'Bypass', version: 2, permissions: { mode: 'bypassPermissions' } });
      const shared = (await get(`${API}/bypass/lint`)).json();
      expect(shared).toEqual({
        valid: false,
        errors: [
          {
            path: 'permissions.mode',
            code: 'bypass_permissions_shared',
            message: "bypassPermissions is not allowed in a shared profile (set the profile's scope to personal to use it yourself)",
          },
        ],
        warnings: [],
      });
      expect((await get(`${API}/bypass/lint?scope=personal`)).json()).toEqual({ valid: true, errors: [], warnings: [] });
      expect((await get(`${API}/bypass/lint?scope=everyone`)).statusCode).toBe(400);
    });

    it('keeps a profile personal once its owner says so: lint, duplicate and the state file follow; import and built-ins stay shared', async () => {
      // Given a profile created personal, with bypassPermissions
      const created = await post(API, { name: 'Mine Only', version: 2, scope: 'personal', permissions: { mode: 'bypassPermissions' } });
      expect(created.statusCode).toBe(201);
      expect(created.json()).toMatchObject({ id: 'mine-only', scope: 'personal' });
      // Then it lints clean in its own scope, and as shared when asked
      expect((await get(`${API}/mine-only/lint`)).json()).toEqual({ valid: true, errors: [], warnings: [] });
      expect((await get(`${API}/mine-only/lint?scope=shared`)).json().errors.map((e: { code: string }) => e.code)).toEqual(['bypass_permissions_shared']);
      // And the scope is service metadata: kept in the state file, not written into the YAML or the export
      expect(JSON.parse(readFileSync(join(dir, '.brainstem-profiles.json'), 'utf8')).profiles['mine-only'].scope).toBe('personal');
      expect(load(readFileSync(join(dir, 'mine-only.yaml'), 'utf8'))).not.toHaveProperty('scope');
      const exported = (await get(`${API}/mine-only/export`)).body;
      // When it is duplicated; Then the copy is personal too
      expect((await post(`${API}/mine-only/duplicate`)).json()).toMatchObject({ id: 'mine-only-copy', scope: 'personal' });
      // When its export is imported; Then the import is shared, so its bypass is an error again
      const imported = (await yamlPost(`${API}/import`, exported)).json();
      expect(imported.profile.scope).toBe('shared');
      expect(imported.lint.errors.map((e: { code: string }) => e.code)).toEqual(['bypass_permissions_shared']);
      // When the owner makes it shared; Then the error is back, and the journal says what changed
      const updated = await patch(`${API}/mine-only`, { scope: 'shared' });
      expect(updated.json()).toMatchObject({ scope: 'shared', permissions: { mode: 'bypassPermissions' } });
      expect((await get(`${API}/mine-only/lint`)).json().valid).toBe(false);
      const events = await t.app.get<Journal>(JOURNAL).readStream('profile-mine-only');
      expect(events.map((e) => [e.type, e.data])).toEqual([
        ['profile.created', expect.objectContaining({ scope: 'personal' })],
        ['profile.updated', expect.objectContaining({ fields: ['scope'], scope: 'shared' })],
      ]);
      // And a built-in stays shared whatever is asked
      expect((await get(`${API}/coding-assistant`)).json().scope).toBe('shared');
      // And a scope outside the list is refused, naming it, with nothing stored
      const bad = await post(API, { name: 'Everyone', scope: 'everyone' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toBe('scope: must be one of the following values: shared, personal');
      expect((await get(`${API}/everyone`)).statusCode).toBe(404);
      expect((await patch(`${API}/mine-only`, { scope: 'public' })).statusCode).toBe(400);
    });

    it('reads a scope written into a file by hand as metadata: ignored, with a warning', async () => {
      writeFileSync(join(dir, 'hand-scoped.yaml'), 'name: Hand Scoped\nversion: 2\nscope: personal\npermissions: {mode: bypassPermissions}\n');
      expect((await get(`${API}/hand-scoped`)).json()).toMatchObject({ scope: 'shared' });
      const lint = (await get(`${API}/hand-scoped/lint`)).json();
      expect(lint.errors.map((e: { code: string }) => e.code)).toEqual(['bypass_permissions_shared']);
      expect(lint.warnings).toContainEqual({ path: 'scope', code: 'metadata_ignored', message: 'scope is managed by the service; the value in the file is ignored' });
    });

    it('lints every built-in clean', async () => {
      for (const id of BUILTIN_IDS) expect([id, (await get(`${API}/${id}/lint`)).json()]).toEqual([id, { valid: true, errors: [], warnings: [] }]);
    });

    it('saves, lists and exports a profile with lint errors', async () => {
      const res = await post(API, { name: 'Reserved', tools: { mcp_servers: { brainstem: { type: 'stdio', command: 'x' } } } });
      expect(res.statusCode).toBe(201);
      expect((await get(`${API}/reserved/lint`)).json().errors[0].code).toBe('reserved_mcp_server_name');
      expect((await get(`${API}/reserved/export`)).statusCode).toBe(200);
    });
  });

  describe('import and export', () => {
    it('exports YAML with the on-disk structure and imports it back minus default_cwd', async () => {
      // Given a profile with a default_cwd
      await post(API, {
        name: 'Round Trip',
        version: 2,
        target_runtime: 'claude-code',
        default_cwd: '/srv/app',
        hooks: { PreToolUse: [{ type: 'command', command: './check.sh', matcher: 'Bash' }] },
        skills: [{ name: 'review', source: 'registry' }],
      });
      // When exporting it
      const exported = await get(`${API}/round-trip/export`);
      expect(exported.statusCode).toBe(200);
      expect(exported.headers['content-type']).toMatch(/^application\/yaml/);
      expect(exported.body).toBe(readFileSync(join(dir, 'round-trip.yaml'), 'utf8'));
      // And importing the export as YAML
      const imported = await yamlPost(`${API}/import`, exported.body);
      // Then it is a new profile with a fresh id and name, everything but default_cwd kept, and warnings saying so
      expect(imported.statusCode).toBe(201);
      const body = imported.json();
      expect(body.profile).toMatchObject({ id: 'round-trip-2', name: 'Round Trip (2)', source: 'import', locked: false, default_cwd: '' });
      expect(body.warnings.map((w: { code: string }) => w.code)).toEqual(['default_cwd_dropped', 'renamed']);
      const original = (await get(`${API}/round-trip`)).json();
      const strip = (p: Record<string, unknown>) => {
        const { id, name, default_cwd, created_at, updated_at, source, is_default, ...rest } = p;
        return rest;
      };
      expect(strip(body.profile)).toEqual(strip(original));
      expect(body.lint.warnings.map((w: { code: string }) => w.code)).toEqual(['skill_source_unsupported']);
    });

    it('imports the JSON form {yaml}, ignoring metadata with a warning', async () => {
      const res = await post(`${API}/import`, { yaml: 'name: From Json\nversion: 2\nlocked: true\nsource: builtin\n' });
      expect(res.statusCode).toBe(201);
      expect(res.json().profile).toMatchObject({ id: 'from-json', source: 'import', locked: false });
      expect(res.json().warnings.map((w: { path: string }) => w.path)).toEqual(['source', 'locked']);
    });

    it.each([
      ['invalid YAML', 'name: [unclosed\n', 'yaml:'],
      ['a non-mapping document', '- a\n- b\n', 'yaml: must be a mapping'],
      ['YAML over 256 KiB', `name: Big\ndescription: "${'x'.repeat(256 * 1024)}"\n`, 'yaml: document is'],
      ['an alias bomb', billionLaughs(), 'yaml:'],
      ['a __proto__ key', 'name: Proto\n__proto__: {polluted: true}\n', 'yaml: the key __proto__'],
      ['a wrong type', 'name: Typed\nskills: yes\n', 'skills:'],
      ['an unknown field', 'name: Unknown\npermissions:\n  mode: plan\n  extra: 1\n', 'permissions.extra:'],
    ])('rejects %s with 400 and writes nothing', async (_what, text, message) => {
      const before = filesInDir();
      const res = await yamlPost(`${API}/import`, text);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_input');
      expect(res.json().message).toContain(message);
      expect(filesInDir()).toEqual(before);
    });

    it('rejects an import body without yaml', async () => {
      const res = await post(`${API}/import`, { yml: 'name: x' });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain('yml');
    });

    it('exports a built-in and answers 404 for an unknown id', async () => {
      const res = await get(`${API}/devops-engineer/export`);
      expect(load(res.body)).toMatchObject({ name: 'DevOps Engineer', runtime: 'auto', version: 2 });
      expect((await get(`${API}/missing/export`)).statusCode).toBe(404);
    });
  });

  describe('project bindings', () => {
    it('binds, lists and unbinds a project directory', async () => {
      await post(API, { name: 'Bound' });
      const bind = await post(`${API}/project-binding`, { project_dir: '/work/app/', profile_id: 'bound' });
      expect(bind.statusCode).toBe(200);
      expect(bind.json()).toEqual({ project_dir: '/work/app', profile_id: 'bound' });
      expect((await get(`${API}/project-binding`)).json()).toEqual({ bindings: [{ project_dir: '/work/app', profile_id: 'bound' }] });
      expect((await post(`${API}/project-binding`, { project_dir: '/work/app', profile_id: null })).json().profile_id).toBeNull();
      expect((await get(`${API}/project-binding`)).json()).toEqual({ bindings: [] });
    });

    it('refuses relative dirs, unknown profiles and missing fields', async () => {
      expect((await post(`${API}/project-binding`, { project_dir: 'rel/dir', profile_id: 'bound' })).json().message).toContain('project_dir:');
      expect((await post(`${API}/project-binding`, { project_dir: '/x', profile_id: 'nope' })).statusCode).toBe(404);
      expect((await post(`${API}/project-binding`, { project_dir: '/x' })).json().message).toContain('profile_id');
      expect((await post(`${API}/project-binding`, { project_dir: '/x', profile_id: '../etc' })).statusCode).toBe(400);
    });
  });

  describe('what the reader could not take back, and other odd input', () => {
    const postAs = (url: string, payload: object | string, contentType = 'application/json') =>
      t.inject({ method: 'POST', url, headers: { 'content-type': contentType }, payload });
    const listed = async () => (await t.inject({ method: 'GET', url: API })).json().profiles as Array<{ id: string; name: string | null; error: string | null }>;

    it('refuses a JSON body nested deeper than 64 levels with 400, and takes a shallower one', async () => {
      const nested = (levels: number) => '['.repeat(levels - 1) + '{}' + ']'.repeat(levels - 1);
      const deep = await postAs(API, `{"name":"deep","model":{"options":{"x":${nested(5000)}}}}`);
      expect(deep.statusCode).toBe(400);
      expect(deep.json()).toMatchObject({ code: 'invalid_input', message: 'the JSON body nests deeper than 64 levels' });
      expect((await postAs(API, `{"name":"nested","model":{"options":{"x":${nested(20)}}}}`)).statusCode).toBe(201);
    });

    it('refuses a profile whose file would be over the 256 KiB the reader takes, writing nothing', async () => {
      const before = readdirSync(dir);
      // Each field is within its own limit (128 KiB); together they are not.
      const big = 'p'.repeat(100_000);
      const rules = [{ glob: '**/*.md', instruction: big }, { glob: '**/*.ts', instruction: big }];
      const res = await postAs(API, { name: 'Too Big', instructions: { system_prompt: big, rules } });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(/cannot be saved.*over the limit of 256 KiB/);
      expect(readdirSync(dir)).toEqual(before);
    });

    it('keeps the names of copies and renamed imports within 200 characters', async () => {
      const name = 'N'.repeat(200);
      const id = (await postAs(API, { name })).json().id as string;
      const copy = await postAs(`${API}/${id}/duplicate`, {});
      expect(copy.statusCode).toBe(201);
      expect(copy.json().name).toBe(`${'N'.repeat(193)} (copy)`);
      const imported = await postAs(`${API}/import`, { yaml: `name: ${name}\n` });
      expect(imported.statusCode).toBe(201);
      expect(imported.json().profile.name).toBe(`${'N'.repeat(196)} (2)`);
      // Then all three read back as valid profiles
      const mine = (await listed()).filter((p) => p.name?.startsWith('NNN'));
      expect(mine.map((p) => p.error)).toEqual([null, null, null]);
    });

    it.each([
      ['a skill name that is a path', { name: 'Skill Path', skills: [{ name: '../../.git/hooks', path: '/tmp' }] }, 'skills[0].name: must be a plain name'],
      ['a name with NUL', { name: 'a\u0000b' }, 'name: must not contain control characters'],
      ['a relative auto_apply_dir', { name: 'Rel', auto_apply_dir: 'some/dir' }, 'auto_apply_dir: must be an absolute path'],
      ['a relative default_cwd', { name: 'Rel2', default_cwd: 'src/app' }, 'default_cwd: must be an absolute path'],
      ['an object where a list belongs', { name: 'Obj', permissions: { allow: { a: 1 } } }, 'permissions.allow: must be an array'],
    ])('refuses %s with 400 naming the field', async (_what, body, named) => {
      const res = await postAs(API, body);
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain(named);
    });

    it('refuses keys named like built-in object members with 400 naming the path, in JSON and YAML, writing nothing', async () => {
      const before = readdirSync(dir);
      const json = await postAs(API, { name: 'Proto Keys', tools: { mcp_servers: { toString: { type: 'stdio', command: 'c' } } } });
      expect(json.statusCode).toBe(400);
      expect(json.json()).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('tools.mcp_servers.toString: this key name is not allowed') });
      const yaml = await postAs(`${API}/import`, 'name: Proto Yaml\nmodel: {options: {constructor: v}}\n', 'application/yaml');
      expect(yaml.statusCode).toBe(400);
      expect(yaml.json().message).toContain('model.options.constructor: this key name is not allowed');
      expect(readdirSync(dir)).toEqual(before);
    });

    it('answers 400 naming the field, not 500, when a tool names a profile by a path instead of an id (as REST does)', async () => {
      for (const action of ['read', 'delete']) {
        const res = await postAs('/api/v1/session-os/main-brain/tools/manage_agent_profile', { action, profile_id: '../../etc/passwd' });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ code: 'invalid_input', message: 'manage_agent_profile: profile_id: must be a profile id ([a-z0-9][a-z0-9-]{0,63})' });
      }
    });

    it('answers 4xx, not 500, for ids that are not ids', async () => {
      for (const id of ['Abc', '..%2F..%2Fetc', '__proto__', 'x'.repeat(100)]) {
        for (const method of ['GET', 'DELETE'] as const) {
          const res = await t.inject({ method, url: `${API}/${id}` });
          expect(res.statusCode).toBe(400);
          expect(res.json().code).toBe('invalid_input');
        }
      }
    });

    it('lists a FIFO or a directory named like a profile as malformed, without hanging', async () => {
      mkdirSync(dir, { recursive: true });
      execFileSync('mkfifo', [join(dir, 'a-fifo.yaml')]);
      mkdirSync(join(dir, 'a-dir.yaml'));
      const odd = (await listed()).filter((p) => p.id === 'a-fifo' || p.id === 'a-dir');
      expect(odd).toEqual([expect.objectContaining({ id: 'a-dir', error: 'not a regular file' }), expect.objectContaining({ id: 'a-fifo', error: 'not a regular file' })]);
      expect((await t.inject({ method: 'GET', url: `${API}/a-fifo` })).json()).toMatchObject({ error: 'not a regular file' });
    });
  });

  it('leaves no temp files behind after all of the above', () => {
    expect(filesInDir().filter((f) => !f.endsWith('.yaml') && f !== '.brainstem-profiles.json')).toEqual([]);
  });
});

/** Nine levels of ten aliases each: tiny on disk, a billion nodes once expanded. */
function billionLaughs(): string {
  const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i <= 9; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(',')}]`);
  return `name: Bomb\n${lines.join('\n')}\n`;
}
