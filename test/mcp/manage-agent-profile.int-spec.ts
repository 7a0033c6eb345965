import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { call, httpClient } from './mcp-client';

/** manage_agent_profile over MCP: every action the tool offers, on the same ProfilesService as REST. */
describe('manage_agent_profile over MCP', () => {
  let t: TestApp;
  let brain: Client;

  beforeEach(async () => {
    t = await startTestApp({}, { listen: true });
    brain = await httpClient(t.url, { token: t.tokenOf('main_brain') });
  });
  afterEach(async () => {
    await brain.close();
    await t.close();
  });

  const profileTool = (args: Record<string, unknown>) => call(brain, 'manage_agent_profile', args);

  it('list, create, read, update, search, remember, delete', async () => {
    const listed = await profileTool({ action: 'list' });
    expect(listed.json.default_profile_id).toBe('coding-assistant');
    expect(listed.json.profiles.map((p: { id: string }) => p.id)).toContain('researcher');

    const created = await profileTool({ action: 'create', profile: { name: 'Billing Fixer', description: 'Fixes billing bugs', target_runtime: 'claude-code', instructions: { system_prompt: 'Be careful with money.' } } });
    expect(created.isError).toBe(false);
    const id = created.json.profile.id as string;
    expect(id).toBe('billing-fixer');

    const read = await profileTool({ action: 'read', profile_id: id });
    expect(read.json.profile).toMatchObject({ id, name: 'Billing Fixer', target_runtime: 'claude-code' });
    expect(read.json.lint).toMatchObject({ valid: true });

    expect((await profileTool({ action: 'update', profile_id: id, profile: { description: 'Fixes billing and invoicing bugs' } })).json.profile.description).toBe('Fixes billing and invoicing bugs');

    const found = await profileTool({ action: 'search', query: 'INVOICING billing' });
    expect(found.json.matches).toEqual([expect.objectContaining({ id, matched_in: ['name', 'description'] })]);
    expect((await profileTool({ action: 'search', query: 'money' })).json.matches.map((m: { id: string }) => m.id)).toEqual([id]);
    expect((await profileTool({ action: 'search', query: 'no-such-word-anywhere' })).json.matches).toEqual([]);

    await profileTool({ action: 'remember', profile_id: id, text: 'Never round amounts.' });
    const twice = await profileTool({ action: 'remember', profile_id: id, text: 'Use integer cents.' });
    expect(twice.json.profile.instructions.system_prompt).toBe('Be careful with money.\n\nRemembered rules:\n- Never round amounts.\n- Use integer cents.');
    const scoped = await profileTool({ action: 'remember', profile_id: id, text: 'Migrations are append-only.', glob: 'db/migrations/**' });
    expect(scoped.json.profile.instructions.rules).toEqual([{ glob: 'db/migrations/**', instruction: 'Migrations are append-only.' }]);
    expect((await profileTool({ action: 'search', query: 'append-only' })).json.matches).toEqual([expect.objectContaining({ id, matched_in: ['instructions'] })]);

    // The REST API sees the same profile: one service behind both.
    expect((await t.inject({ method: 'GET', url: `/api/v1/agent-profiles/${id}` })).json()).toMatchObject({ id, description: 'Fixes billing and invoicing bugs' });

    expect((await profileTool({ action: 'delete', profile_id: id })).json).toEqual({ deleted: id });
    expect(await profileTool({ action: 'read', profile_id: id })).toMatchObject({ isError: true, text: `not_found: no profile ${id}` });
  });

  it('generate picks the closest template, saves it, and previews with save:false', async () => {
    const preview = await profileTool({ action: 'generate', description: 'Audit our services for vulnerabilities and leaked secrets', save: false });
    expect(preview.json).toMatchObject({ saved: false, template_id: 'security-auditor' });
    expect((await profileTool({ action: 'list' })).json.profiles).toHaveLength(8);

    const saved = await profileTool({ action: 'generate', description: 'Audit our services for vulnerabilities and leaked secrets', name: 'Sec Sweep' });
    expect(saved.json).toMatchObject({ saved: true, template_id: 'security-auditor', profile: { id: 'sec-sweep', name: 'Sec Sweep', source: 'user', locked: false } });
    expect(saved.json.profile.permissions).toEqual(preview.json.profile.permissions);
    expect(saved.json.profile.instructions.system_prompt).toContain('purpose: Audit our services');
  });

  it('apply previews, then writes the runtime files (with the reserved brainstem MCP server) into the project dir', async () => {
    const project = tempDir('brainstem-mcp-apply-');
    try {
      const preview = await profileTool({ action: 'apply', profile_id: 'code-reviewer', dir: project.path, runtime: 'claude-code', preview: true });
      expect(preview.isError).toBe(false);
      expect(preview.json.preview.files.map((f: { path: string }) => f.path)).toEqual(expect.arrayContaining(['.claude/settings.json', '.mcp.json']));
      expect(existsSync(join(project.path, '.mcp.json'))).toBe(false);

      const applied = await profileTool({ action: 'apply', profile_id: 'code-reviewer', dir: project.path, runtime: 'claude-code' });
      expect(applied.json.applied).toMatchObject({ runtime: 'claude-code', dir: project.path });
      expect(JSON.parse(readFileSync(join(project.path, '.mcp.json'), 'utf8')).mcpServers).toHaveProperty('brainstem');

      expect(await profileTool({ action: 'apply', profile_id: 'code-reviewer', dir: project.path, preview: true, force: true })).toMatchObject({ isError: true, text: expect.stringContaining('force: not used with preview') });
      expect(await profileTool({ action: 'apply', profile_id: 'code-reviewer', runtime: 'command' })).toMatchObject({ isError: true, text: expect.stringContaining('runtime: must be equal to one of the allowed values') });
    } finally {
      project.remove();
    }
  });

  it('refuses what a profile cannot take, readably', async () => {
    expect(await profileTool({ action: 'remember', profile_id: 'researcher', text: 'x' })).toMatchObject({ isError: true, text: expect.stringContaining('profile_locked: profile researcher is locked') });
    expect(await profileTool({ action: 'delete', profile_id: 'coding-assistant' })).toMatchObject({ isError: true, text: expect.stringContaining('profile_locked') });
    expect(await profileTool({ action: 'create', profile: { description: 'no name' } })).toMatchObject({ isError: true, text: expect.stringContaining('invalid_input: name') });
    expect(await profileTool({ action: 'create', profile: { name: 'Researcher' } })).toMatchObject({ isError: true, text: expect.stringContaining('profile_name_taken') });
    expect(await profileTool({ action: 'update', profile_id: 'nope', profile: { description: 'x' } })).toMatchObject({ isError: true, text: expect.stringContaining('not_found') });
    expect(await profileTool({ action: 'generate', description: 'x', glob: '*' })).toMatchObject({ isError: true, text: expect.stringContaining('glob: not used by action generate') });
  });

  it('cannot make a profile personal, make one bypass permissions, or change or apply one that does: the user can, over REST', async () => {
    const rest = (id: string, body: object) =>
      fetch(`${t.url}/api/v1/agent-profiles/${id}`, { method: 'PATCH', headers: { ...t.auth(), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // Given a profile the main brain created
    const created = await profileTool({ action: 'create', profile: { name: 'Loose', permissions: { mode: 'plan' } } });
    expect(created.json.profile).toMatchObject({ id: 'loose', scope: 'shared' });
    // When the main brain tries to make it (or a new one) personal, or to make it bypass; Then it is refused, naming the field
    const personal = 'permission_denied: manage_agent_profile: profile.scope: only the user can make a profile personal (over REST)';
    const bypass = 'permission_denied: manage_agent_profile: profile.permissions.mode: only the user can set bypassPermissions (over REST)';
    expect(await profileTool({ action: 'update', profile_id: 'loose', profile: { scope: 'personal' } })).toMatchObject({ isError: true, text: expect.stringContaining(personal) });
    expect(await profileTool({ action: 'create', profile: { name: 'Looser', scope: 'personal' } })).toMatchObject({ isError: true, text: expect.stringContaining(personal) });
    expect(await profileTool({ action: 'create', profile: { name: 'Looser', permissions: { mode: 'bypassPermissions' } } })).toMatchObject({ isError: true, text: expect.stringContaining(bypass) });
    // Even once the user made it personal, where bypass would be valid
    expect((await rest('loose', { scope: 'personal' })).status).toBe(200);
    expect(await profileTool({ action: 'update', profile_id: 'loose', profile: { permissions: { mode: 'bypassPermissions' } } })).toMatchObject({ isError: true, text: expect.stringContaining(bypass) });
    expect((await profileTool({ action: 'read', profile_id: 'loose' })).json).toMatchObject({ profile: { scope: 'personal', permissions: { mode: 'plan' } }, lint: { valid: true } });
    // And making it shared again is no loosening, so it is allowed
    expect((await profileTool({ action: 'update', profile_id: 'loose', profile: { scope: 'shared' } })).json.profile.scope).toBe('shared');
    // When the user makes it personal and bypassing over REST; Then it lints clean
    expect((await rest('loose', { scope: 'personal', permissions: { mode: 'bypassPermissions' } })).status).toBe(200);
    expect((await profileTool({ action: 'read', profile_id: 'loose' })).json).toMatchObject({ profile: { scope: 'personal', permissions: { mode: 'bypassPermissions' } }, lint: { valid: true } });
    // And the main brain can read it, but not change it (a hook, an auto_apply_dir, a rule) or apply it anywhere
    const owned = 'permission_denied: manage_agent_profile: profile loose bypasses permissions: only the user changes or applies it (over REST)';
    const project = tempDir('brainstem-mcp-bypass-');
    try {
      for (const args of [
        { action: 'update', profile_id: 'loose', profile: { hooks: { SessionStart: [{ type: 'command', command: 'echo hi' }] } } },
        { action: 'update', profile_id: 'loose', profile: { auto_apply_dir: project.path } },
        { action: 'remember', profile_id: 'loose', text: 'Anything goes.' },
        { action: 'apply', profile_id: 'loose', dir: project.path, runtime: 'claude-code' },
      ]) {
        expect([args.action, await profileTool(args)]).toEqual([args.action, expect.objectContaining({ isError: true, text: expect.stringContaining(owned) })]);
      }
      // Over REST's tool route the refusal is a 403
      const viaRest = await fetch(`${t.url}/api/v1/session-os/main-brain/tools/manage_agent_profile`, {
        method: 'POST',
        headers: { ...t.auth('main_brain'), 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'apply', profile_id: 'loose', dir: project.path, runtime: 'claude-code' }),
      });
      expect([viaRest.status, await viaRest.json()]).toEqual([403, expect.objectContaining({ code: 'permission_denied', message: expect.stringContaining(owned.slice('permission_denied: '.length)) })]);
      expect(existsSync(join(project.path, '.claude'))).toBe(false);
      expect((await profileTool({ action: 'read', profile_id: 'loose' })).json.profile).toMatchObject({ hooks: {}, auto_apply_dir: '' });
      // A preview writes nothing, so the brain may look
      expect((await profileTool({ action: 'apply', profile_id: 'loose', dir: project.path, runtime: 'claude-code', preview: true })).isError).toBe(false);
    } finally {
      project.remove();
    }
  });
  describe('what runs commands (command hooks, MCP servers started by a command, auto_apply_dir) is the user\'s to add', () => {
    const TOOL_ROUTE = '/api/v1/session-os/main-brain/tools/manage_agent_profile';
    const guard = { type: 'command', command: './guard.sh', matcher: 'Bash' };
    const github = { type: 'stdio', command: 'github-mcp', args: ['--read-only'], env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' } };
    const asks = { type: 'prompt', prompt: 'Is this safe?' };
    const docs = { type: 'http', url: 'https://docs.example/mcp' };
    const hookMsg = (path: string) => `profile.${path}: only the user can add or change a command hook (over REST)`;
    const mcpMsg = (name: string) => `profile.tools.mcp_servers.${name}: only the user can add or change an MCP server that starts a command (over REST)`;
    const dirMsg = 'profile.auto_apply_dir: only the user can set auto_apply_dir (over REST)';
    const dirs: Array<ReturnType<typeof tempDir>> = [];
    const dir = () => {
      const d = tempDir('brainstem-mcp-runs-');
      dirs.push(d);
      return d.path;
    };
    afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

    /** The tool's answer over MCP and over REST's tool route: 'ok', or the refusal (403 on REST). */
    const bothWays = async (args: Record<string, unknown>) => {
      const mcp = await profileTool(args);
      const rest = await t.inject({ method: 'POST', url: TOOL_ROUTE, payload: args });
      return { mcp: mcp.isError ? mcp.text : 'ok', rest: rest.statusCode === 200 ? 'ok' : `${rest.statusCode} ${rest.json().code}: ${rest.json().message}` };
    };
    const refused = (...problems: string[]) => {
      const message = `manage_agent_profile: ${problems.join('; ')}`;
      return { mcp: `permission_denied: ${message}`, rest: `403 permission_denied: ${message}` };
    };
    const ids = async () => (await profileTool({ action: 'list' })).json.profiles.map((p: { id: string }) => p.id);
    const byUser = async (profile: Record<string, unknown>) => {
      const res = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: profile });
      expect(res.statusCode).toBe(201);
      return res.json().id as string;
    };

    it('cannot create a profile with any of them; prompt and http hooks and http MCP servers are fine', async () => {
      const project = dir();
      const before = await ids();
      // When the main brain creates a profile with something that runs commands; Then it is refused, naming each
      for (const [profile, problems] of [
        [{ name: 'Hooked', hooks: { PreToolUse: [asks, guard] } }, [hookMsg('hooks.PreToolUse[1]')]],
        [{ name: 'Served', tools: { mcp_servers: { docs, github } } }, [mcpMsg('github')]],
        [{ name: 'Auto', auto_apply_dir: project }, [dirMsg]],
        [{ name: 'All', hooks: { SessionStart: [guard] }, tools: { mcp_servers: { github } }, auto_apply_dir: project }, [hookMsg('hooks.SessionStart[0]'), mcpMsg('github'), dirMsg]],
      ] as const) {
        expect([profile.name, await bothWays({ action: 'create', profile })]).toEqual([profile.name, refused(...problems)]);
      }
      // And nothing was saved or written
      expect(await ids()).toEqual(before);
      expect(readdirSync(project)).toEqual([]);
      // When its profile only asks a model or calls URLs; Then it is created
      const fine = await profileTool({ action: 'create', profile: { name: 'Asks', hooks: { PreToolUse: [asks, { type: 'http', url: 'https://hooks.example/pre' }] }, tools: { mcp_servers: { docs } } } });
      expect(fine.json.profile).toMatchObject({ id: 'asks', tools: { mcp_servers: { docs } } });
    });

    it('keeps what the user put there, refuses what it would add or change, and may remove it', async () => {
      // Given a profile the user made with a command hook, an MCP server started by a command and an auto_apply_dir
      const project = dir();
      const id = await byUser({ name: 'Guarded', target_runtime: 'claude-code', hooks: { PreToolUse: [guard] }, tools: { mcp_servers: { github } }, auto_apply_dir: project });
      // When the main brain changes something else, or sends back what is there; Then that is allowed
      for (const profile of [
        { description: 'Guards Bash' },
        { hooks: { PreToolUse: [{ ...guard }, asks] }, tools: { mcp_servers: { github: { ...github }, docs } }, auto_apply_dir: project },
      ]) {
        expect(await bothWays({ action: 'update', profile_id: id, profile })).toEqual({ mcp: 'ok', rest: 'ok' });
      }
      expect((await profileTool({ action: 'remember', profile_id: id, text: 'Run the tests first.' })).isError).toBe(false);
      // When it adds or changes what runs; Then it is refused
      const elsewhere = dir();
      for (const [profile, problem] of [
        [{ hooks: { PreToolUse: [guard, asks, { type: 'command', command: './more.sh' }] } }, hookMsg('hooks.PreToolUse[2]')],
        [{ hooks: { PreToolUse: [{ ...guard, command: './other.sh' }, asks] } }, hookMsg('hooks.PreToolUse[0]')],
        [{ hooks: { PreToolUse: [{ ...guard, matcher: '.*' }, asks] } }, hookMsg('hooks.PreToolUse[0]')],
        [{ hooks: { PostToolUse: [guard] } }, hookMsg('hooks.PostToolUse[0]')],
        [{ tools: { mcp_servers: { github: { env: { LD_PRELOAD: '/tmp/evil.so' } } } } }, mcpMsg('github')],
        [{ tools: { mcp_servers: { github: { args: [] } } } }, mcpMsg('github')],
        [{ tools: { mcp_servers: { docs: { type: 'stdio', command: 'docs-mcp' } } } }, mcpMsg('docs')],
        [{ tools: { mcp_servers: { shell: { type: 'stdio', command: 'sh' } } } }, mcpMsg('shell')],
        [{ auto_apply_dir: elsewhere }, dirMsg],
      ] as const) {
        expect([profile, await bothWays({ action: 'update', profile_id: id, profile })]).toEqual([profile, refused(problem)]);
      }
      // And the profile is as the user and the allowed changes left it
      const read = (await profileTool({ action: 'read', profile_id: id })).json.profile;
      expect(read).toMatchObject({ description: 'Guards Bash', hooks: { PreToolUse: [{ ...guard, timeout: 60 }, { ...asks, timeout: 60 }] }, tools: { mcp_servers: { github, docs } }, auto_apply_dir: project });
      expect(read.hooks.PostToolUse).toBeUndefined();
      expect(readdirSync(elsewhere)).toEqual([]);
      // When it removes what runs; Then that is allowed, and putting it back is refused
      expect((await profileTool({ action: 'update', profile_id: id, profile: { hooks: { PreToolUse: [asks] }, auto_apply_dir: '' } })).json.profile).toMatchObject({ hooks: { PreToolUse: [asks] }, auto_apply_dir: '' });
      expect(await bothWays({ action: 'update', profile_id: id, profile: { hooks: { PreToolUse: [guard] } } })).toEqual(refused(hookMsg('hooks.PreToolUse[0]')));
      expect(await bothWays({ action: 'update', profile_id: id, profile: { auto_apply_dir: project } })).toEqual(refused(dirMsg));
    });

    it('cannot apply a profile that runs commands, even the user\'s own; it may preview it, and the user may apply it', async () => {
      const id = await byUser({ name: 'Guarded', target_runtime: 'claude-code', hooks: { PreToolUse: [guard] }, tools: { mcp_servers: { github } } });
      const project = dir();
      const apply = { action: 'apply', profile_id: id, dir: project, runtime: 'claude-code' };
      expect(await bothWays(apply)).toEqual(refused(`profile ${id} runs commands (hooks.PreToolUse[0], tools.mcp_servers.github): only the user applies it (over REST)`));
      expect(existsSync(join(project, '.claude'))).toBe(false);
      expect((await profileTool({ ...apply, preview: true })).json.preview.files.map((f: { path: string }) => f.path)).toContain('.claude/settings.json');
      const byRest = await t.inject({ method: 'POST', url: `/api/v1/agent-profiles/${id}/apply`, payload: { dir: project, runtime: 'claude-code' } });
      expect(byRest.statusCode).toBe(200);
      expect(JSON.parse(readFileSync(join(project, '.claude/settings.json'), 'utf8')).hooks.PreToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh', timeout: 60 }] }]);
      // A profile whose hooks only ask a model is applied as before
      const asking = await byUser({ name: 'Asking', target_runtime: 'claude-code', hooks: { PreToolUse: [asks] } });
      expect((await profileTool({ action: 'apply', profile_id: asking, dir: dir(), runtime: 'claude-code' })).isError).toBe(false);
    });

    it('cannot import a scanned project\'s profile that runs commands; it may see the proposal', async () => {
      const project = dir();
      mkdirSync(join(project, '.claude'));
      writeFileSync(join(project, '.claude/settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh' }] }] } }));
      writeFileSync(join(project, '.mcp.json'), JSON.stringify({ mcpServers: { github: { command: 'github-mcp', args: [] } } }));
      const before = await ids();
      const proposal = await profileTool({ action: 'scan', dir: project, runtime: 'claude-code' });
      expect(proposal.json).toMatchObject({ saved: false, profile: { hooks: { PreToolUse: [{ type: 'command', command: './guard.sh' }] }, tools: { mcp_servers: { github: { type: 'stdio' } } } } });
      expect(await bothWays({ action: 'scan', dir: project, runtime: 'claude-code', import: true })).toEqual(refused(hookMsg('hooks.PreToolUse[0]'), mcpMsg('github')));
      expect(await ids()).toEqual(before);
    });
  });
});
