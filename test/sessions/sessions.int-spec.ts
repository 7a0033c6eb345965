import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { FAKE_BIN, WORKERS, WorkerReaper, isAlive } from '../support/workers';

type Status = Record<string, unknown> & { id: string; alias: string; state: string; pid: number | null; queued_permissions: Array<{ request_id: string }> };

describe('coding sessions with real worker processes', () => {
  const reaper = new WorkerReaper();
  const cwd = tempDir('brainstem-cwd-');
  // The process handling of unsandboxed workers (BRAINSTEM_SANDBOX=off): pids, process groups, stdin and spawn errors as
  // the host sees them. A sandboxed worker's are in test/sandbox/sandbox-processes.int-spec.ts.
  const t = useTestApp({ BRAINSTEM_SANDBOX: 'off' }, { listen: true, beforeClose: () => reaper.killAll() });
  afterEach(() => reaper.killAll());
  afterAll(() => cwd.remove());

  async function call(method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object): Promise<{ status: number; body: Status & { lines?: string[] } }> {
    const res = await t.inject({ method, url: `/api/v1/coding-sessions${url}`, payload });
    return { status: res.statusCode, body: res.json() };
  }

  async function start(body: object): Promise<Status> {
    const res = await call('POST', '', { cwd: cwd.path, ...body });
    expect(res.status).toBe(201);
    reaper.track(res.body.pid);
    return res.body;
  }

  /** The pid a worker prints after `prefix` once its child is up. */
  const printedPid = (id: string, prefix: string): Promise<number> =>
    waitFor(async () => {
      const line = (await call('GET', `/${id}/output`)).body.lines!.find((l) => l.startsWith(prefix));
      return line ? Number(line.slice(prefix.length)) : undefined;
    }, { what: `"${prefix}<pid>" in the output` });
  const get = async (id: string): Promise<Status> => (await call('GET', `/${id}`)).body;
  const until = (id: string, what: string, cond: (s: Status) => boolean) =>
    waitFor(async () => {
      const s = await get(id);
      return cond(s) ? s : undefined;
    }, { timeoutMs: 30000, what });

  it('runs a command worker that reports progress, takes a message on stdin and exits with its code', async () => {
    const s = await start({ title: 'reporter', command: process.execPath, args: [join(WORKERS, 'report.js')] });
    expect(s).toMatchObject({ runtime: 'command', state: 'working', title: 'reporter', excluded: false, supervised: true });
    expect(s.id).toMatch(/^cs_[a-z0-9]+$/);
    await until(s.id, 'the first progress report', (x) => (x.last_progress as { message?: string } | null)?.message === 'started');
    const sent = await call('POST', `/${s.id}/messages`, { text: 'the task' });
    expect(sent.status).toBe(200);
    const exited = await until(s.id, 'exit', (x) => x.state === 'exited');
    expect(exited).toMatchObject({ exit_code: 7, exit_reason: 'exited', last_progress: { status: 'completed', message: 'did the task' } });
    const out = await call('GET', `/${s.id}/output?tail=5`);
    expect(out.body.lines).toEqual([`worker ${s.id} up`, 'got: the task']);
    // Journaled first, in order: the bus-facing events the supervision issue consumes.
    const journal = t.app.get<Journal>(JOURNAL);
    const types = (await journal.readStream(`session-${s.id}`)).map((e) => e.type);
    expect(types).toEqual([
      'session.created',
      'session.started',
      'session.state_changed',
      'session.progress',
      'session.message_dispatched',
      'session.progress',
      'session.exited',
      'session.state_changed',
    ]);
    const signalToExited = await call('POST', `/${s.id}/signals`, { type: 'turn_ended' });
    expect(signalToExited).toMatchObject({ status: 409, body: { code: 'session_exited' } });
    expect(await call('POST', `/${s.id}/messages`, { text: 'more' })).toMatchObject({ status: 409, body: { code: 'session_exited' } });
  });

  it('drives a fake claude: a turn ends, a permission is requested and allowed, then it exits', async () => {
    const env = { PATH: `${FAKE_BIN}:${process.env.PATH}` };
    const s = await start({ runtime: 'claude-code', env, prompt: 'hello' });
    expect(s.runtime).toBe('claude-code');
    const ended = await until(s.id, 'the end of the first turn', (x) => x.state === 'pending_handling');
    expect(ended).toMatchObject({ state_label: '待处理', pending: null });

    expect((await call('POST', `/${s.id}/messages`, { text: 'please use a tool' })).status).toBe(200);
    const asking = await until(s.id, 'the permission request', (x) => x.state === 'pending_authorization');
    expect(asking).toMatchObject({ state_label: '待授权', pending: { kind: 'permission', tool: 'Bash', input: { command: 'npm run build' } } });
    expect(await call('POST', `/${s.id}/messages`, { text: 'not now' })).toMatchObject({ status: 409, body: { code: 'permission_pending' } });

    const allowed = await call('POST', `/${s.id}/permission`, { decision: 'allow' });
    expect(allowed.status).toBe(200);
    expect(allowed.body.state).toBe('working');
    await until(s.id, 'the turn after the permission', (x) => x.state === 'pending_handling');
    const out = await call('GET', `/${s.id}/output?tail=50`);
    expect(out.body.lines!.some((l) => l.includes('"tool allow"'))).toBe(true);
    expect(await call('POST', `/${s.id}/permission`, { decision: 'deny' })).toMatchObject({ status: 409, body: { code: 'permission_not_pending' } });

    await call('POST', `/${s.id}/messages`, { text: 'goodbye' });
    const exited = await until(s.id, 'claude to exit', (x) => x.state === 'exited');
    expect(exited).toMatchObject({ exit_code: 0, exit_reason: 'exited' });
    const journal = t.app.get<Journal>(JOURNAL);
    const events = await journal.readStream(`session-${s.id}`);
    expect(events.find((e) => e.type === 'session.runtime_session_assigned')?.data).toMatchObject({ runtime_session_id: expect.stringMatching(/^fake-/) });
  });

  it("given claude asks for a tool its profile denies, then the request is denied as it arrives: claude is told the rule, the journal has it, and the session never waits on it", async () => {
    const profile = await t.inject({ method: 'POST', url: '/api/v1/agent-profiles', payload: { name: 'No Builds', permissions: { deny: ['Bash(npm run build)'] } } });
    expect(profile.statusCode).toBe(201);
    const profileId = profile.json().id as string;
    const s = await start({ runtime: 'claude-code', env: { PATH: `${FAKE_BIN}:${process.env.PATH}` }, profile_id: profileId, prompt: 'use a tool' });
    await until(s.id, 'the turn after the denial', (x) => x.state === 'pending_handling');
    // The fake claude prints the answer it got: a deny, with the rule as its message.
    const out = await call('GET', `/${s.id}/output?tail=50`);
    const reason = `profile ${profileId} denies Bash (rule Bash(npm run build)): a profile's deny always wins`;
    expect(out.body.lines!.some((l) => l.includes(`"tool deny: ${reason}"`))).toBe(true);
    expect(out.body.lines!.some((l) => l.includes('"tool deny"'))).toBe(true);
    const events = await t.app.get<Journal>(JOURNAL).readStream(`session-${s.id}`);
    expect(events.filter((e) => e.type.startsWith('session.permission_')).map((e) => [e.type, e.data])).toEqual([
      [
        'session.permission_resolved',
        { at: expect.any(Number), request_id: 'req-1', decision: 'deny', reason, by: 'profile', rule: 'Bash(npm run build)', tool: 'Bash', input: { command: 'npm run build' } },
      ],
    ]);
    expect(events.filter((e) => e.type === 'session.state_changed').map((e) => (e.data as { to: string }).to)).toEqual(['working', 'pending_handling']);
  });

  it('given claude asks for two permissions at once, then both are pending in order and each answer reaches claude', async () => {
    const s = await start({ runtime: 'claude-code', env: { PATH: `${FAKE_BIN}:${process.env.PATH}` }, prompt: 'use two tools at once' });
    const asking = await until(s.id, 'both permission requests', (x) => x.queued_permissions.length === 1);
    expect(asking).toMatchObject({ state: 'pending_authorization', pending: { kind: 'permission', tool: 'WebFetch', input: { url: 'https://a.example' } } });
    expect(asking.queued_permissions).toEqual([{ request_id: expect.any(String), tool: 'WebFetch', input: { url: 'https://b.example' } }]);
    const second = asking.queued_permissions[0].request_id;
    expect(await call('POST', `/${s.id}/permission`, { decision: 'allow', request_id: 'req-none' })).toMatchObject({ status: 409, body: { code: 'permission_not_pending' } });

    // The second is answered first, by id; then the first, the oldest, without one.
    const denied = await call('POST', `/${s.id}/permission`, { decision: 'deny', reason: 'not b', request_id: second });
    expect(denied.body).toMatchObject({ state: 'pending_authorization', pending: { input: { url: 'https://a.example' } }, queued_permissions: [] });
    expect((await call('POST', `/${s.id}/permission`, { decision: 'allow' })).body.state).toBe('working');
    await until(s.id, 'the turn after both answers', (x) => x.state === 'pending_handling');
    const out = await call('GET', `/${s.id}/output?tail=50`);
    expect(out.body.lines!.some((l) => l.includes('"tools allow deny"'))).toBe(true);
  });

  it('given claude writes lines over a megabyte, then a result still ends the turn and a permission request is refused, not left waiting', async () => {
    const s = await start({ runtime: 'claude-code', env: { PATH: `${FAKE_BIN}:${process.env.PATH}` }, prompt: 'say a lot' });
    await until(s.id, 'the end of the long turn', (x) => x.state === 'pending_handling');
    expect((await call('POST', `/${s.id}/messages`, { text: 'write a big file' })).status).toBe(200);
    const journal = t.app.get<Journal>(JOURNAL);
    const results = async () => (await journal.readStream(`session-${s.id}`)).filter((e) => e.type === 'session.turn_ended').map((e) => (e.data as { result: string | null }).result);
    const ended = await waitFor(async () => ((await results()).length === 2 ? results() : undefined), { what: 'the turn of the large request to end' });
    expect(ended).toEqual([null, expect.stringMatching(/^write error: .*too large/)]);
    expect((await get(s.id)).state).toBe('pending_handling');
  });

  it('given a result over 64 KiB, then the journaled turn keeps its first 64 KiB with a note saying it was cut', async () => {
    const s = await start({ runtime: 'claude-code', env: { PATH: `${FAKE_BIN}:${process.env.PATH}` }, prompt: 'say 100k' });
    await until(s.id, 'the end of the turn', (x) => x.state === 'pending_handling');
    const [ended] = (await t.app.get<Journal>(JOURNAL).readStream(`session-${s.id}`)).filter((e) => e.type === 'session.turn_ended');
    const result = (ended.data as { result: string }).result;
    expect(Buffer.byteLength(result, 'utf8')).toBeLessThanOrEqual(64 * 1024);
    expect(result).toMatch(/^é+\n\[brainstem: cut to 64 KiB of 102400 bytes\]$/);
  });

  it('starts claude without a prompt waiting for an instruction, and picks it for runtime auto', async () => {
    const s = await start({ env: { PATH: `${FAKE_BIN}:/usr/bin:/bin` } });
    expect(s).toMatchObject({ runtime: 'claude-code', state: 'pending_handling' });
  });

  it('assigns aliases in creation order and finds sessions by alias', async () => {
    const a = await start({ command: process.execPath, args: [join(WORKERS, 'quiet.js')] });
    const b = await start({ command: process.execPath, args: [join(WORKERS, 'quiet.js')] });
    const na = Number(a.alias.slice(1));
    expect(a.alias).toMatch(/^w\d+$/);
    expect(b.alias).toBe(`w${na + 1}`);
    expect((await get(b.alias)).id).toBe(b.id);
    expect((await get(b.alias.toUpperCase())).id).toBe(b.id);
  });

  it('toggles exclusion from supervision and filters by it', async () => {
    const s = await start({ command: process.execPath, args: [join(WORKERS, 'quiet.js')], excluded: true });
    expect(s).toMatchObject({ excluded: true, supervised: false });
    const included = await call('PATCH', `/${s.alias}/supervision`, { excluded: false });
    expect(included.body).toMatchObject({ excluded: false, supervised: true });
    const excluded = await call('GET', '?excluded=true');
    expect((excluded.body as unknown as { sessions: Status[] }).sessions.some((x) => x.id === s.id)).toBe(false);
    await call('PATCH', `/${s.id}/supervision`, { excluded: true });
    const listed = (await call('GET', '?excluded=true&state=working')).body as unknown as { sessions: Status[]; next_cursor: string | null };
    expect(listed.next_cursor).toBeNull();
    expect(listed.sessions.map((x) => x.id)).toContain(s.id);
    const journal = t.app.get<Journal>(JOURNAL);
    const changes = (await journal.readStream(`session-${s.id}`)).filter((e) => e.type === 'session.exclusion_changed');
    expect(changes.map((e) => (e.data as { excluded: boolean }).excluded)).toEqual([false, true]);
  });

  it('stops a worker that ignores SIGTERM with SIGKILL after the grace period', async () => {
    const s = await start({ command: process.execPath, args: [join(WORKERS, 'stubborn.js')] });
    await until(s.id, 'the worker to be up', () => true);
    await waitFor(async () => (await call('GET', `/${s.id}/output`)).body.lines!.includes('stubborn up'), { what: 'stubborn up' });
    const stopped = await call('POST', `/${s.id}/stop`, { grace_ms: 300 });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ state: 'exited', exit_reason: 'stopped', exit_signal: 'SIGKILL' });
    expect(isAlive(s.pid!)).toBe(false);
    expect((await call('GET', `/${s.id}/output`)).body.lines).toContain('SIGTERM ignored');
    expect((await call('POST', `/${s.id}/stop`, {})).status).toBe(409);
  });

  it('given a stop under way, then a message is refused (409, the worker would never read it) and journals nothing', async () => {
    const s = await start({ command: process.execPath, args: [join(WORKERS, 'stubborn.js')] });
    await waitFor(async () => (await call('GET', `/${s.id}/output`)).body.lines!.includes('stubborn up'), { what: 'stubborn up' });
    const stopping = call('POST', `/${s.id}/stop`, { grace_ms: 2000 });
    const journal = t.app.get<Journal>(JOURNAL);
    const types = async () => (await journal.readStream(`session-${s.id}`)).map((e) => e.type);
    await waitFor(async () => (await types()).includes('session.stop_requested'), { what: 'the stop to be journaled' });
    const refused = await call('POST', `/${s.id}/messages`, { text: 'one more thing' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'session_stopping', message: expect.stringMatching(/is being stopped: takes no more messages/) });
    expect((await stopping).body).toMatchObject({ state: 'exited', exit_reason: 'stopped' });
    expect(await types()).not.toContain('session.message_dispatched');
  });

  it('given a worker whose child ignores SIGTERM, when the worker dies at the stop, then the child still gets SIGKILL at the deadline', async () => {
    const s = await start({ command: process.execPath, args: [join(WORKERS, 'forking.js')] });
    const childPid = await printedPid(s.id, 'child ');
    const stopped = await call('POST', `/${s.id}/stop`, { grace_ms: 300 });
    expect(stopped.body).toMatchObject({ state: 'exited', exit_reason: 'stopped', exit_signal: 'SIGTERM' });
    await waitFor(() => !isAlive(childPid), { timeoutMs: 10000, what: 'the child to be killed at the deadline' });
  });

  it('given a worker whose child left its process group (setsid), when the session is stopped, then the child is found by the session id in its environment and killed', async () => {
    const s = await start({ command: process.execPath, args: [join(WORKERS, 'escaping.js')] });
    const childPid = await printedPid(s.id, 'escaped ');
    reaper.track(childPid);
    const stat = readFileSync(`/proc/${childPid}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])).not.toBe(s.pid);
    const stopped = await call('POST', `/${s.id}/stop`, { grace_ms: 300 });
    expect(stopped.body).toMatchObject({ state: 'exited', exit_reason: 'stopped' });
    await waitFor(() => !isAlive(childPid), { timeoutMs: 10000, what: 'the escaped child to be killed at the deadline' });
  });

  it('given an executable whose interpreter does not exist, when a session starts it, then it answers exited (spawn_failed) and journals no start', async () => {
    const script = join(cwd.path, 'no-interpreter.sh');
    writeFileSync(script, '#!/nonexistent/interpreter\n', { mode: 0o755 });
    const s = await start({ command: script, prompt: 'hello' });
    expect(s).toMatchObject({ state: 'exited', exit_reason: 'spawn_failed', pid: null });
    const journal = t.app.get<Journal>(JOURNAL);
    // Runs through the session's mailbox after the spawn error's own report.
    expect((await call('PATCH', `/${s.id}/supervision`, { excluded: true })).status).toBe(200);
    const types = (await journal.readStream(`session-${s.id}`)).map((e) => e.type);
    expect(types).toEqual(['session.created', 'session.exited', 'session.state_changed', 'session.exclusion_changed']);
  });

  it('keeps a flooding worker\'s log bounded on disk and tails it', async () => {
    const s = await start({ command: process.execPath, args: [join(WORKERS, 'flood.js'), '100000'] });
    await until(s.id, 'the flood to end', (x) => x.state === 'exited');
    const out = await call('GET', `/${s.id}/output?tail=2`);
    expect(out.body.lines).toEqual([expect.stringMatching(/^line 99999 x+$/), expect.stringMatching(/^line 100000 x+$/)]);
    const dir = join(t.config.journal.dir, 'session-logs');
    const files = readdirSync(dir).filter((f) => f.startsWith(s.id));
    const bytes = files.reduce((n, f) => n + statSync(join(dir, f)).size, 0);
    expect(files.sort()).toEqual([`${s.id}.log`, `${s.id}.log.1`]);
    expect(bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(existsSync(join(dir, `${s.id}.log.2`))).toBe(false);
  });

  it('given a worker that closed its stdin, when messages keep coming, then they are refused naming the closed input', async () => {
    const s = await start({ command: '/bin/sh', args: ['-c', 'exec 0<&-; echo closed; sleep 600'] });
    await waitFor(async () => (await call('GET', `/${s.id}/output`)).body.lines!.includes('closed'), { what: 'stdin to be closed' });
    // The first write is what finds the pipe closed.
    const refused = await waitFor(async () => {
      const res = await call('POST', `/${s.id}/messages`, { text: 'hello?' });
      return res.status === 409 ? res.body : undefined;
    }, { what: 'a refused message' });
    expect(refused).toMatchObject({ code: 'message_not_deliverable', message: 'session ' + s.alias + ' cannot receive messages: its worker closed its stdin' });
  });

  it("gives every worker the service URL, its session id and its own credential, never the user's token, whatever the request's env says", async () => {
    const s = await start({
      command: '/bin/sh',
      args: ['-c', 'echo "$BRAINSTEM_URL $BRAINSTEM_SESSION_ID ${BRAINSTEM_API_TOKEN:-no-api-token} $BRAINSTEM_TOKEN"'],
      env: { BRAINSTEM_API_TOKEN: t.token, BRAINSTEM_TOKEN: 'forged' },
    });
    await until(s.id, 'exit', (x) => x.state === 'exited');
    const out = await call('GET', `/${s.id}/output`);
    expect(out.body.lines).toEqual([`${t.url} ${s.id} no-api-token ${t.tokenOf({ worker: s.id })}`]);
  });

  /**
   * Messages sent to claude while its turn runs, against a fake claude that queues them as claude 2.1.197 does
   * (observed against its binary, see claude-real.int-spec.ts): taken in at a tool boundary and echoed, or run
   * in a turn of their own after the current one's result, several merged into one, a slash command never echoed.
   */
  describe('claude-code: messages sent during a turn', () => {
    const events = async (id: string) => t.app.get<Journal>(JOURNAL).readStream(`session-${id}`);
    const ofType = (all: Array<{ type: string; data: unknown }>, type: string) => all.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
    const states = (all: Array<{ type: string; data: unknown }>) => ofType(all, 'session.state_changed').map((d) => d.to);
    const send = async (id: string, text: string) => expect((await call('POST', `/${id}/messages`, { text })).status).toBe(200);

    /** A claude whose first turn is under way: its system/init has been read. */
    async function startTurn(prompt: string): Promise<Status> {
      const s = await start({ runtime: 'claude-code', env: { PATH: `${FAKE_BIN}:${process.env.PATH}` }, prompt });
      await waitFor(async () => ofType(await events(s.id), 'session.runtime_session_assigned').length > 0, { what: "claude's system/init" });
      return s;
    }

    it.each([
      ['a message queued behind the turn', 'please wait for a message', ['and here it is'], 'echo: and here it is'],
      ['two messages queued behind the turn (claude merges them)', 'please wait for two messages', ['one', 'two'], 'echo: one\ntwo'],
      ['a slash command queued behind the turn (claude never echoes one)', 'please wait for a message', ['/compact'], 'ran /compact'],
    ])('given %s, when the turn ends, then the session stays working until the turn that takes it up ends', async (_, prompt, messages, last) => {
      const s = await startTurn(prompt);
      for (const text of messages) await send(s.id, text);
      await until(s.id, 'the last turn', (x) => x.state === 'pending_handling');
      const all = await events(s.id);
      expect(ofType(all, 'session.turn_ended')).toEqual([
        { at: expect.any(Number), result: `waited: ${prompt}`, superseded: true },
        { at: expect.any(Number), result: last },
      ]);
      // Working from the start to the second turn's end: the first end woke nobody.
      expect(states(all)).toEqual(['working', 'pending_handling']);
      // Every turn begins with system/init; its session id is journaled once.
      expect(ofType(all, 'session.runtime_session_assigned')).toHaveLength(1);
    });

    it('given a message that claude takes into the running turn at a tool boundary, then that turn is the last: its end ends the work', async () => {
      const s = await startTurn('please read while I type');
      await send(s.id, 'also check the notes');
      // Without the echo (--replay-user-messages) this end would look superseded and the session stay working.
      await until(s.id, 'the turn', (x) => x.state === 'pending_handling');
      const all = await events(s.id);
      expect(ofType(all, 'session.turn_ended').map((d) => [d.result, d.superseded])).toEqual([['read, and took in: also check the notes', undefined]]);
      expect(states(all)).toEqual(['working', 'pending_handling']);
    });
  });
});
