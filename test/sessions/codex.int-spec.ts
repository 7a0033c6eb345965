import { existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Journal, JournalEvent } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { SessionRegistry } from '../../src/sessions/session.registry';
import { SessionsService } from '../../src/sessions/sessions.service';
import { tempDir } from '../support/temp-dir';
import { TestApp, startTestApp } from '../support/test-app';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { AgentHomes, FAKE_BIN, isAlive } from '../support/workers';

type Status = Record<string, unknown> & { id: string; alias: string; state: string; pid: number | null; exit_code: number | null; exit_reason: string | null };

/** Codex sessions against a fake `codex` that speaks `codex exec --json`, one real process per turn. */
describe('codex sessions: one `codex exec --json` process per turn, resumed by thread id', () => {
  const cwd = tempDir('brainstem-codex-cwd-');
  const homes = new AgentHomes();
  const t = useTestApp({}, { listen: true });
  afterEach(() => homes.cleanUp());
  afterAll(() => cwd.remove());

  /** A fresh CODEX_HOME per session: the fake keeps its threads and the pids of its turns there. */
  function codexEnv(extra: Record<string, string> = {}): { env: Record<string, string>; home: string } {
    const home = homes.create('brainstem-codex-home-');
    return { home, env: { PATH: `${FAKE_BIN}:${process.env.PATH}`, CODEX_HOME: home, FAKE_CODEX_ARGV_FILE: join(home, 'argv'), ...extra } };
  }

  async function call(app: TestApp, method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: Status & { lines?: string[] } }> {
    const res = await app.inject({ method, url: `/api/v1/coding-sessions${url}`, payload });
    return { status: res.statusCode, body: res.json() };
  }

  async function start(body: object, app = t): Promise<Status> {
    const res = await call(app, 'POST', '', { cwd: cwd.path, runtime: 'codex', ...body });
    expect(res.status).toBe(201);
    return res.body;
  }

  const until = (id: string, what: string, cond: (s: Status) => boolean, app = t) =>
    waitFor(async () => {
      const s = (await call(app, 'GET', `/${id}`)).body;
      return cond(s) ? s : undefined;
    }, { timeoutMs: 30000, what });

  const events = async (id: string, app = t): Promise<JournalEvent[]> => app.app.get<Journal>(JOURNAL).readStream(`session-${id}`);
  const results = async (id: string, app = t) => (await events(id, app)).filter((e) => e.type === 'session.turn_ended').map((e) => (e.data as { result: string | null }).result);
  const argvs = (home: string): string[][] => readFileSync(join(home, 'argv'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
  /** Each turn's argv without the profile's `-c` overrides (every session has a profile: the default one, else). */
  const commands = (home: string): string[][] => argvs(home).map((argv) => argv.filter((a, i) => a !== '-c' && argv[i - 1] !== '-c'));
  const pids = AgentHomes.pids;
  const threadOf = async (id: string, app = t) => (await events(id, app)).find((e) => e.type === 'session.runtime_session_assigned')?.data as { runtime_session_id: string } | undefined;

  it('given a prompt, then the first turn runs, ends the turn with the agent message, and the next message resumes the same thread', async () => {
    const { env, home } = codexEnv();
    const s = await start({ env, prompt: 'hello' });
    expect(s).toMatchObject({ runtime: 'codex', state: 'working', pid: null });
    await until(s.id, 'the first turn to end', (x) => x.state === 'pending_handling');
    expect(await results(s.id)).toEqual(['turn 1: hello']);
    const thread = (await threadOf(s.id))!.runtime_session_id;
    expect(thread).toMatch(/^0199a0b1-fake-/);

    expect((await call(t, 'POST', `/${s.id}/messages`, { text: 'and then?' })).status).toBe(200);
    await until(s.id, 'the second turn to end', (x) => x.state === 'pending_handling');
    expect(await results(s.id)).toEqual(['turn 1: hello', 'turn 2: hello | and then?']);
    expect(commands(home)).toEqual([
      ['exec', '--json', '-'],
      ['exec', '--json', 'resume', thread, '-'],
    ]);
    // The thread id is journaled once, not again when the resumed turn announces the same thread.
    expect((await events(s.id)).filter((e) => e.type === 'session.runtime_session_assigned')).toHaveLength(1);
    expect((await call(t, 'GET', `/${s.id}/output?tail=50`)).body.lines).toContain(JSON.stringify({ type: 'turn.started' }));
  });

  it('given no prompt, then nothing runs until the first message, which starts a new thread', async () => {
    const { env, home } = codexEnv();
    const s = await start({ env });
    expect(s).toMatchObject({ state: 'pending_handling', pid: null });
    expect(existsSync(join(home, 'argv'))).toBe(false);
    await call(t, 'POST', `/${s.id}/messages`, { text: 'first words' });
    await until(s.id, 'the turn to end', (x) => x.state === 'pending_handling' && x.updated_at !== s.updated_at);
    await waitFor(async () => (await results(s.id)).length === 1, { what: 'one turn end' });
    expect(await results(s.id)).toEqual(['turn 1: first words']);
    expect(commands(home)).toEqual([['exec', '--json', '-']]);
  });

  it('given a message while a turn runs, then it waits for that turn and goes in the next one: one turn end, not two', async () => {
    const { env, home } = codexEnv();
    const s = await start({ env, prompt: 'work until released' });
    await waitFor(async () => (await call(t, 'GET', `/${s.id}/output`)).body.lines!.some((l) => l.includes('command_execution')), { what: 'the turn to be under way' });
    expect((await call(t, 'POST', `/${s.id}/messages`, { text: 'also this' })).status).toBe(200);
    expect((await call(t, 'POST', `/${s.id}/messages`, { text: 'and this' })).status).toBe(200);
    expect(argvs(home)).toHaveLength(1);
    writeFileSync(join(home, 'release'), '');
    await until(s.id, 'the turns to end', (x) => x.state === 'pending_handling');
    const thread = (await threadOf(s.id))!.runtime_session_id;
    expect(await results(s.id)).toEqual(['turn 2: work until released | also this\n\nand this']);
    expect(commands(home)).toEqual([
      ['exec', '--json', '-'],
      ['exec', '--json', 'resume', thread, '-'],
    ]);
  });

  it('given a message that reaches the worker after its turn ended but before that end is applied, then it starts the next turn and the session stays working until that turn ends', async () => {
    const { env, home } = codexEnv();
    const s = await start({ env, prompt: 'work until released' });
    await waitFor(async () => (await call(t, 'GET', `/${s.id}/output`)).body.lines!.some((l) => l.includes('command_execution')), { what: 'the turn to be under way' });
    const actor = t.app.get(SessionRegistry).get(s.id);
    // Hold the session's mailbox: the message queues behind the hold, and the turn's end behind the message.
    let open!: () => void;
    const held = actor.run(() => new Promise<void>((resolve) => (open = resolve)));
    const sent = t.app.get(SessionsService).dispatch(s.id, 'work until released, again');
    writeFileSync(join(home, 'release'), '');
    await waitFor(() => actor.handle?.pid === null, { timeoutMs: 30000, what: 'the first turn to exit and report its end' });
    rmSync(join(home, 'release'));
    open();
    await Promise.all([held, sent]);
    await waitFor(async () => (await results(s.id)).length === 1, { timeoutMs: 30000, what: 'the first turn end to be journaled' });
    expect((await call(t, 'GET', `/${s.id}`)).body.state).toBe('working');
    expect(actor.handle?.pid).toEqual(expect.any(Number));
    const firstEnd = (await events(s.id)).find((e) => e.type === 'session.turn_ended')!;
    expect(firstEnd.data).toMatchObject({ result: 'turn 1: work until released', superseded: true });

    writeFileSync(join(home, 'release'), '');
    await until(s.id, 'the second turn to end', (x) => x.state === 'pending_handling');
    expect(await results(s.id)).toEqual(['turn 1: work until released', 'turn 2: work until released | work until released, again']);
    const ends = (await events(s.id)).filter((e) => e.type === 'session.turn_ended');
    expect(ends[1].data).not.toHaveProperty('superseded');
    expect(argvs(home)).toHaveLength(2);
  });

  it('given a turn that fails, then the turn ends with the failure for the brain to see, and the conversation goes on', async () => {
    const { env } = codexEnv();
    const s = await start({ env, prompt: 'fail the turn' });
    await until(s.id, 'the failed turn to end', (x) => x.state === 'pending_handling');
    expect(await results(s.id)).toEqual(['codex turn failed: stream disconnected before completion']);
    await call(t, 'POST', `/${s.id}/messages`, { text: 'try again' });
    await waitFor(async () => (await results(s.id)).length === 2, { what: 'the second turn to end' });
    expect((await results(s.id))[1]).toBe('turn 2: fail the turn | try again');
  });

  it('given the model stream drops twice and the retry answers, then the turn ends with the answer, not a failure', async () => {
    const { env } = codexEnv();
    const s = await start({ env, prompt: 'drop the stream twice' });
    await until(s.id, 'the turn to end', (x) => x.state === 'pending_handling');
    expect(await results(s.id)).toEqual(['turn 1: drop the stream twice']);
  });

  it('given codex is the first agent runtime on PATH, then runtime auto picks it', async () => {
    const { env } = codexEnv();
    const bin = tempDir('brainstem-codex-bin-');
    try {
      symlinkSync(join(FAKE_BIN, 'codex'), join(bin.path, 'codex'));
      // node stays reachable for the fake's shebang; claude does not.
      const s = await start({ runtime: undefined, env: { ...env, PATH: `${bin.path}:${dirname(process.execPath)}` }, prompt: 'hello' });
      expect(s.runtime).toBe('codex');
      await until(s.id, 'the turn to end', (x) => x.state === 'pending_handling');
    } finally {
      bin.remove();
    }
  });

  it('given codex fails before it starts a thread, then there is nothing to continue: the session exits with its code', async () => {
    const { env } = codexEnv();
    const s = await start({ env, prompt: 'fail to start' });
    const exited = await until(s.id, 'the exit', (x) => x.state === 'exited');
    expect(exited).toMatchObject({ exit_code: 1, exit_reason: 'exited' });
    expect((await call(t, 'GET', `/${s.id}/output`)).body.lines).toContain('Error: not logged in');
  });

  it('given a stop while a turn runs that ignores SIGTERM, then SIGKILL at the deadline ends it and the session is stopped', async () => {
    const { env, home } = codexEnv({ FAKE_CODEX_IGNORE_SIGTERM: '1' });
    const s = await start({ env, prompt: 'work until released' });
    await waitFor(() => pids(home).length === 1, { what: 'the turn process' });
    const [pid] = pids(home);
    const stopped = await call(t, 'POST', `/${s.id}/stop`, { grace_ms: 300 });
    expect(stopped.body).toMatchObject({ state: 'exited', exit_reason: 'stopped', exit_signal: 'SIGKILL' });
    expect(isAlive(pid)).toBe(false);
  });

  it('given a stop between turns, then the session ends at once with nothing to signal', async () => {
    const { env, home } = codexEnv();
    const s = await start({ env, prompt: 'hello' });
    await until(s.id, 'the turn to end', (x) => x.state === 'pending_handling');
    const stopped = await call(t, 'POST', `/${s.id}/stop`, {});
    expect(stopped.body).toMatchObject({ state: 'exited', exit_reason: 'stopped', exit_code: null });
    expect(pids(home).every((p) => !isAlive(p))).toBe(true);
    expect((await call(t, 'POST', `/${s.id}/messages`, { text: 'more' })).status).toBe(409);
  });

  it('given a profile, then its codex config reaches each turn as -c overrides and its instructions as developer_instructions', async () => {
    const { env, home } = codexEnv();
    const s = await start({ env, prompt: 'hello', profile_id: 'code-reviewer' });
    await until(s.id, 'the first turn to end', (x) => x.state === 'pending_handling');
    await call(t, 'POST', `/${s.id}/messages`, { text: 'again' });
    await waitFor(async () => (await results(s.id)).length === 2, { what: 'the second turn to end' });
    const [first, second] = argvs(home);
    const overrides = first.filter((_, i) => first[i - 1] === '-c');
    expect(overrides).toEqual(
      expect.arrayContaining([
        'approval_policy="on-request"',
        'sandbox_mode="read-only"',
        `mcp_servers.brainstem.url="${t.url}/mcp"`,
        'mcp_servers.brainstem.env_http_headers.X-Brainstem-Session="BRAINSTEM_SESSION_ID"',
      ]),
    );
    expect(overrides.find((o) => o.startsWith('developer_instructions='))).toMatch(/^developer_instructions=".+"$/);
    // The same overrides for the resumed turn, before `resume`, where codex still takes them.
    expect(second.slice(0, first.length - 1)).toEqual(first.slice(0, -1));
    expect(second.slice(first.length - 1)).toEqual(['resume', (await threadOf(s.id))!.runtime_session_id, '-']);
  });

  it('given a restart, then an idle conversation resumes at the next message, a turn cut off by the restart is killed, and a session with no turn yet starts one', async () => {
    const journal = tempDir('brainstem-codex-journal-');
    const env1 = codexEnv();
    const env2 = codexEnv();
    const dirs = { BRAINSTEM_JOURNAL_DIR: join(journal.path, 'journal') };
    let first = await startTestApp(dirs, { listen: true });
    let second: TestApp | null = null;
    try {
      const idle = await start({ env: env1.env, prompt: 'remember me' }, first);
      const busy = await start({ env: env2.env, prompt: 'work until released' }, first);
      const env3 = codexEnv();
      const fresh = await start({ env: env3.env }, first);
      await until(idle.id, 'the idle turn to end', (x) => x.state === 'pending_handling', first);
      await waitFor(() => pids(env2.home).length === 1, { what: 'the busy turn process' });
      await waitFor(async () => (await threadOf(busy.id, first)) !== undefined, { what: 'the busy thread id' });
      const [cutOff] = pids(env2.home);
      await first.close();
      expect(isAlive(cutOff)).toBe(true);

      second = await startTestApp(dirs, { listen: true });
      await waitFor(() => !isAlive(cutOff), { what: 'the cut-off turn to be killed' });
      await call(second, 'POST', `/${idle.id}/messages`, { text: 'still there?' });
      await waitFor(async () => (await results(idle.id, second!)).length === 2, { what: 'the resumed turn' });
      expect((await results(idle.id, second))[1]).toBe('turn 2: remember me | still there?');
      const resumed = (await events(idle.id, second)).find((e) => e.type === 'session.recovered');
      expect(resumed?.data).toMatchObject({ attachment: 'attached', pid: null, resumed: true });
      await call(second, 'POST', `/${busy.id}/messages`, { text: 'start over' });
      await waitFor(async () => (await results(busy.id, second!)).length === 1, { what: 'the busy session to take a new turn' });
      expect((await results(busy.id, second))[0]).toBe('turn 2: work until released | start over');
      // No turn had run: nothing was lost, and the first message starts the thread.
      expect((await call(second, 'GET', `/${fresh.id}`)).body.state).toBe('pending_handling');
      await call(second, 'POST', `/${fresh.id}/messages`, { text: 'first words' });
      await waitFor(async () => (await results(fresh.id, second!)).length === 1, { what: 'the fresh session\'s first turn' });
      expect((await results(fresh.id, second))[0]).toBe('turn 1: first words');
    } finally {
      await second?.close();
      journal.remove();
    }
  });
});
