import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { call, httpClient } from './mcp-client';

/** manage_agent_profile over MCP: every action the tool offers, on the same ProfilesService as REST. */
describe('manage_agent_profile over MCP', () => {
  let brain: Client;
  const t = useTestApp({}, { listen: true, each: true, beforeClose: () => brain.close() });
  beforeEach(async () => {
    brain = await httpClient(t.url, { token: t.tokenOf('main_brain') });
  });

  const profileTool = (args: Record<string, unknown>) => call(brain, 'manage_agent_profile', args);
  /** The user answers a held call over REST: the confirmation as it then stands. */
  const answer = async (id: string, how: 'confirm' | 'refuse') => {
    const res = await t.inject({ method: 'POST', url: `/api/v1/session-os/main-brain/confirmations/${id}/${how}`, payload: {} });
    expect(res.statusCode).toBe(200);
    return res.json();
  };

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

    // Deleting waits for the user: nothing is deleted until the user confirms
    const held = await profileTool({ action: 'delete', profile_id: id });
    expect(held.json).toMatchObject({ status: 'waiting_for_user', what: `Delete the Agent Profile ${id} ("Billing Fixer"): its file is removed, and it stops being the default or bound to any project.` });
    expect((await profileTool({ action: 'read', profile_id: id })).isError).toBe(false);
    expect(await answer(held.json.confirmation_id, 'confirm')).toMatchObject({ status: 'confirmed', outcome: { ok: true, result: { deleted: id } } });
    expect(await profileTool({ action: 'read', profile_id: id })).toMatchObject({ isError: true, text: `not_found: no profile ${id}` });
  });

  it('generate picks the closest template, saves it, and previews with save:false', async () => {
    const preview = await profileTool({ action: 'generate', description: 'Audit our services for vulnerabilities and leaked secrets', save: false });
    expect(preview.json).toMatchObject({ saved: false, template_id: 'security-auditor' });
    expect((await profileTool({ action: 'list' })).json.profiles).toHaveLength(9);

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

      // Overwriting hand edits (force) waits for the user
      writeFileSync(join(project.path, '.mcp.json'), '{"mcpServers":{}}');
      const forced = await profileTool({ action: 'apply', profile_id: 'code-reviewer', dir: project.path, runtime: 'claude-code', force: true });
      expect(forced.json).toMatchObject({ status: 'waiting_for_user', what: `Apply the Agent Profile code-reviewer to ${JSON.stringify(project.path)} for claude-code, writing its runtime config files: files edited by hand since the last apply are overwritten.` });
      expect(readFileSync(join(project.path, '.mcp.json'), 'utf8')).toBe('{"mcpServers":{}}');
      expect(await answer(forced.json.confirmation_id, 'confirm')).toMatchObject({ outcome: { ok: true, result: { applied: { dir: project.path } } } });
      expect(JSON.parse(readFileSync(join(project.path, '.mcp.json'), 'utf8')).mcpServers).toHaveProperty('brainstem');

      expect(await profileTool({ action: 'apply', profile_id: 'code-reviewer', dir: project.path, preview: true, force: true })).toMatchObject({ isError: true, text: expect.stringContaining('force: not used with preview') });
      expect(await profileTool({ action: 'apply', profile_id: 'code-reviewer', runtime: 'command' })).toMatchObject({ isError: true, text: expect.stringContaining('runtime: must be one of the following values: auto, claude-code') });
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

  it('asks the user before making a profile personal, making one bypass permissions, or changing or applying one that does; the user can, over REST', async () => {
    const rest = (id: string, body: object) =>
      fetch(`${t.url}/api/v1/agent-profiles/${id}`, { method: 'PATCH', headers: { ...t.auth(), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const waits = async (args: Record<string, unknown>) => {
      const r = await profileTool(args);
      expect([r.isError, r.json?.status]).toEqual([false, 'waiting_for_user']);
      return r.json as { confirmation_id: string; what: string };
    };
    // Given a profile the main brain created
    const created = await profileTool({ action: 'create', profile: { name: 'Loose', permissions: { mode: 'plan' } } });
    expect(created.json.profile).toMatchObject({ id: 'loose', scope: 'shared' });
    // When the main brain tries to make it (or a new one) personal, or to make it bypass; Then it waits for the user, naming the field
    const personal = 'profile.scope: make the profile personal';
    const bypass = 'profile.permissions.mode: set bypassPermissions';
    expect((await waits({ action: 'update', profile_id: 'loose', profile: { scope: 'personal' } })).what).toBe(`Save the Agent Profile loose (update) with what only the user may allow: ${personal}.`);
    expect((await waits({ action: 'create', profile: { name: 'Looser', scope: 'personal' } })).what).toBe(`Save a new Agent Profile "Looser" (create) with what only the user may allow: ${personal}.`);
    const refusedBypass = await waits({ action: 'create', profile: { name: 'Looser', permissions: { mode: 'bypassPermissions' } } });
    expect(refusedBypass.what).toContain(bypass);
    // And when the user refuses; Then nothing is saved
    expect(await answer(refusedBypass.confirmation_id, 'refuse')).toMatchObject({ status: 'refused', outcome: null });
    expect((await profileTool({ action: 'read', profile_id: 'looser' })).isError).toBe(true);
    // Even once the user made it personal, where bypass would be valid
    expect((await rest('loose', { scope: 'personal' })).status).toBe(200);
    const toBypass = await waits({ action: 'update', profile_id: 'loose', profile: { permissions: { mode: 'bypassPermissions' } } });
    expect(toBypass.what).toContain(bypass);
    expect((await profileTool({ action: 'read', profile_id: 'loose' })).json).toMatchObject({ profile: { scope: 'personal', permissions: { mode: 'plan' } }, lint: { valid: true } });
    // And making it shared again is no loosening, so it runs at once
    expect((await profileTool({ action: 'update', profile_id: 'loose', profile: { scope: 'shared' } })).json.profile.scope).toBe('shared');
    // When the user makes it personal over REST and confirms the brain's bypass; Then it is saved as the user would save it, and lints clean
    expect((await rest('loose', { scope: 'personal' })).status).toBe(200);
    expect(await answer(toBypass.confirmation_id, 'confirm')).toMatchObject({ outcome: { ok: true, result: { profile: { permissions: { mode: 'bypassPermissions' } } } } });
    expect((await profileTool({ action: 'read', profile_id: 'loose' })).json).toMatchObject({ profile: { scope: 'personal', permissions: { mode: 'bypassPermissions' } }, lint: { valid: true } });
    // And whatever the main brain changes in it (a hook, an auto_apply_dir, a rule) or wherever it applies it, it waits for the user
    const owned = 'change profile loose, which bypasses permissions';
    const project = tempDir('brainstem-mcp-bypass-');
    try {
      for (const args of [
        { action: 'update', profile_id: 'loose', profile: { hooks: { SessionStart: [{ type: 'command', command: 'echo hi' }] } } },
        { action: 'update', profile_id: 'loose', profile: { auto_apply_dir: project.path } },
        { action: 'remember', profile_id: 'loose', text: 'Anything goes.' },
      ]) {
        expect([args.action, (await waits(args)).what]).toEqual([args.action, `Save the Agent Profile loose (${args.action}) with what only the user may allow: ${owned}.`]);
      }
      expect((await waits({ action: 'apply', profile_id: 'loose', dir: project.path, runtime: 'claude-code' })).what).toBe(
        `Apply the Agent Profile loose to ${JSON.stringify(project.path)} for claude-code, writing its runtime config files: it bypasses permissions.`,
      );
      // Over REST's tool route the brain waits the same
      const viaRest = await t.rawInject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/manage_agent_profile', headers: t.auth('main_brain'), payload: { action: 'apply', profile_id: 'loose', dir: project.path, runtime: 'claude-code' } });
      expect([viaRest.statusCode, viaRest.json().result.status]).toEqual([200, 'waiting_for_user']);
      expect(existsSync(join(project.path, '.claude'))).toBe(false);
      expect((await profileTool({ action: 'read', profile_id: 'loose' })).json.profile).toMatchObject({ hooks: {}, auto_apply_dir: '' });
      // A preview writes nothing, so the brain may look
      expect((await profileTool({ action: 'apply', profile_id: 'loose', dir: project.path, runtime: 'claude-code', preview: true })).isError).toBe(false);
      // And the user confirming the apply writes the files
      expect(await answer(viaRest.json().result.confirmation_id, 'confirm')).toMatchObject({ outcome: { ok: true, result: { applied: { dir: project.path } } } });
      expect(existsSync(join(project.path, '.claude/settings.json'))).toBe(true);
    } finally {
      project.remove();
    }
  });

  it("asks the user before widening a profile's sandbox; what a built-in template allows, and narrowing, it does at once", async () => {
    const waits = async (args: Record<string, unknown>) => {
      const r = await profileTool(args);
      expect([r.isError, r.json?.status]).toEqual([false, 'waiting_for_user']);
      return (r.json as { what: string }).what;
    };
    const only = (...problems: string[]) => `Save the Agent Profile boxed (update) with what only the user may allow: ${problems.join('; ')}.`;
    // Given a profile the main brain creates with a registry and a cache the coding assistant template allows: created at once
    const sandbox = { allow_write: ['~/.npm'], network: { allow: ['registry.npmjs.org'], deny: ['x.example.com'] }, auto_allow_bash: false };
    const created = await profileTool({ action: 'create', profile: { name: 'Boxed', sandbox } });
    expect(created.json.profile).toMatchObject({ id: 'boxed', sandbox });
    // And one that allows a host no template does waits for the user
    expect(await waits({ action: 'create', profile: { name: 'Open', sandbox: { network: { allow: ['exfil.example.com'] } } } })).toBe(
      'Save a new Agent Profile "Open" (create) with what only the user may allow: profile.sandbox.network.allow: allow "exfil.example.com".',
    );
    // When it widens the sandbox in any way; Then it waits for the user, naming what
    for (const [change, problem] of [
      [{ allow_write: ['~/.npm', '~/'] }, 'profile.sandbox.allow_write: let workers write "~/"'],
      [{ deny_read: ['.env'] }, null],
      [{ network: { allow: ['registry.npmjs.org', 'exfil.example.com'], deny: ['x.example.com'] } }, 'profile.sandbox.network.allow: allow "exfil.example.com"'],
      [{ network: { allow: ['registry.npmjs.org'], deny: [] } }, 'profile.sandbox.network.deny: no longer deny "x.example.com"'],
      [{ auto_allow_bash: true }, 'profile.sandbox.auto_allow_bash: let Bash run without asking in the sandbox'],
    ] as const) {
      const args = { action: 'update', profile_id: 'boxed', profile: { sandbox: change } };
      if (problem === null) expect((await profileTool(args)).json.profile.sandbox).toMatchObject(change);
      else expect([change, await waits(args)]).toEqual([change, only(problem)]);
    }
    // And narrowing runs at once: a host denied, Bash asked
    const narrowed = await profileTool({ action: 'update', profile_id: 'boxed', profile: { sandbox: { network: { allow: [], deny: ['x.example.com', 'y.example.com'] } } } });
    expect(narrowed.json.profile.sandbox).toEqual({ ...sandbox, deny_read: ['.env'], network: { allow: [], deny: ['x.example.com', 'y.example.com'] } });
  });

  describe('what runs commands (command hooks, MCP servers started by a command, auto_apply_dir) waits for the user', () => {
    const TOOL_ROUTE = '/api/v1/session-os/main-brain/tools/manage_agent_profile';
    const guard = { type: 'command', command: './guard.sh', matcher: 'Bash' };
    const github = { type: 'stdio', command: 'github-mcp', args: ['--read-only'], env: { GITHUB_TOKEN: '${GITHUB_TOKEN}' } };
    const asks = { type: 'prompt', prompt: 'Is this safe?' };
    const docs = { type: 'http', url: 'https://docs.example/mcp' };
    const hookMsg = (path: string, command = './guard.sh') => `profile.${path}: add or change a command hook (runs ${JSON.stringify(command)})`;
    const mcpMsg = (name: string, command = 'github-mcp --read-only') => `profile.tools.mcp_servers.${name}: add or change an MCP server that starts a command (runs ${JSON.stringify(command)})`;
    const dirMsg = (d: string) => `profile.auto_apply_dir: set it to ${JSON.stringify(d)} (every later save writes the profile's files there)`;
    const dirs: Array<ReturnType<typeof tempDir>> = [];
    const dir = () => {
      const d = tempDir('brainstem-mcp-runs-');
      dirs.push(d);
      return d.path;
    };
    afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

    /** The brain's call over MCP and over REST's tool route (the brain's token): 'ok', 'waiting: <what>', or the error. */
    const bothWays = async (args: Record<string, unknown>) => {
      const mcp = await profileTool(args);
      const rest = await t.rawInject({ method: 'POST', url: TOOL_ROUTE, headers: t.auth('main_brain'), payload: args });
      const outcome = (r: { status?: string; what?: string }) => (r?.status === 'waiting_for_user' ? `waiting: ${r.what}` : 'ok');
      return { mcp: mcp.isError ? mcp.text : outcome(mcp.json), rest: rest.statusCode === 200 ? outcome(rest.json().result) : `${rest.statusCode} ${rest.json().code}: ${rest.json().message}` };
    };
    const held = (what: string, ...problems: string[]) => {
      const w = `waiting: ${what} with what only the user may allow: ${problems.join('; ')}.`;
      return { mcp: w, rest: w };
    };
    const pendingIds = async () => ((await t.inject({ method: 'GET', url: '/api/v1/session-os/main-brain/confirmations?status=pending' })).json().confirmations as Array<{ id: string }>).map((c) => c.id);
    const ids = async () => (await profileTool({ action: 'list' })).json.profiles.map((p: { id: string }) => p.id);
    const byUser = async (profile: Record<string, unknown>) => {
      const res = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: profile });
      expect(res.statusCode).toBe(201);
      return res.json().id as string;
    };

    it('holds a new profile with any of them for the user; prompt and http hooks and http MCP servers are fine; the user confirms one', async () => {
      const project = dir();
      const before = await ids();
      // When the main brain creates a profile with something that runs commands; Then it waits for the user, naming each
      for (const [profile, problems] of [
        [{ name: 'Hooked', hooks: { PreToolUse: [asks, guard] } }, [hookMsg('hooks.PreToolUse[1]')]],
        [{ name: 'Served', tools: { mcp_servers: { docs, github } } }, [mcpMsg('github')]],
        [{ name: 'Auto', auto_apply_dir: project }, [dirMsg(project)]],
        [{ name: 'All', hooks: { SessionStart: [guard] }, tools: { mcp_servers: { github } }, auto_apply_dir: project }, [hookMsg('hooks.SessionStart[0]'), mcpMsg('github'), dirMsg(project)]],
      ] as const) {
        expect([profile.name, await bothWays({ action: 'create', profile })]).toEqual([profile.name, held(`Save a new Agent Profile "${profile.name}" (create)`, ...problems)]);
      }
      // And nothing was saved or written
      expect(await ids()).toEqual(before);
      expect(readdirSync(project)).toEqual([]);
      // When its profile only asks a model or calls URLs; Then it is created at once
      const fine = await profileTool({ action: 'create', profile: { name: 'Asks', hooks: { PreToolUse: [asks, { type: 'http', url: 'https://hooks.example/pre' }] }, tools: { mcp_servers: { docs } } } });
      expect(fine.json.profile).toMatchObject({ id: 'asks', tools: { mcp_servers: { docs } } });
      // When the user confirms the first one; Then it is saved as the brain asked, with its command hook
      const [first] = await pendingIds();
      expect(await answer(first, 'confirm')).toMatchObject({ outcome: { ok: true, result: { profile: { id: 'hooked', hooks: { PreToolUse: [expect.objectContaining(asks), expect.objectContaining(guard)] } } } } });
      expect(await ids()).toEqual([...before, 'asks', 'hooked']);
    });

    it('keeps what the user put there, holds what it would add or change for the user, and may remove it', async () => {
      // Given a profile the user made with a command hook, an MCP server started by a command and an auto_apply_dir
      const project = dir();
      const id = await byUser({ name: 'Guarded', target_runtime: 'claude-code', hooks: { PreToolUse: [guard] }, tools: { mcp_servers: { github } }, auto_apply_dir: project });
      // When the main brain changes something else, or sends back what is there; Then that runs at once
      for (const profile of [
        { description: 'Guards Bash' },
        { hooks: { PreToolUse: [{ ...guard }, asks] }, tools: { mcp_servers: { github: { ...github }, docs } }, auto_apply_dir: project },
      ]) {
        expect(await bothWays({ action: 'update', profile_id: id, profile })).toEqual({ mcp: 'ok', rest: 'ok' });
      }
      expect((await profileTool({ action: 'remember', profile_id: id, text: 'Run the tests first.' })).isError).toBe(false);
      expect(await pendingIds()).toEqual([]);
      // When it adds or changes what runs; Then it waits for the user
      const elsewhere = dir();
      for (const [profile, problem] of [
        [{ hooks: { PreToolUse: [guard, asks, { type: 'command', command: './more.sh' }] } }, hookMsg('hooks.PreToolUse[2]', './more.sh')],
        [{ hooks: { PreToolUse: [{ ...guard, command: './other.sh' }, asks] } }, hookMsg('hooks.PreToolUse[0]', './other.sh')],
        [{ hooks: { PreToolUse: [{ ...guard, matcher: '.*' }, asks] } }, hookMsg('hooks.PreToolUse[0]')],
        [{ hooks: { PostToolUse: [guard] } }, hookMsg('hooks.PostToolUse[0]')],
        [{ tools: { mcp_servers: { github: { env: { LD_PRELOAD: '/tmp/evil.so' } } } } }, mcpMsg('github')],
        [{ tools: { mcp_servers: { github: { args: [] } } } }, mcpMsg('github', 'github-mcp')],
        [{ tools: { mcp_servers: { docs: { type: 'stdio', command: 'docs-mcp' } } } }, mcpMsg('docs', 'docs-mcp')],
        [{ tools: { mcp_servers: { shell: { type: 'stdio', command: 'sh' } } } }, mcpMsg('shell', 'sh')],
        [{ auto_apply_dir: elsewhere }, dirMsg(elsewhere)],
      ] as const) {
        expect([profile, await bothWays({ action: 'update', profile_id: id, profile })]).toEqual([profile, held(`Save the Agent Profile ${id} (update)`, problem)]);
      }
      // And the profile is as the user and the allowed changes left it
      const read = (await profileTool({ action: 'read', profile_id: id })).json.profile;
      expect(read).toMatchObject({ description: 'Guards Bash', hooks: { PreToolUse: [{ ...guard, timeout: 60 }, { ...asks, timeout: 60 }] }, tools: { mcp_servers: { github, docs } }, auto_apply_dir: project });
      expect(read.hooks.PostToolUse).toBeUndefined();
      expect(readdirSync(elsewhere)).toEqual([]);
      // When the user refuses them all; Then nothing changes
      for (const c of await pendingIds()) expect(await answer(c, 'refuse')).toMatchObject({ status: 'refused', outcome: null });
      expect((await profileTool({ action: 'read', profile_id: id })).json.profile).toEqual(read);
      // When it removes what runs; Then that runs at once, and putting it back waits for the user
      expect((await profileTool({ action: 'update', profile_id: id, profile: { hooks: { PreToolUse: [asks] }, auto_apply_dir: '' } })).json.profile).toMatchObject({ hooks: { PreToolUse: [asks] }, auto_apply_dir: '' });
      expect(await bothWays({ action: 'update', profile_id: id, profile: { hooks: { PreToolUse: [guard] } } })).toEqual(held(`Save the Agent Profile ${id} (update)`, hookMsg('hooks.PreToolUse[0]')));
      expect(await bothWays({ action: 'update', profile_id: id, profile: { auto_apply_dir: project } })).toEqual(held(`Save the Agent Profile ${id} (update)`, dirMsg(project)));
    });

    it('holds applying a profile that runs commands, even the user\'s own, for the user; it may preview it, and the user may apply it', async () => {
      const id = await byUser({ name: 'Guarded', target_runtime: 'claude-code', hooks: { PreToolUse: [guard] }, tools: { mcp_servers: { github } } });
      const project = dir();
      const apply = { action: 'apply', profile_id: id, dir: project, runtime: 'claude-code' };
      const what = `Apply the Agent Profile ${id} to ${JSON.stringify(project)} for claude-code, writing its runtime config files: hooks.PreToolUse[0] will run: a command hook (runs "./guard.sh"); tools.mcp_servers.github will run: an MCP server that starts a command (runs "github-mcp --read-only").`;
      expect(await bothWays(apply)).toEqual({ mcp: `waiting: ${what}`, rest: `waiting: ${what}` });
      expect(existsSync(join(project, '.claude'))).toBe(false);
      expect((await profileTool({ ...apply, preview: true })).json.preview.files.map((f: { path: string }) => f.path)).toContain('.claude/settings.json');
      // The user applying it over REST's tool route is not held
      const byUserTool = await t.inject({ method: 'POST', url: TOOL_ROUTE, payload: apply });
      expect([byUserTool.statusCode, byUserTool.json().result.applied]).toEqual([200, expect.objectContaining({ dir: project })]);
      expect(JSON.parse(readFileSync(join(project, '.claude/settings.json'), 'utf8')).hooks.PreToolUse).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh', timeout: 60 }] }]);
      // Nor is confirming the brain's (an idempotent re-apply)
      const [first] = await pendingIds();
      expect(await answer(first, 'confirm')).toMatchObject({ outcome: { ok: true, result: { applied: { dir: project } } } });
      // A profile whose hooks only ask a model is applied as before
      const asking = await byUser({ name: 'Asking', target_runtime: 'claude-code', hooks: { PreToolUse: [asks] } });
      expect((await profileTool({ action: 'apply', profile_id: asking, dir: dir(), runtime: 'claude-code' })).json.applied).toBeDefined();
    });

    it('holds importing a scanned project\'s profile that runs commands for the user; it may see the proposal', async () => {
      const project = dir();
      mkdirSync(join(project, '.claude'));
      writeFileSync(join(project, '.claude/settings.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh' }] }] } }));
      writeFileSync(join(project, '.mcp.json'), JSON.stringify({ mcpServers: { github: { command: 'github-mcp', args: [] } } }));
      const before = await ids();
      const proposal = await profileTool({ action: 'scan', dir: project, runtime: 'claude-code' });
      expect(proposal.json).toMatchObject({ saved: false, profile: { hooks: { PreToolUse: [{ type: 'command', command: './guard.sh' }] }, tools: { mcp_servers: { github: { type: 'stdio' } } } } });
      expect(await bothWays({ action: 'scan', dir: project, runtime: 'claude-code', import: true })).toEqual(
        held(`Save a new Agent Profile ${JSON.stringify(proposal.json.profile.name)} (scan)`, hookMsg('hooks.PreToolUse[0]'), mcpMsg('github', 'github-mcp')),
      );
      expect(await ids()).toEqual(before);
    });
  });
});
