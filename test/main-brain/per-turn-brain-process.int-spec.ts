import { BrainActivity, BrainLaunch } from '../../src/main-brain/agent/brain-agent.port';
import { PerTurnBrainAgent } from '../../src/main-brain/agent/per-turn-brain.agent';
import { codexBrain } from '../../src/main-brain/agent/per-turn-brain.runtimes';
import { NodeProcessRunner } from '../../src/sessions/runtimes/process-runner';
import { tempDir } from '../support/temp-dir';
import { waitFor } from '../support/wait-for';
import { AgentHomes, FAKE_BIN, isAlive } from '../support/workers';

/**
 * The per-turn brain's process handling, with real processes: the fake codex of test/fixtures (what the real one
 * prints, checked by codex-real and per-turn-brain int-specs), so it runs without the real CLIs.
 */
describe('the main brain on a per-turn runtime, its processes', () => {
  const homes = new AgentHomes();
  const cwd = tempDir('brainstem-brain-');
  const agents: PerTurnBrainAgent[] = [];
  afterEach(() => {
    for (const a of agents.splice(0)) a.close();
    homes.cleanUp();
  });
  afterAll(() => cwd.remove());

  function agent(path = `${FAKE_BIN}:${process.env.PATH}`): { agent: PerTurnBrainAgent; home: string } {
    const home = homes.create('brainstem-codex-home-');
    const launch: BrainLaunch = { cwd: cwd.path, env: { PATH: path, CODEX_HOME: home, BRAINSTEM_TOKEN: 't' }, mcp_url: 'http://127.0.0.1:1/mcp', instructions: 'Supervise.', model: null, profile_args: [] };
    const a = new PerTurnBrainAgent(codexBrain, () => launch, new NodeProcessRunner());
    agents.push(a);
    return { agent: a, home };
  }

  it('given two turns, then the second resumes the thread the first reported', async () => {
    const { agent: brain } = agent();
    const seen: BrainActivity[] = [];
    expect(await brain.turn('first', null, (a) => seen.push(a))).toEqual({ outcome: 'completed', text: 'turn 1: first' });
    const id = seen.find((a) => a.kind === 'conversation');
    expect(id).toEqual({ kind: 'conversation', id: expect.any(String) });
    expect(await brain.turn('second', (id as { id: string }).id, () => undefined)).toEqual({ outcome: 'completed', text: 'turn 2: first | second' });
  });

  it('given a resume of a thread codex does not have, then the turn fails as a failed resume', async () => {
    const { agent: brain } = agent();
    expect(await brain.turn('again', 'no-such-thread', () => undefined)).toEqual({
      outcome: 'failed',
      reason: expect.stringContaining('no rollout found for thread id no-such-thread'),
      resume_failed: true,
    });
  });

  it('given a turn interrupted while it works, then its process group is killed and the turn fails with the reason', async () => {
    const { agent: brain, home } = agent();
    const seen: BrainActivity[] = [];
    const ending = brain.turn('work until released', null, (a) => seen.push(a));
    await waitFor(() => seen.some((a) => a.kind === 'tool_use'), { what: 'the command to start' });
    brain.interrupt('the round timed out');
    expect(await ending).toEqual({ outcome: 'failed', reason: 'the round timed out' });
    expect(AgentHomes.pids(home).filter(isAlive)).toEqual([]);
  });

  it('given the service closes the brain during a turn, then the process is killed and the turn fails', async () => {
    const { agent: brain, home } = agent();
    const ending = brain.turn('work until released', null, () => undefined);
    await waitFor(() => AgentHomes.pids(home).length > 0, { what: 'the turn process' });
    brain.close();
    expect(await ending).toEqual({ outcome: 'failed', reason: 'the brain was closed' });
    expect(AgentHomes.pids(home).filter(isAlive)).toEqual([]);
  });

  it('given the model fails the turn, then the API error is reported once and the turn fails with it', async () => {
    const { agent: brain } = agent();
    const seen: BrainActivity[] = [];
    expect(await brain.turn('fail the turn', null, (a) => seen.push(a))).toEqual({ outcome: 'failed', reason: 'stream disconnected before completion' });
    expect(seen.filter((a) => a.kind === 'api_error')).toEqual([{ kind: 'api_error', message: 'stream disconnected before completion' }]);
  });

  it('given the runtime is not installed, then the turn fails saying it could not start', async () => {
    const { agent: brain } = agent(cwd.path);
    expect(await brain.turn('first', null, () => undefined)).toEqual({ outcome: 'failed', reason: expect.stringContaining('codex could not start') });
  });

  it('given the runtime exits before answering, then the turn fails with the last thing it said', async () => {
    const { agent: brain } = agent();
    expect(await brain.turn('fail to start', null, () => undefined)).toEqual({ outcome: 'failed', reason: 'codex exited with code 1: Error: not logged in' });
  });
});
