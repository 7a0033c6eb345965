import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';

/**
 * What claude's hooks report, over HTTP with the hook credential, as `brainstem hook <event>` posts it: claude's own
 * events (the shapes claude 2.1.332 gives its hooks), each from a process standing for claude (its pid is checked).
 */
describe('claude hook reports (external sessions over HTTP)', () => {
  const home = tempDir('brainstem-hook-reports-home-');
  const bin = tempDir('brainstem-hook-reports-bin-');
  const outside = tempDir('brainstem-hook-reports-outside-');
  const processes: ChildProcess[] = [];
  const t = useTestApp(
    () => ({ BRAINSTEM_EXTERNAL_PERMISSION_WAIT_S: '2', BRAINSTEM_SUPERVISION_DEBOUNCE_MS: '50' }),
    {
      host: {
        get env() {
          return { ...process.env, HOME: home.path, PATH: `${bin.path}:${process.env.PATH}` };
        },
        get home() {
          return home.path;
        },
        cwd: '/',
      },
    },
  );
  let token = '';

  beforeAll(async () => {
    const res = await t.inject({ method: 'POST', url: '/api/v1/external/claude-hooks/install', payload: { scope: 'user' } });
    expect(res.statusCode).toBe(200);
    token = readFileSync(join(t.config.journal.dir, 'hook-token'), 'utf8').trim();
  });
  afterEach(async () => {
    await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload: { enabled: false } });
  });
  afterAll(() => {
    for (const p of processes) p.kill('SIGKILL');
    for (const d of [home, bin, outside]) d.remove();
  });

  /** A process standing for one claude (the hook names its pid). */
  const claudeProcess = (): number => {
    const p = spawn('sleep', ['120']);
    processes.push(p);
    return p.pid as number;
  };

  /** A claude session: its id and cwd, its transcript under ~/.claude/projects (written with a prompt and a reply). */
  const claudeSession = () => {
    const id = randomUUID();
    const dir = join(home.path, '.claude', 'projects', '-repo');
    mkdirSync(dir, { recursive: true });
    const transcript = join(dir, `${id}.jsonl`);
    const lines = [
      { type: 'queue-operation', operation: 'enqueue' },
      { type: 'user', message: { role: 'user', content: 'fix the parser' } },
      { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'On it.' }, { type: 'tool_use', name: 'Read', input: { file_path: '/repo/p.ts' } }] } },
    ];
    writeFileSync(transcript, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    return { session_id: id, transcript_path: transcript, cwd: '/repo' };
  };

  type Claude = ReturnType<typeof claudeSession>;
  const hook = (auth = token) => ({ authorization: `Bearer ${auth}` });
  const report = async (name: string, c: Claude, pid: number | null, fields: object = {}, auth = token) => {
    const res = await t.rawInject({ method: 'POST', url: `/api/v1/external/claude/events/${name}`, headers: hook(auth), payload: { event: { ...c, hook_event_name: name, ...fields }, claude_pid: pid } });
    return { status: res.statusCode, body: res.json() };
  };
  const status = async (id: string) => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` })).json();
  const decision = (waitId: string) => t.rawInject({ method: 'POST', url: `/api/v1/external/claude/waits/${waitId}`, headers: hook(), payload: {} });
  const states = async (id: string) =>
    (await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).filter((e) => e.type === 'session.state_changed').map((e) => (e.data as { to: string }).to);

  describe('the hook credential', () => {
    it('Given the hook token, Then it is a hook, and may not act as the user or the brain (REST, MCP) nor report as such with another token', async () => {
      const whoami = await t.rawInject({ method: 'GET', url: '/api/v1/auth/whoami', headers: hook() });
      expect(whoami.json()).toEqual({ principal: { kind: 'hook' } });
      for (const [method, url] of [
        ['GET', '/api/v1/coding-sessions'],
        ['POST', '/api/v1/session-os/main-brain/autonomous'],
        ['GET', '/api/v1/session-os/main-brain/tools'],
        ['POST', '/api/v1/external/claude-hooks/install'],
        ['GET', '/api/v1/external/claude-agents'],
      ] as const) {
        const res = await t.rawInject({ method, url, headers: hook(), payload: method === 'POST' ? {} : undefined });
        expect([url, res.statusCode, res.json().code]).toEqual([url, 403, 'permission_denied']);
      }
      const mcp = await t.rawInject({
        method: 'POST',
        url: '/mcp',
        headers: { ...hook(), accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      expect(mcp.statusCode).toBe(403);
      const asBrain = await report('SessionStart', claudeSession(), null, {}, t.tokenOf('main_brain'));
      expect(asBrain.status).toBe(403);
    });

    it('Given a rotated hook token, Then the old one is refused and the file holds the new one the hooks read', async () => {
      const rotated = await t.inject({ method: 'POST', url: '/api/v1/auth/rotate', payload: { principal: 'hook' } });
      expect(rotated.statusCode).toBe(200);
      expect((await t.rawInject({ method: 'GET', url: '/api/v1/auth/whoami', headers: hook() })).statusCode).toBe(401);
      token = readFileSync(join(t.config.journal.dir, 'hook-token'), 'utf8').trim();
      expect(token).toBe(rotated.json().token);
      expect((await t.rawInject({ method: 'GET', url: '/api/v1/auth/whoami', headers: hook() })).json().principal.kind).toBe('hook');
    });
  });

  describe('events and states', () => {
    it('Given malformed reports, Then each is refused naming what was wrong, and no session is made of them', async () => {
      const before = (await t.inject({ method: 'GET', url: '/api/v1/coding-sessions' })).json().sessions.length;
      const c = claudeSession();
      expect(await report('Stop', { ...c, cwd: 'relative' }, null)).toMatchObject({ status: 400, body: { code: 'invalid_input', message: expect.stringContaining('event.cwd') } });
      expect(await report('Bogus', c, null)).toMatchObject({ status: 400, body: { message: expect.stringContaining('event: must be one of') } });
      expect(await report('Stop', c, null, { hook_event_name: 'SessionEnd' })).toMatchObject({ status: 400 });
      const noEvent = await t.rawInject({ method: 'POST', url: '/api/v1/external/claude/events/Stop', headers: hook(), payload: { claude_pid: 5 } });
      expect(noEvent.statusCode).toBe(400);
      expect((await t.inject({ method: 'GET', url: '/api/v1/coding-sessions' })).json().sessions.length).toBe(before);
    });

    it("Given a claude session's events, Then its external session follows them: working, 待拍板, 待授权, 待处理, exited; its output is its transcript", async () => {
      const c = claudeSession();
      const pid = claudeProcess();
      const started = await report('SessionStart', c, pid, { source: 'startup', model: 'claude-opus-5-5' });
      expect(started).toMatchObject({ status: 200, body: { session: { state: 'working' }, wait: null } });
      const id = started.body.session.id;
      expect(await status(id)).toMatchObject({ origin: 'external', runtime: 'claude-code', cwd: '/repo', pid, excluded: true, external: { claude_session_id: c.session_id, transcript_path: c.transcript_path } });
      await report('UserPromptSubmit', c, pid, { prompt: 'fix the parser', prompt_id: 'p1' });
      await report('PreToolUse', c, pid, { tool_name: 'AskUserQuestion', tool_input: { questions: [{ question: 'Which parser?' }] }, tool_use_id: 't1' });
      expect(await status(id)).toMatchObject({ state: 'pending_decision', state_label: '待拍板', pending: { kind: 'question', question: 'Which parser?' } });
      await report('PreToolUse', c, pid, { tool_name: 'Bash', tool_input: { command: 'ls' } });
      await report('PermissionRequest', c, pid, { tool_name: 'Bash', tool_input: { command: 'ls' }, permission_suggestions: [] });
      expect(await status(id)).toMatchObject({ state: 'pending_authorization', pending: { kind: 'permission', tool: 'Bash', input: { command: 'ls' } } });
      // claude's own prompt shown: no second request
      await report('Notification', c, pid, { message: 'Claude needs your permission to use Bash', notification_type: 'permission_prompt' });
      expect((await status(id)).queued_permissions).toEqual([]);
      await report('Stop', c, pid, { stop_hook_active: false, last_assistant_message: 'Parsed.' });
      expect(await status(id)).toMatchObject({ state: 'pending_handling', state_label: '待处理' });
      await report('SessionEnd', c, pid, { reason: 'other' });
      expect(await status(id)).toMatchObject({ state: 'exited', exit_reason: 'exited', pid });
      expect(await states(id)).toEqual(['working', 'pending_decision', 'working', 'pending_authorization', 'pending_handling', 'exited']);
      const output = await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}/output` });
      expect(output.json().lines).toEqual(['user: fix the parser', 'claude: On it.', 'claude uses Read: {"file_path":"/repo/p.ts"}']);
    });

    it('Given a transcript outside ~/.claude/projects (named, or through a symlink), Then it is not bound and nothing is read from it', async () => {
      // Named outright: the transcript of that claude session's id, but outside
      const direct = claudeSession();
      const named = { ...direct, transcript_path: join(outside.path, `${direct.session_id}.jsonl`) };
      writeFileSync(named.transcript_path, JSON.stringify({ type: 'user', message: { content: 'the secret' } }) + '\n');
      const a = await report('SessionStart', named, null);
      expect((await status(a.body.session.id)).external.transcript_path).toBeNull();
      // Through a folder under ~/.claude/projects that is a symlink to elsewhere
      const linked = claudeSession();
      const link = join(home.path, '.claude', 'projects', 'elsewhere');
      symlinkSync(outside.path, link);
      const viaLink = { ...linked, transcript_path: join(link, `${linked.session_id}.jsonl`) };
      writeFileSync(viaLink.transcript_path, JSON.stringify({ type: 'user', message: { content: 'the secret' } }) + '\n');
      const b = await report('SessionStart', viaLink, null);
      expect((await status(b.body.session.id)).external.transcript_path).toBeNull();
      expect((await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${b.body.session.id}/output` })).json().lines).toEqual([]);
    });
  });

  describe('binding a report to its claude', () => {
    it('Given a session bound to a running claude, Then another process may not report for it, nor that claude for another session, until its SessionStart names a new one', async () => {
      const c = claudeSession();
      const pid = claudeProcess();
      const first = await report('SessionStart', c, pid);
      const other = claudeProcess();
      expect(await report('Stop', c, other)).toMatchObject({ status: 403, body: { code: 'permission_denied', message: expect.stringContaining(`bound to claude process ${pid}`) } });
      expect(await report('Stop', { ...c, transcript_path: join(home.path, '.claude', 'projects', '-repo', 'x.jsonl') }, pid)).toMatchObject({ status: 403 });
      const next = claudeSession();
      expect(await report('UserPromptSubmit', next, pid, { prompt: 'x' })).toMatchObject({ status: 403, body: { message: expect.stringContaining('speaks for claude session') } });
      // /clear: a SessionStart of the same process for a new session; the one before it has ended
      const cleared = await report('SessionStart', next, pid, { source: 'clear' });
      expect(cleared.status).toBe(200);
      expect(await status(first.body.session.id)).toMatchObject({ state: 'exited', exit_reason: 'exited' });
    });

    it('Given its claude process ends, Then the session exits (vanished); When the session is resumed by a new claude, Then it is the same session, working again', async () => {
      const c = claudeSession();
      const p = spawn('sleep', ['120']);
      processes.push(p);
      const id = (await report('SessionStart', c, p.pid as number)).body.session.id;
      p.kill('SIGKILL');
      await waitFor(async () => (await status(id)).state === 'exited', { timeoutMs: 20000, what: 'the session exited' });
      expect((await status(id)).exit_reason).toBe('vanished');
      const pid = claudeProcess();
      const resumed = await report('SessionStart', c, pid, { source: 'resume' });
      expect(resumed.body.session).toEqual({ id, alias: expect.any(String), state: 'working' });
      expect(await status(id)).toMatchObject({ pid, exit_reason: null });
    });
  });

  describe('supervision', () => {
    const supervise = (payload: object) => t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/autonomous', payload });

    it("Given supervision on but the session not included, Then its Stop does not wait; the brain's scope `all` does not include it; the user's choice does", async () => {
      const c = claudeSession();
      const pid = claudeProcess();
      const id = (await report('SessionStart', c, pid)).body.session.id;
      await supervise({ enabled: true });
      expect((await report('Stop', c, pid)).body.wait).toBeNull();
      const brainScope = await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/set_supervision_scope', headers: t.auth('main_brain'), payload: { mode: 'all' } });
      expect(brainScope.statusCode).toBe(200);
      expect((await status(id)).excluded).toBe(true);
      const mine = await t.inject({ method: 'PATCH', url: `/api/v1/coding-sessions/${id}/supervision`, payload: { excluded: false } });
      expect(mine.json().supervised).toBe(true);
      await report('UserPromptSubmit', c, pid, { prompt: 'go' });
      const stop = await report('Stop', c, pid);
      expect(stop.body.wait).toEqual({ id: expect.stringMatching(/^hw_/), timeout_s: 180 });
    });

    it('Given a supervised session whose Stop waits, When a message is sent to it, Then the hook gets it to continue with; a second one finds no hook waiting; a stop is refused', async () => {
      await supervise({ enabled: true, include_external: true });
      const c = claudeSession();
      const pid = claudeProcess();
      const id = (await report('SessionStart', c, pid)).body.session.id;
      expect((await status(id)).excluded).toBe(false);
      const { wait } = (await report('Stop', c, pid, { last_assistant_message: 'first pass done' })).body;
      const waiting = decision(wait.id);
      const sent = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/messages`, payload: { text: 'now the tests' } });
      expect(sent.json()).toMatchObject({ state: 'working' });
      expect((await waiting).json()).toEqual({ decision: { kind: 'continue', text: 'now the tests' } });
      const again = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/messages`, payload: { text: 'and docs' } });
      expect(again.json()).toMatchObject({ code: 'hook_not_waiting' });
      expect((await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/stop`, payload: {} })).json()).toMatchObject({ code: 'session_external' });
      expect((await status(id)).state).toBe('working');
    });

    it('Given a Stop waiting, When supervision turns off, Then the hook is let go with no decision (claude stops)', async () => {
      await supervise({ enabled: true, include_external: true });
      const c = claudeSession();
      const pid = claudeProcess();
      await report('SessionStart', c, pid);
      const { wait } = (await report('Stop', c, pid)).body;
      const waiting = decision(wait.id);
      await supervise({ enabled: false });
      expect((await waiting).json()).toEqual({ decision: null });
    });

    it("Given a supervised session's PermissionRequest, Then an allow its profile denies is refused, a deny reaches the hook, and once its wait ran out the request is not answerable through Brainstem", async () => {
      await supervise({ enabled: true, include_external: true });
      const c = claudeSession();
      const pid = claudeProcess();
      const id = (await report('SessionStart', c, pid)).body.session.id;
      const asked = await report('PermissionRequest', c, pid, { tool_name: 'Bash', tool_input: { command: 'rm -rf build' } });
      expect(asked.body.wait).toEqual({ id: expect.any(String), timeout_s: 2 });
      const waiting = decision(asked.body.wait.id);
      const allow = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/permission`, payload: { decision: 'allow' } });
      expect(allow.json()).toMatchObject({ code: 'denied_by_profile', details: { rule: 'Bash(rm -rf *)' } });
      const deny = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/permission`, payload: { decision: 'deny', reason: 'not the build folder' } });
      expect(deny.statusCode).toBe(200);
      expect((await waiting).json()).toEqual({ decision: { kind: 'permission', behavior: 'deny', message: 'not the build folder' } });

      const later = await report('PermissionRequest', c, pid, { tool_name: 'Bash', tool_input: { command: 'ls' } });
      expect((await decision(later.body.wait.id)).json()).toEqual({ decision: null });
      const late = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/permission`, payload: { decision: 'allow' } });
      expect(late.json()).toMatchObject({ code: 'hook_not_waiting' });
    });
  });

  describe("claude's agents", () => {
    it('Given a claude whose agents command lists a background agent, Then the route lists it; adopting it makes its external session, supervised', async () => {
      const sid = randomUUID();
      const fake = join(bin.path, 'claude');
      const agent = { pid: process.pid, id: sid.slice(0, 8), cwd: '/repo', kind: 'background', startedAt: 1795705819059, sessionId: sid, name: 'say hi', status: 'idle', state: 'blocked' };
      writeFileSync(fake, `#!/bin/sh\n[ "$1 $2" = "agents --json" ] && printf '%s' '${JSON.stringify([agent])}' && exit 0\nexit 1\n`);
      chmodSync(fake, 0o755);
      const listed = await t.inject({ method: 'GET', url: '/api/v1/external/claude-agents' });
      expect(listed.json()).toEqual({ available: true, agents: [expect.objectContaining({ id: agent.id, session_id: sid, state: 'blocked', needs: 'you', brainstem_session: null })] });
      const adopted = await t.inject({ method: 'POST', url: `/api/v1/external/claude-agents/${agent.id}/adopt` });
      expect(adopted.json()).toMatchObject({ origin: 'external', supervised: true, state: 'working', external: { claude_session_id: sid } });
      expect((await t.inject({ method: 'GET', url: '/api/v1/external/claude-agents' })).json().agents[0].brainstem_session).toBe(adopted.json().id);
      expect((await t.inject({ method: 'POST', url: '/api/v1/external/claude-agents/nope/adopt' })).json()).toMatchObject({ code: 'not_found' });
    });

    it('Given a claude without the agents command, Then the route says so', async () => {
      writeFileSync(join(bin.path, 'claude'), "#!/bin/sh\necho \"error: unknown command 'agents'\" >&2\nexit 1\n");
      expect((await t.inject({ method: 'GET', url: '/api/v1/external/claude-agents' })).json()).toEqual({ available: false, reason: expect.stringContaining("unknown command 'agents'") });
    });
  });
});
