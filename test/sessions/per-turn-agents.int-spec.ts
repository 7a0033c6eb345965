import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Journal } from '../../src/journal/journal.port';
import { JOURNAL } from '../../src/journal/journal.tokens';
import { tempDir } from '../support/temp-dir';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait-for';
import { AgentHomes, FAKE_BIN, isAlive } from '../support/workers';

const pids = AgentHomes.pids;

type Status = Record<string, unknown> & { id: string; state: string; pid: number | null };

interface Agent {
  runtime: string;
  executable: string;
  /** Where the fake keeps its sessions, argv and pids: where the real one keeps its data. */
  homeEnv: string;
  command: string[];
  /** The flags the session's profile adds (every session has one: the default profile, else). */
  profileArgs: (profileId: string) => string[];
  resume: (id: string) => string[];
  failure: string;
  /** How the fake's turn ends on the stop's SIGTERM. */
  stopped: Record<string, unknown>;
}

const AGENTS: Agent[] = [
  {
    runtime: 'gemini-cli',
    executable: 'gemini',
    homeEnv: 'GEMINI_CLI_HOME',
    command: ['--output-format', 'stream-json'],
    profileArgs: () => [],
    resume: (id) => ['--resume', id],
    failure: 'gemini-cli turn failed: Reached max session turns',
    stopped: { exit_code: 0 },
  },
  {
    runtime: 'opencode',
    executable: 'opencode',
    homeEnv: 'XDG_DATA_HOME',
    command: ['run', '--format', 'json'],
    profileArgs: (profileId) => ['--agent', profileId],
    resume: (id) => ['--session', id],
    failure: 'opencode turn failed: rate limited',
    stopped: { exit_signal: 'SIGTERM' },
  },
];

/** Gemini CLI and opencode sessions against fakes that speak their headless JSON, one real process per turn (codex has its own file). */
describe.each(AGENTS)('$runtime sessions: one headless process per turn, resumed by session id', (agent) => {
  const cwd = tempDir(`brainstem-${agent.executable}-cwd-`);
  const homes = new AgentHomes();
  // The per-turn protocol with fakes that write their argv into the home folder itself (a real runtime keeps its
  // state in a folder of its own there, which the sandbox lets it write): unsandboxed. The real ones run sandboxed
  // in their *-real specs.
  const t = useTestApp({ BRAINSTEM_SANDBOX: 'off' }, { listen: true });
  afterEach(() => homes.cleanUp());
  afterAll(() => cwd.remove());

  function agentEnv(): { env: Record<string, string>; home: string } {
    const home = homes.create(`brainstem-${agent.executable}-home-`);
    return { home, env: { PATH: `${FAKE_BIN}:${process.env.PATH}`, [agent.homeEnv]: home } };
  }

  async function call(method: 'GET' | 'POST', url: string, payload?: object): Promise<{ status: number; body: Status }> {
    const res = await t.inject({ method, url: `/api/v1/coding-sessions${url}`, payload });
    return { status: res.statusCode, body: res.json() };
  }

  async function start(body: object): Promise<Status> {
    const res = await call('POST', '', { cwd: cwd.path, runtime: agent.runtime, ...body });
    expect(res.status).toBe(201);
    return res.body;
  }

  const results = async (id: string) =>
    (await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).filter((e) => e.type === 'session.turn_ended').map((e) => (e.data as { result: string | null }).result);
  const turnsEnded = (id: string, n: number) => waitFor(async () => (await results(id)).length === n, { timeoutMs: 30000, what: `${n} turn end(s)` });
  const argvs = (home: string): string[][] => readFileSync(join(home, 'argv'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
  const sessionIdOf = async (id: string) =>
    ((await t.app.get<Journal>(JOURNAL).readStream(`session-${id}`)).find((e) => e.type === 'session.runtime_session_assigned')?.data as { runtime_session_id: string }).runtime_session_id;

  it('given a prompt, then the turn ends with the answer after the last tool call, and the next message resumes the session', async () => {
    const { env, home } = agentEnv();
    const s = await start({ env, prompt: 'hello' });
    expect(s).toMatchObject({ runtime: agent.runtime, state: 'working', pid: null });
    await turnsEnded(s.id, 1);
    expect(await results(s.id)).toEqual(['turn 1: hello']);
    expect((await call('POST', `/${s.id}/messages`, { text: 'again' })).status).toBe(200);
    await turnsEnded(s.id, 2);
    expect((await results(s.id))[1]).toBe('turn 2: hello | again');
    const session = await sessionIdOf(s.id);
    const command = [...agent.command, ...agent.profileArgs(s.profile_id as string)];
    expect(argvs(home)).toEqual([command, [...command, ...agent.resume(session)]]);
    expect((await call('GET', `/${s.id}`)).body.state).toBe('pending_handling');
  });

  it('given a message while a turn runs, then it goes in the next turn: one turn end', async () => {
    const { env, home } = agentEnv();
    const s = await start({ env, prompt: 'work until released' });
    await waitFor(() => existsSync(join(home, 'pids')), { what: 'the turn process' });
    expect((await call('POST', `/${s.id}/messages`, { text: 'also this' })).status).toBe(200);
    writeFileSync(join(home, 'release'), '');
    await turnsEnded(s.id, 1);
    expect(await results(s.id)).toEqual(['turn 2: work until released | also this']);
    expect(argvs(home)).toHaveLength(2);
  });

  it('given a turn that fails, then the failure ends the turn, and the session takes the next message', async () => {
    const { env } = agentEnv();
    const s = await start({ env, prompt: 'fail the turn' });
    await turnsEnded(s.id, 1);
    expect(await results(s.id)).toEqual([agent.failure]);
    await call('POST', `/${s.id}/messages`, { text: 'go on' });
    await turnsEnded(s.id, 2);
    expect((await results(s.id))[1]).toBe('turn 2: fail the turn | go on');
  });

  it('given a stop during a turn, then the turn ends on SIGTERM and the session is stopped', async () => {
    const { env, home } = agentEnv();
    const s = await start({ env, prompt: 'work until released' });
    await waitFor(() => pids(home).length === 1, { what: 'the turn process' });
    const stopped = await call('POST', `/${s.id}/stop`, {});
    expect(stopped.body).toMatchObject({ state: 'exited', exit_reason: 'stopped', ...agent.stopped });
    expect(isAlive(pids(home)[0])).toBe(false);
  });

  it('given it is the only agent runtime on PATH, then runtime auto picks it', async () => {
    const { env } = agentEnv();
    const bin = tempDir(`brainstem-${agent.executable}-bin-`);
    try {
      symlinkSync(join(FAKE_BIN, agent.executable), join(bin.path, agent.executable));
      const s = await start({ runtime: undefined, env: { ...env, PATH: `${bin.path}:${dirname(process.execPath)}` }, prompt: 'hello' });
      expect(s.runtime).toBe(agent.runtime);
      await turnsEnded(s.id, 1);
    } finally {
      bin.remove();
    }
  });
});
