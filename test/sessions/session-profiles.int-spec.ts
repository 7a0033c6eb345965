import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { emitProfile } from '../../src/profiles/emitters';
import { ProfilesService } from '../../src/profiles/profiles.service';
import { CLAUDE_ARGS } from '../../src/sessions/runtimes/claude-code.runtime';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { useTestApp } from '../support/use-test-app';
import { call, httpClient } from '../mcp/mcp-client';
import { waitFor } from '../support/wait-for';
import { AgentHomes, FAKE_BIN, WORKERS, WorkerReaper } from '../support/workers';

type Status = { id: string; cwd: string; runtime: string; profile_id: string | null; pid: number | null; state: string };

/** Sessions start with their profile: the fake claude reports the argv it was started with. */
describe('coding sessions started with their profile', () => {
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-profile-cwd-');
  const other = tempDir('brainstem-profile-other-');
  const scratch = tempDir('brainstem-profile-argv-');
  const PATH = `${FAKE_BIN}:${process.env.PATH}`;
  const quiet = { command: process.execPath, args: [join(WORKERS, 'quiet.js')] };
  let argvFiles = 0;

  const t = useTestApp({}, { listen: true, beforeClose: () => reaper.killAll() });
  afterEach(() => reaper.killAll());
  afterAll(() => [cwd, other, scratch].forEach((d) => d.remove()));

  const request = async (method: 'POST' | 'GET' | 'PATCH', url: string, payload?: object) => {
    const res = await t.inject({ method, url: `/api/v1${url}`, payload });
    return { status: res.statusCode, body: res.json() };
  };

  async function start(body: object): Promise<Status> {
    const res = await request('POST', '/coding-sessions', body);
    expect(res.status).toBe(201);
    reaper.track(res.body.pid);
    return res.body as Status;
  }

  /** A claude-code session whose fake claude writes its argv to a file; resolves with that argv. */
  async function startClaude(body: object): Promise<{ session: Status; argv: string[] }> {
    const file = join(scratch.path, `argv-${++argvFiles}.json`);
    const session = await start({ runtime: 'claude-code', ...body, env: { PATH, FAKE_CLAUDE_ARGV_FILE: file } });
    const argv = await waitFor(() => existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as string[]), { what: 'the fake claude argv' });
    return { session, argv };
  }

  async function createProfile(body: object): Promise<string> {
    const res = await request('POST', '/agent-profiles', body);
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  /** The values of a flag: one for plain flags, all up to the next flag for variadic ones. */
  function flag(argv: string[], name: string): string[] | undefined {
    const at = argv.indexOf(name);
    if (at < 0) return undefined;
    const rest = argv.slice(at + 1);
    const end = rest.findIndex((a) => a.startsWith('--'));
    return end < 0 ? rest : rest.slice(0, end);
  }

  it('passes a profile to claude by flags from a per-session directory and leaves the cwd untouched', async () => {
    const id = await createProfile({
      name: 'Planner',
      model: { model: 'claude-opus-4-1', fallback: ['claude-sonnet-4-5'] },
      instructions: { system_prompt: 'Plan only; never edit.', files: ['docs/STYLE.md'] },
      tools: { builtin: ['Read', 'Grep', 'Bash(git diff:*)'], deny: ['WebFetch'], mcp_servers: { docs: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } },
      permissions: { mode: 'plan', deny: ['Bash(rm:*)'], allow: ['Read'] },
    });
    const { session, argv } = await startClaude({ profile_id: id, cwd: cwd.path });
    expect(session.profile_id).toBe(id);
    const dir = join(t.config.journal.dir, 'session-config', session.id);

    // The protocol flags stay; the profile's come after them.
    expect(argv.slice(0, CLAUDE_ARGS.length + 1)).toEqual([...CLAUDE_ARGS, '--allowedTools']);
    expect(flag(argv, '--allowedTools')).toEqual(['Read', 'Grep', 'Bash(git diff:*)']);
    expect(flag(argv, '--disallowedTools')).toEqual(['Bash(rm:*)', 'WebFetch']);
    expect(flag(argv, '--settings')).toEqual([`${dir}/.claude/settings.json`]);
    expect(flag(argv, '--mcp-config')).toEqual([`${dir}/.mcp.json`]);
    expect(flag(argv, '--model')).toEqual(['claude-opus-4-1']);
    expect(flag(argv, '--fallback-model')).toEqual(['claude-sonnet-4-5']);
    expect(flag(argv, '--permission-mode')).toEqual(['plan']);
    expect(flag(argv, '--append-system-prompt')).toEqual(['Plan only; never edit.\n\n@docs/STYLE.md']);

    // The files are the emitter's, in the session's directory; settings lose only `agent` (passed by flags).
    const profile = await t.app.get(ProfilesService).forApply(id);
    const emitted = emitProfile('claude-code', profile.doc, { profileId: id, serviceUrl: t.url, skills: [] });
    for (const file of emitted.files) {
      const written = readFileSync(join(dir, file.path), 'utf8');
      if (file.path === '.claude/settings.json') {
        const { agent, ...rest } = JSON.parse(file.content) as Record<string, unknown>;
        expect(agent).toBe(id);
        expect(JSON.parse(written)).toEqual(rest);
      } else {
        expect(written).toBe(file.content);
      }
    }
    const settings = JSON.parse(readFileSync(join(dir, '.claude/settings.json'), 'utf8'));
    expect(settings).toMatchObject({ model: 'claude-opus-4-1', permissions: { defaultMode: 'plan', allow: ['Read', 'mcp__brainstem'], deny: ['Bash(rm:*)', 'WebFetch'] } });
    const mcp = JSON.parse(readFileSync(join(dir, '.mcp.json'), 'utf8'));
    expect(mcp.mcpServers.docs).toEqual({ type: 'http', url: 'http://127.0.0.1:9/mcp' });
    expect(mcp.mcpServers.brainstem).toEqual({ type: 'http', url: `${t.url}/mcp`, headers: { 'X-Brainstem-Session': '${BRAINSTEM_SESSION_ID:-}', Authorization: 'Bearer ${BRAINSTEM_TOKEN:-}' } });

    expect(readdirSync(cwd.path)).toEqual([]);
  });

  it('passes a profile to opencode as a config file in the session directory (OPENCODE_CONFIG) with its agent selected, on every turn', async () => {
    const id = await createProfile({
      name: 'Diff Reviewer',
      description: 'Reviews diffs',
      model: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
      instructions: { system_prompt: 'Review only; never edit.' },
      tools: { mcp_servers: { docs: { type: 'stdio', command: 'docs-mcp', env: { DOCS_TOKEN: '${DOCS_TOKEN}' } } } },
      permissions: { mode: 'plan', deny: ['Bash(rm:*)'] },
    });
    const homes = new AgentHomes();
    const home = homes.create('brainstem-profile-opencode-');
    try {
      const session = await start({ runtime: 'opencode', cwd: cwd.path, profile_id: id, prompt: 'hello', args: ['--model', 'x/y'], env: { PATH, XDG_DATA_HOME: home } });
      const turns = () => (existsSync(join(home, 'config')) ? readFileSync(join(home, 'config'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : []);
      await waitFor(async () => (await request('GET', `/coding-sessions/${session.id}`)).body.state === 'pending_handling', { what: 'the first turn to end' });
      expect((await request('POST', `/coding-sessions/${session.id}/messages`, { text: 'again' })).status).toBe(200);
      await waitFor(() => turns().length === 2 && AgentHomes.pids(home).length === 2, { what: 'the second turn' });

      const dir = join(t.config.journal.dir, 'session-config', session.id);
      const [first, second] = turns();
      expect(first.agent).toBe(id);
      expect(first.config).toEqual(JSON.parse(readFileSync(join(dir, 'opencode.json'), 'utf8')));
      expect(first.config).toMatchObject({
        default_agent: id,
        agent: {
          [id]: {
            description: 'Reviews diffs',
            mode: 'primary',
            model: 'anthropic/claude-sonnet-4-5',
            permission: { edit: 'deny', bash: { '*': 'ask', 'rm *': 'deny' } },
            prompt: 'Review only; never edit.',
          },
        },
        mcp: {
          docs: { type: 'local', command: ['docs-mcp'], environment: { DOCS_TOKEN: '{env:DOCS_TOKEN}' }, enabled: true },
          brainstem: { type: 'remote', url: `${t.url}/mcp`, enabled: true },
        },
      });
      expect(second).toEqual(first);
      // The profile's flag comes before the request's args, which can still override it.
      const argv = readFileSync(join(home, 'argv'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
      expect(argv[0]).toEqual(['run', '--format', 'json', '--agent', id, '--model', 'x/y']);
      const created = (await t.app.get<Journal>(JOURNAL).readStream(`session-${session.id}`))[0];
      expect(created.data).toMatchObject({ profile_args: ['--agent', id], profile_env: { OPENCODE_CONFIG: join(dir, 'opencode.json') } });
      expect(readdirSync(cwd.path)).toEqual([]);
    } finally {
      homes.cleanUp();
    }
  });

  it('gives an opencode session the same profile config after a restart (journaled, not re-derived)', async () => {
    const journal = tempDir('brainstem-profile-restart-');
    const homes = new AgentHomes();
    const home = homes.create('brainstem-profile-opencode-');
    const dirs = { BRAINSTEM_JOURNAL_DIR: join(journal.path, 'journal'), BRAINSTEM_PROFILES_DIR: join(journal.path, 'profiles') };
    let first: TestApp | null = await startTestApp(dirs, { listen: true });
    let second: TestApp | null = null;
    const records = () => readFileSync(join(home, 'config'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { agent: string; config: object });
    const state = async (app: TestApp, id: string) => (await app.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json().state;
    try {
      const created = await first.inject({ method: 'POST', url: '/api/v1/coding-sessions', payload: { runtime: 'opencode', cwd: cwd.path, profile_id: 'researcher', prompt: 'hello', env: { PATH, XDG_DATA_HOME: home } } });
      expect(created.statusCode).toBe(201);
      const id = created.json().id as string;
      await waitFor(async () => (await state(first!, id)) === 'pending_handling', { what: 'the first turn to end' });
      await first.close();
      first = null;

      second = await startTestApp(dirs, { listen: true });
      expect((await second.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/messages`, payload: { text: 'again' } })).statusCode).toBe(200);
      await waitFor(() => records().length === 2 && AgentHomes.pids(home).length === 2, { what: 'the turn after the restart' });
      const [before, after] = records();
      expect(before).toMatchObject({ agent: 'researcher', config: { default_agent: 'researcher', agent: { researcher: { mode: 'primary' } } } });
      expect(after).toEqual(before);
    } finally {
      await first?.close();
      await second?.close();
      homes.cleanUp();
      journal.remove();
    }
  });

  it('starts a session with bypassPermissions only from a personal profile', async () => {
    // Given a shared profile with bypassPermissions; Then a session is refused
    const id = await createProfile({ name: 'Unfenced', permissions: { mode: 'bypassPermissions' } });
    const refused = await request('POST', '/coding-sessions', { runtime: 'claude-code', env: { PATH }, cwd: cwd.path, profile_id: id });
    expect(refused).toMatchObject({ status: 422, body: { code: 'profile_has_errors', details: { errors: [expect.objectContaining({ code: 'bypass_permissions_shared' })] } } });
    // When its owner makes it personal; Then the session starts in that mode
    expect((await t.inject({ method: 'PATCH', url: `/api/v1/agent-profiles/${id}`, payload: { scope: 'personal' } })).statusCode).toBe(200);
    const { argv } = await startClaude({ profile_id: id, cwd: cwd.path });
    expect(flag(argv, '--permission-mode')).toEqual(['bypassPermissions']);
  });

  it('journals the profile flags (a resume after a restart reuses them: restart.int-spec)', async () => {
    const { session, argv } = await startClaude({ profile_id: 'code-reviewer', cwd: cwd.path });
    const created = (await t.app.get<Journal>(JOURNAL).readStream(`session-${session.id}`))[0];
    expect(created.type).toBe('session.created');
    expect((created.data as { profile_args: string[] }).profile_args).toEqual(argv.slice(CLAUDE_ARGS.length));
    expect(flag(argv, '--permission-mode')).toEqual(['plan']);
    expect(readdirSync(cwd.path)).toEqual([]);
  });

  it("uses the profile's default_cwd when the request gives no cwd; an explicit cwd wins", async () => {
    const id = await createProfile({ name: 'Rooted', default_cwd: other.path });
    const byDefault = await start({ ...quiet, profile_id: id });
    expect(byDefault).toMatchObject({ cwd: other.path, profile_id: id, runtime: 'command' });
    const explicit = await start({ ...quiet, profile_id: id, cwd: cwd.path });
    expect(explicit.cwd).toBe(cwd.path);
  });

  it('uses the profile bound to the cwd or an ancestor, else the default; records it for command sessions', async () => {
    const sub = join(cwd.path, 'pkg');
    mkdirSync(sub);
    try {
      expect((await start({ ...quiet, cwd: other.path })).profile_id).toBe('coding-assistant');
      expect((await request('POST', '/agent-profiles/project-binding', { project_dir: cwd.path, profile_id: 'security-auditor' })).status).toBeLessThan(300);
      const bound = await start({ ...quiet, cwd: sub });
      expect(bound).toMatchObject({ runtime: 'command', profile_id: 'security-auditor' });
      expect(readdirSync(join(t.config.journal.dir, 'session-config')).includes(bound.id)).toBe(false);
      expect((await start({ ...quiet, cwd: sub, profile_id: 'researcher' })).profile_id).toBe('researcher');
      expect((await request('POST', '/agent-profiles/researcher/set-default')).status).toBeLessThan(300);
      expect((await start({ ...quiet, cwd: other.path })).profile_id).toBe('researcher');
    } finally {
      await request('POST', '/agent-profiles/project-binding', { project_dir: cwd.path, profile_id: null });
      await request('POST', '/agent-profiles/coding-assistant/set-default');
    }
  });

  it('resolve_permission checks the denies of the profile the session resolved to (bound, no profile_id), as they are now', async () => {
    const id = await createProfile({ name: 'No Removals', permissions: { deny: [] } });
    await request('POST', '/agent-profiles/project-binding', { project_dir: other.path, profile_id: id });
    const brain = await httpClient(t.url, { token: t.tokenOf('main_brain') });
    try {
      const s = await start({ ...quiet, cwd: other.path });
      expect(s.profile_id).toBe(id);
      const asked = await request('POST', `/coding-sessions/${s.id}/signals`, { type: 'permission_request', tool: 'Bash', input: { command: 'rm -rf build' } });
      expect(asked.body.state).toBe('pending_authorization');
      // A deny added while the request waits: a request it matched on arrival would have been denied then, never pending.
      expect((await request('PATCH', `/agent-profiles/${id}`, { permissions: { deny: ['Bash(rm:*)'] } })).status).toBe(200);
      const allowed = await call(brain, 'resolve_permission', { session: s.id, decision: 'allow' });
      expect(allowed.isError).toBe(true);
      expect(allowed.text).toContain(`profile ${id} denies Bash (rule Bash(rm:*))`);
      // A request queued behind it is checked by its own input when named, the oldest otherwise.
      const queued = await request('POST', `/coding-sessions/${s.id}/signals`, { type: 'permission_request', tool: 'Bash', input: { command: 'ls' } });
      const ls = queued.body.queued_permissions[0].request_id;
      expect((await call(brain, 'resolve_permission', { session: s.id, decision: 'allow' })).isError).toBe(true);
      const allowedLs = await call(brain, 'resolve_permission', { session: s.id, decision: 'allow', request_id: ls });
      expect(allowedLs.isError).toBe(false);
      // The other request is the one pending now, and none is queued behind it (an empty queue is left out of the answer).
      expect(JSON.parse(allowedLs.text)).toMatchObject({ pending: { input: { command: 'rm -rf build' } } });
      expect(JSON.parse(allowedLs.text)).not.toHaveProperty('queued_permissions');
    } finally {
      await brain.close();
      await request('POST', '/agent-profiles/project-binding', { project_dir: other.path, profile_id: null });
    }
  });

  describe('refuses before journaling or spawning anything', () => {
    const refused = async (body: object, status: number, code: string, message: RegExp) => {
      const journal = t.app.get<Journal>(JOURNAL);
      const before = journal.head().seq;
      const res = await request('POST', '/coding-sessions', body);
      expect(res.status).toBe(status);
      expect(res.body).toMatchObject({ code, message: expect.stringMatching(message) });
      // Sessions started by earlier tests may still journal (exits, progress); a refused create starts no stream.
      const during = await journal.readAll(before, 1000);
      expect(during.filter((e) => e.version === 1)).toEqual([]);
      return res.body;
    };

    it('an unknown profile', async () => {
      await refused({ ...quiet, cwd: cwd.path, profile_id: 'no-such-profile' }, 400, 'unknown_profile', /profile_id: no profile no-such-profile/);
    });

    it('no cwd and no default_cwd', async () => {
      await refused({ ...quiet }, 400, 'cwd_required', /cwd: required \(profile coding-assistant has no default_cwd\)/);
    });

    it('a default_cwd that does not exist', async () => {
      const id = await createProfile({ name: 'Lost', default_cwd: join(other.path, 'gone') });
      await refused({ ...quiet, profile_id: id }, 400, 'cwd_not_a_directory', /default_cwd of profile lost: .*gone does not exist/);
    });

    it('a claude-code session whose profile has lint errors (422 with the findings)', async () => {
      const id = await createProfile({ name: 'Squatter', tools: { mcp_servers: { brainstem: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } } });
      const configs = () => (existsSync(join(t.config.journal.dir, 'session-config')) ? readdirSync(join(t.config.journal.dir, 'session-config')).length : 0);
      const [configsBefore, cwdBefore] = [configs(), readdirSync(cwd.path)];
      const body = await refused({ runtime: 'claude-code', env: { PATH }, cwd: cwd.path, profile_id: id }, 422, 'profile_has_errors', /profile squatter has 1 error\(s\), so the session was not started: .*brainstem/);
      expect(body.details.errors).toEqual([expect.objectContaining({ path: expect.stringContaining('brainstem') })]);
      expect(configs()).toBe(configsBefore);
      expect(readdirSync(cwd.path)).toEqual(cwdBefore);
    });

    it('an opencode session whose profile has lint errors (422: its config file would carry them too)', async () => {
      const id = await createProfile({ name: 'Squatter Three', tools: { mcp_servers: { brainstem: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } } });
      await refused({ runtime: 'opencode', env: { PATH }, cwd: cwd.path, profile_id: id }, 422, 'profile_has_errors', /profile squatter-three has 1 error\(s\)/);
    });

    it('a codex session whose profile has lint errors (422: its flags would carry them too)', async () => {
      const id = await createProfile({ name: 'Squatter Two', tools: { mcp_servers: { brainstem: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } } });
      const body = await refused({ runtime: 'codex', env: { PATH }, cwd: cwd.path, profile_id: id }, 422, 'profile_has_errors', /profile squatter-two has 1 error\(s\), so the session was not started: .*brainstem/);
      expect(body.details.errors).toEqual([expect.objectContaining({ path: expect.stringContaining('brainstem') })]);
    });
  });
});
