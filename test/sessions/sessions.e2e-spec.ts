import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { DEFAULT_STOP_GRACE_MS, SessionsService } from '../../src/sessions/sessions.service';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WORKERS, WorkerReaper } from '../support/workers';

describe('coding sessions over HTTP: bad input and limits', () => {
  let journal: Journal;
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-cwd-');
  const quiet = { command: process.execPath, args: [join(WORKERS, 'quiet.js')] };

  const t = useTestApp({ BRAINSTEM_MAX_SESSIONS: '2' }, { listen: true, beforeClose: () => reaper.killAll() });
  beforeAll(() => {
    journal = t.app.get<Journal>(JOURNAL);
  });
  afterAll(() => cwd.remove());

  const post = async (url: string, payload: unknown) => {
    const res = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions${url}`, payload: payload as object });
    return { status: res.statusCode, body: res.json() };
  };

  /** Malformed input is invalid_input; a runtime, command or cwd that cannot be used has its own code. */
  const rejected: [string, object, RegExp, string][] = [
    ['an unknown runtime', { runtime: 'cobol', ...quiet }, /unknown runtime "cobol"/, 'unknown_runtime'],
    ['opencode when opencode is not on PATH', { runtime: 'opencode', env: { PATH: '/nonexistent' } }, /executable opencode is not on PATH/, 'runtime_not_installed'],
    ['gemini-cli when gemini is not on PATH', { runtime: 'gemini-cli', env: { PATH: '/nonexistent' } }, /executable gemini is not on PATH/, 'runtime_not_installed'],
    ['codex when codex is not on PATH', { runtime: 'codex', env: { PATH: '/nonexistent' } }, /executable codex is not on PATH/, 'runtime_not_installed'],
    ['a missing cwd', { cwd: '/nonexistent/dir', ...quiet }, /cwd: .* does not exist or is not a directory/, 'cwd_not_a_directory'],
    ['a cwd that is a file', { cwd: join(WORKERS, 'quiet.js'), ...quiet }, /not a directory/, 'cwd_not_a_directory'],
    ['a relative cwd (relative to nothing the caller can see)', { cwd: '.', ...quiet }, /cwd: must be an absolute path, not "\."/, 'cwd_not_absolute'],
    ['an executable not on PATH', { command: 'no-such-binary-xyz' }, /not an executable on PATH/, 'command_not_executable'],
    ['a null command for the command runtime (null reads as absent)', { runtime: 'command', command: null }, /command: required for the command runtime/, 'command_required'],
    ['claude-code when claude is not on PATH', { runtime: 'claude-code', env: { PATH: '/nonexistent' } }, /executable claude is not on PATH/, 'runtime_not_installed'],
    ['auto when no agent runtime is installed', { env: { PATH: '/nonexistent' } }, /none of claude, codex, gemini, opencode/, 'runtime_not_installed'],
    ['a command for a non-command runtime', { runtime: 'claude-code', command: 'node', env: { PATH: `${FAKE_BIN}:${process.env.PATH}` } }, /only the command runtime/, 'command_not_taken'],
    ['a prompt over 64 KiB', { ...quiet, prompt: 'é'.repeat(33 * 1024) }, /^prompt: must be at most 65536 bytes/, 'invalid_input'],
    ['an unknown field', { ...quiet, colour: 'red' }, /colour/, 'invalid_input'],
    ['a non-string env value', { ...quiet, env: { A: 1 } }, /env/, 'invalid_input'],
    ['an env value with NUL', { ...quiet, env: { A: 'a\u0000b' } }, /env: must map variable names to strings \(no NUL/, 'invalid_input'],
    ['an argument with NUL', { ...quiet, args: ['1\u0000'] }, /args: must not contain NUL/, 'invalid_input'],
    ['a profile_id that is not an id', { ...quiet, profile_id: '../../etc' }, /profile_id: must be a profile id/, 'invalid_input'],
    ['a profile_id with capitals', { ...quiet, profile_id: 'Abc' }, /profile_id: must be a profile id/, 'invalid_input'],
  ];

  it.each(rejected)('rejects %s with 400, journaling and spawning nothing', async (_name, body, message, code) => {
    const before = journal.head().seq;
    const res = await post('', { cwd: cwd.path, ...body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code, message: expect.stringMatching(message) });
    expect(journal.head().seq).toBe(before);
  });

  it('reads a null prompt as absent: the worker starts with nothing sent and nothing null is journaled', async () => {
    // A worker that is still running when the prompt would be sent (a fast one exits first and hid this 500).
    const res = await post('', { cwd: cwd.path, ...quiet, prompt: null });
    expect(res.status).toBe(201);
    reaper.track(res.body.pid);
    const types = (await journal.readStream(`session-${res.body.id}`)).map((e) => e.type);
    expect(types).not.toContain('session.message_dispatched');
    // Its slot is needed by the limit test below.
    await post(`/${res.body.id}/stop`, { grace_ms: 0 });
    await waitFor(async () => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${res.body.id}` })).json().state === 'exited', { what: 'the session to stop' });
  });

  it('reads a null request_id and a null grace_ms as absent: the pending request is resolved, the stop gets the default grace', async () => {
    const res = await post('', { cwd: cwd.path, ...quiet });
    expect(res.status).toBe(201);
    reaper.track(res.body.pid);
    expect((await post(`/${res.body.id}/signals`, { type: 'permission_request', tool: 'Edit', input: { file: 'a.ts' } })).body.state).toBe('pending_authorization');
    const resolved = await post(`/${res.body.id}/permission`, { decision: 'allow', request_id: null });
    expect(resolved).toMatchObject({ status: 200, body: { state: 'working' } });
    expect((await post(`/${res.body.id}/stop`, { grace_ms: null })).status).toBe(200);
    const stop = (await journal.readStream(`session-${res.body.id}`)).find((e) => e.type === 'session.stop_requested')!.data as { at: number; deadline_at: number };
    expect(stop.deadline_at - stop.at).toBe(DEFAULT_STOP_GRACE_MS);
  });

  it('answers 404 for an unknown session id or alias', async () => {
    for (const id of ['cs_nope', 'w999']) {
      const res = await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}` });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not_found');
    }
    expect((await post('/cs_nope/signals', { type: 'turn_ended' })).status).toBe(404);
  });

  describe('with live sessions', () => {
    let id: string;

    beforeAll(async () => {
      const res = await post('', { cwd: cwd.path, ...quiet, profile_id: 'code-reviewer' });
      expect(res.status).toBe(201);
      expect(res.body.profile_id).toBe('code-reviewer');
      reaper.track(res.body.pid);
      id = res.body.id;
    });

    const badSignals: [string, object, RegExp][] = [
      ['an unknown signal type', { type: 'dance' }, /type: must be one of report_progress, notify_blocked/],
      ['a missing type', { status: 'working' }, /type: must be one of/],
      ['an unknown progress status', { type: 'report_progress', status: 'sleeping' }, /status/],
      ['a field of another signal type', { type: 'ask_human', question: 'q', reason: 'r' }, /reason/],
      ['a question over 64 KiB', { type: 'ask_human', question: 'x'.repeat(65 * 1024) }, /^question: must be at most 65536 bytes/],
      ['a non-object body', ['report_progress'], /body: must be a JSON object/],
      ['a lone surrogate over 64 KiB', { type: 'notify_blocked', reason: '\ud800'.repeat(22 * 1024) }, /^reason: must be at most 65536 bytes/],
    ];

    it.each(badSignals)('rejects %s with 400', async (_name, body, message) => {
      const before = journal.head().seq;
      const res = await post(`/${id}/signals`, body);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(message);
      expect(journal.head().seq).toBe(before);
    });

    it('maps each signal to its state and answers the session status object', async () => {
      const ask = await post(`/${id}/signals`, { type: 'ask_human', question: 'merge now?' });
      expect(ask.status).toBe(200);
      expect(ask.body).toMatchObject({ state: 'pending_decision', state_label: '待拍板', pending: { kind: 'question', question: 'merge now?' } });
      // The node that started it: this one (BRAINSTEM_NODE_ID, `local` by default).
      expect(ask.body.node).toBe('local');
      expect(Object.keys(ask.body).sort()).toEqual(
        ['id', 'alias', 'title', 'runtime', 'profile_id', 'cwd', 'node', 'state', 'state_label', 'state_since', 'excluded', 'supervised', 'pid', 'detached',
          'exit_code', 'exit_signal', 'exit_reason', 'last_progress', 'pending', 'queued_permissions', 'held', 'loop', 'usage', 'budget', 'rate_limit', 'parked', 'origin', 'external',
          'created_at', 'updated_at', 'isolation', 'work_tree', 'worktree', 'warnings', 'sandbox', 'network'].sort(),
      );
      const ctx = await post(`/${id}/signals`, { type: 'request_context', query: 'where is the spec?' });
      expect(ctx.body.state).toBe('pending_decision');
      // Read, which the session's profile (code-reviewer) does not deny: a request it denies never waits.
      const perm = await post(`/${id}/signals`, { type: 'permission_request', tool: 'Read', input: { file_path: 'a.ts' } });
      expect(perm.body).toMatchObject({ state: 'pending_authorization', pending: { kind: 'permission', tool: 'Read', input: { file_path: 'a.ts' }, request_id: expect.stringMatching(/^perm_/) } });
      const denied = await post(`/${id}/permission`, { decision: 'deny', reason: 'no' });
      expect(denied.body.state).toBe('working');
      const blocked = await post(`/${id}/signals`, { type: 'notify_blocked', reason: 'no credentials' });
      expect(blocked.body).toMatchObject({ state: 'pending_handling', pending: { kind: 'blocked', reason: 'no credentials' } });
      const progress = await post(`/${id}/signals`, { type: 'report_progress', status: 'needs_review', message: 'PR ready' });
      expect(progress.body.last_progress).toMatchObject({ status: 'needs_review', message: 'PR ready' });
      const turn = await post(`/${id}/signals`, { type: 'turn_ended' });
      expect(turn.body).toMatchObject({ state: 'pending_handling', pending: null });
      expect((await post(`/${id}/permission`, { decision: 'allow' })).status).toBe(409);
      expect((await post(`/${id}/permission`, { decision: 'maybe' })).status).toBe(400);
      const badId = await post(`/${id}/permission`, { decision: 'allow', request_id: 7 });
      expect(badId.status).toBe(400);
      expect(badId.body.message).toContain('request_id');
      const long = await post(`/${id}/messages`, { text: 'x'.repeat(65 * 1024) });
      expect(long.status).toBe(400);
      expect(long.body.message).toBe('text: must be at most 65536 bytes (64 KiB)');
    });

    it('given a held session, refuses messages with 409 session_held until the user releases it; no worker may release it', async () => {
      // The hold interrupts a command worker with SIGINT: this one stops its job and lives on (quiet.js would exit).
      const created = await post('', { cwd: cwd.path, command: process.execPath, args: [join(WORKERS, 'interruptible.js')] });
      expect(created.status).toBe(201);
      reaper.track(created.body.pid);
      const id = created.body.id;
      const lines = async (): Promise<string[]> => (await t.inject({ method: 'GET', url: `/api/v1/coding-sessions/${id}/output` })).json().lines;
      // Its SIGINT handler is in place once it says it is up.
      await waitFor(async () => (await lines()).includes('interruptible up') || undefined, { what: 'the worker up' });
      const held = await t.app.get(SessionsService).hold(id, 'loop', 'Bash(npm test) failed 5 times');
      expect(held.held).toEqual({ reason: 'loop', detail: 'Bash(npm test) failed 5 times', since: expect.any(String) });
      const refused = await post(`/${id}/messages`, { text: 'try again' });
      expect(refused).toMatchObject({ status: 409, body: { code: 'session_held', details: { reason: 'loop' } } });
      const byWorker = await t.inject({ method: 'POST', url: `/api/v1/coding-sessions/${id}/release`, headers: t.auth({ worker: id }) });
      expect(byWorker.statusCode).toBe(403);
      const released = await post(`/${id}/release`, {});
      expect(released).toMatchObject({ status: 200, body: { held: null } });
      expect((await post(`/${id}/messages`, { text: 'try again' })).status).toBe(200);
      const types = (await journal.readStream(`session-${id}`)).map((e) => e.type);
      // It was working when held: the message finds it working, with no change of state.
      expect(types.slice(-2)).toEqual(['session.released', 'session.message_dispatched']);
      expect((await post(`/${id}/release`, {})).status).toBe(200);
      expect(await lines()).toContain('interrupted: the current job stopped');
      expect((await post(`/${id}/stop`, { grace_ms: 1000 })).body.state).toBe('exited');
    });

    it('holds a tool to the same 64 KiB of UTF-8 as the REST body, journaling nothing', async () => {
      const before = journal.head().seq;
      // 65,536 characters pass the tool's schema (maxLength counts characters) but are 196,608 bytes
      const res = await t.inject({ method: 'POST', url: '/api/v1/session-os/main-brain/tools/send_to_session', payload: { session: id, text: '€'.repeat(65536) } });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain('text: must be at most 65536 bytes');
      expect(journal.head().seq).toBe(before);
    });

    it('refuses more live sessions than BRAINSTEM_MAX_SESSIONS with 429, and frees a slot on exit', async () => {
      const second = await post('', { cwd: cwd.path, ...quiet });
      expect(second.status).toBe(201);
      reaper.track(second.body.pid);
      const before = journal.head().seq;
      const third = await post('', { cwd: cwd.path, ...quiet });
      expect(third.status).toBe(429);
      expect(third.body.code).toBe('max_sessions_reached');
      expect(journal.head().seq).toBe(before);
      const stopped = await post(`/${second.body.id}/stop`, { grace_ms: 1000 });
      expect(stopped.body.state).toBe('exited');
      expect((await post(`/${second.body.id}/signals`, { type: 'turn_ended' })).body.code).toBe('session_exited');
      const again = await post('', { cwd: cwd.path, ...quiet });
      expect(again.status).toBe(201);
      reaper.track(again.body.pid);
    });
  });
});
