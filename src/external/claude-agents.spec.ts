import { RunProgram, agentOf, listClaudeAgents } from './claude-agents';

/** What claude 2.1.332 printed for a background session (`claude --bg "say hi"`, then `claude agents --json`). */
const LISTED = [
  {
    pid: 14987,
    id: '097e608a',
    cwd: '/tmp/exp37/cwd',
    kind: 'background',
    startedAt: 1795705819059,
    sessionId: '097e608a-44d1-4ea3-9dba-2389427ac9dd',
    name: 'say hi',
    status: 'idle',
    state: 'blocked',
  },
];

const ran = (r: Partial<Awaited<ReturnType<RunProgram>>>): RunProgram => async () => ({ code: 0, stdout: '', stderr: '', error: null, ...r });

describe("claude's agents (claude agents --json)", () => {
  it('Given what claude lists, When read, Then each agent has its ids, where and how it runs, and whether it needs its user', async () => {
    const calls: string[][] = [];
    const run: RunProgram = async (file, args) => {
      calls.push([file, ...args]);
      return { code: 0, stdout: JSON.stringify(LISTED), stderr: '', error: null };
    };
    expect(await listClaudeAgents(run)).toEqual({
      available: true,
      agents: [
        {
          id: '097e608a',
          session_id: '097e608a-44d1-4ea3-9dba-2389427ac9dd',
          pid: 14987,
          cwd: '/tmp/exp37/cwd',
          kind: 'background',
          name: 'say hi',
          status: 'idle',
          state: 'blocked',
          started_at: new Date(1795705819059).toISOString(),
          needs: 'you',
        },
      ],
    });
    expect(calls).toEqual([['claude', 'agents', '--json']]);
  });

  it('Given entries without a usable session id or of other types, When read, Then those are dropped and odd fields left out', () => {
    expect(agentOf({ sessionId: '../x' })).toBeNull();
    expect(agentOf(7)).toBeNull();
    expect(agentOf({ sessionId: 'abc', pid: 'x', status: 'busy', state: 'working', startedAt: 'soon' })).toMatchObject({ id: 'abc', pid: null, started_at: null, needs: null });
  });

  it.each<[string, RunProgram, string]>([
    ['claude is not installed', ran({ code: null, error: 'spawn claude ENOENT' }), 'claude could not be run (spawn claude ENOENT)'],
    ['this claude has no agents command', ran({ code: 1, stderr: "error: unknown command 'agents'\n" }), "has no `claude agents --json` (it exited 1: error: unknown command 'agents')"],
    ['it prints something else', ran({ stdout: 'Agents:\n  none' }), 'did not print JSON'],
    ['it prints an object', ran({ stdout: '{}' }), 'did not print a list'],
  ])('Given %s, When listed, Then the listing says so', async (_what, run, reason) => {
    expect(await listClaudeAgents(run)).toEqual({ available: false, reason: expect.stringContaining(reason) });
  });
});
