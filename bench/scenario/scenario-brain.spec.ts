import { ScenarioBrain, WorkerRole, readRoundPrompt } from './scenario-brain';

const user = (content: unknown) => ({ messages: [{ role: 'user', content }] });
const toolResult = (content: string, is_error = false) => user([{ type: 'tool_result', tool_use_id: 't', content, is_error }]);
const roles: Record<string, WorkerRole> = { cs_ask: 'asker', cs_perm: 'permission', cs_merge: 'merge', cs_quiet: 'quiet', cs_claude: 'claude' };

describe('the scripted brain of the scenario bench', () => {
  describe('given a round prompt', () => {
    it('when read, then it gives the round, the sessions in order and each one\'s permission ids', () => {
      const read = readRoundPrompt('Supervision round rd_ab12 …\n  - w1 (cs_perm) waits: perm_x1 Bash {"command":"ls"}\n  - w2 (cs_ask) asked\n  - w1 (cs_perm) again perm_x2');
      expect(read).toEqual({ round_id: 'rd_ab12', sessions: ['cs_perm', 'cs_ask'], permissions: new Map([['cs_perm', ['perm_x1', 'perm_x2']]]) });
    });

    it('when a kept summary before the round lists open sessions, then only the sessions from the round on count', () => {
      expect(readRoundPrompt('Open sessions: cs_old w1\n\nSupervision round rd_9: cs_new')?.sessions).toEqual(['cs_new']);
    });

    it('when the text names no round, then it is not a round prompt', () => {
      expect(readRoundPrompt('hello cs_ask')).toBeNull();
    });
  });

  describe('given a round naming an asker, a permission with its id, a merge and a quiet worker', () => {
    it('when the model is asked turn by turn, then it answers, allows by id, merges, skips the quiet one and completes the round', () => {
      const brain = new ScenarioBrain((s) => roles[s]);
      const replies = [brain.reply(user('Supervision round rd_1: cs_ask cs_perm perm_9 cs_merge cs_quiet'))];
      for (let i = 0; i < 4; i++) replies.push(brain.reply(toolResult('ok')));
      expect(replies).toEqual([
        { tool: 'mcp__brainstem__send_to_session', input: { session: 'cs_ask', text: 'Use option A.' } },
        { tool: 'mcp__brainstem__resolve_permission', input: { session: 'cs_perm', decision: 'allow', request_id: 'perm_9' } },
        { tool: 'mcp__brainstem__merge_session', input: { session: 'cs_merge', action: 'merge', strategy: 'merge' } },
        { tool: 'mcp__brainstem__complete_round', input: { round_id: 'rd_1', summary: 'Handled 4 sessions.' } },
        { text: 'Round done.' },
      ]);
      expect(brain.calls.get('rd_1')!.map((c) => c.tool)).toEqual(['send_to_session', 'resolve_permission', 'merge_session', 'complete_round']);
    });
  });

  describe('given a permission worker named for its turn end, with no request pending', () => {
    it('when resolve_permission is refused as not pending, then the brain tells it to go on instead, and keeps the refusal', () => {
      const brain = new ScenarioBrain((s) => roles[s]);
      expect(brain.reply(user('round rd_2: cs_perm finished its turn'))).toMatchObject({ tool: 'mcp__brainstem__resolve_permission' });
      expect(brain.reply(toolResult('permission_not_pending: session w7 has no pending permission request', true))).toEqual({
        tool: 'mcp__brainstem__send_to_session',
        input: { session: 'cs_perm', text: 'Go on with the next step.' },
      });
      expect(brain.errors).toEqual(['rd_2: "permission_not_pending: session w7 has no pending permission request"']);
    });
  });

  describe('given a claude worker named in round after round', () => {
    it('when it was sent two messages, then it is stopped once, and later rounds leave it alone', () => {
      const brain = new ScenarioBrain((s) => roles[s]);
      const first = (n: number) => brain.reply(user(`round rd_${n}: cs_claude`));
      expect(first(1)).toMatchObject({ tool: 'mcp__brainstem__send_to_session' });
      brain.reply(toolResult('ok'));
      brain.reply(toolResult('ok'));
      expect(first(2)).toMatchObject({ tool: 'mcp__brainstem__send_to_session' });
      brain.reply(toolResult('ok'));
      brain.reply(toolResult('ok'));
      expect(first(3)).toEqual({ tool: 'mcp__brainstem__stop_session', input: { session: 'cs_claude' } });
      brain.reply(toolResult('ok'));
      brain.reply(toolResult('ok'));
      expect(first(4)).toMatchObject({ tool: 'mcp__brainstem__complete_round' });
    });
  });

  it('given a chat message, when asked, then it just notes it', () => {
    expect(new ScenarioBrain(() => undefined).reply(user('hello'))).toEqual({ text: 'Noted.' });
  });

  it('Given a round whose board lists every session before its reasons, Then it acts only on the sessions the reasons name', () => {
    const text = 'Supervision round rd_1 (turn 1).\n\nSessions (supervised, as the round started):\n  w1 (cs_a) working\n  w2 (cs_b) pending_authorization\n\nWhy you were woken:\n  - w2 (cs_b) waits (request perm_x)';
    expect(readRoundPrompt(text)).toEqual({ round_id: 'rd_1', sessions: ['cs_b'], permissions: new Map([['cs_b', ['perm_x']]]) });
  });
});
