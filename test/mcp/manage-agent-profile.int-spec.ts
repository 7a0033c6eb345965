import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { existsSync, readFileSync } from 'node:fs';
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
});
