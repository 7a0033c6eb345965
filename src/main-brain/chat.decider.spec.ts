import { JournalEvent } from '../journal/journal.port';
import { ChatCommand, ChatEvent, ChatState, decide, evolveChat, initialChatState, superviseCommand } from './chat.decider';

/** A decided event as the journal stores it at `seq`. */
const stored = (e: ChatEvent, seq: number): JournalEvent => ({
  seq,
  stream: 'chat',
  version: seq,
  type: e.type,
  at: '2026-11-26T10:00:00.000Z',
  data: e.data as unknown as JournalEvent['data'],
  meta: { actor: 'test', correlation_id: null, causation_seq: null },
  hash: 'h',
});

/** Decides, and folds what was decided as stored at `seq`. */
function step(state: ChatState, cmd: ChatCommand, seq: number) {
  const d = decide(cmd, state);
  return { state: d.events.reduce((s, e) => evolveChat(s, stored(e, seq)), state), events: d.events, error: d.error };
}

describe('chat decide/evolve', () => {
  it("Given a user's message, Then it is posted as the user's, addressed to no session", () => {
    const { events, error } = step(initialChatState, { type: 'post', role: 'user', text: 'hello' }, 1);
    expect(error).toBeUndefined();
    expect(events).toEqual([{ type: 'chat.message', data: { role: 'user', kind: 'message', text: 'hello', session_id: null } }]);
  });

  it("Given a user's message while no brain is connected, Then the notice saying so (and how to connect one) is posted right after it, in the same decision", () => {
    const notice = 'No brain is connected: … Follow GET /api/v1/session-os/main-brain/rounds/stream …';
    const { events } = step(initialChatState, { type: 'post', role: 'user', text: 'anyone there?', no_brain: notice }, 1);
    expect(events).toEqual([
      { type: 'chat.message', data: { role: 'user', kind: 'message', text: 'anyone there?', session_id: null } },
      { type: 'chat.message', data: { role: 'system', kind: 'notice', text: notice, session_id: null } },
    ]);
  });

  it("Given the user's /supervise with a goal, Then it is posted as a command, and the goal is what follows it", () => {
    const { events } = step(initialChatState, { type: 'post', role: 'user', text: ' /supervise  ship the release ' }, 1);
    expect(events[0].data).toMatchObject({ role: 'user', kind: 'command' });
    expect(superviseCommand(' /supervise  ship the release ')).toEqual({ goal: 'ship the release' });
    expect(superviseCommand('/supervise')).toEqual({ goal: undefined });
    expect(superviseCommand('please /supervise')).toBeNull();
  });

  it("Given the brain's text starting with /supervise, Then it is a plain message of the brain's, not a command", () => {
    const { events } = step(initialChatState, { type: 'post', role: 'brain', text: '/supervise now' }, 1);
    expect(events[0].data).toMatchObject({ role: 'brain', kind: 'message' });
  });

  it('Given /supervise with a goal too long for a task hint, Then it is refused as invalid input and nothing is posted', () => {
    const { events, error } = step(initialChatState, { type: 'post', role: 'user', text: `/supervise ${'x'.repeat(20_000)}` }, 1);
    expect(events).toEqual([]);
    expect(error).toMatchObject({ code: 'invalid_input', message: expect.stringContaining('/supervise: the goal becomes the task_hint') });
  });

  it("Given a worker's question, When the user answers it, Then the answer is addressed to the worker that asked and names the question", () => {
    const asked = step(initialChatState, { type: 'ask', session_id: 'cs_w1', question: 'Which region?' }, 7);
    expect(asked.events[0].data).toEqual({ role: 'worker', kind: 'question', text: 'Which region?', session_id: 'cs_w1' });
    const { events, error } = step(asked.state, { type: 'answer', question_seq: 7, text: 'eu-west' }, 8);
    expect(error).toBeUndefined();
    expect(events[0].data).toEqual({ role: 'user', kind: 'message', text: 'eu-west', session_id: 'cs_w1', answer_to: 7 });
  });

  it("Given a message that is not a worker's question, When the user answers it, Then the answer is refused naming the seq", () => {
    const posted = step(initialChatState, { type: 'post', role: 'user', text: 'just a note' }, 3);
    const notice = step(posted.state, { type: 'notice', text: 'a notice' }, 4);
    for (const seq of [3, 4, 99]) {
      const { events, error } = step(notice.state, { type: 'answer', question_seq: seq, text: 'answer' }, 5);
      expect(events).toEqual([]);
      expect(error).toEqual({ code: 'question_not_found', message: `answer_to: no worker's question at chat seq ${seq}` });
    }
  });

  it('Given a question answered already, Then it may be answered again (the worker may need a second answer)', () => {
    const asked = step(initialChatState, { type: 'ask', session_id: 'cs_w1', question: 'Which region?' }, 2);
    const once = step(asked.state, { type: 'answer', question_seq: 2, text: 'eu-west' }, 3);
    expect(step(once.state, { type: 'answer', question_seq: 2, text: 'eu-central' }, 4).events).toHaveLength(1);
  });

  it("Given the brain's words, a notice and a human-gate message, Then each is posted with its role, kind and reference", () => {
    expect(decide({ type: 'brain', kind: 'activity', text: '→ list_sessions {}', turn_id: 'bt_1' }, initialChatState).events[0].data).toEqual({
      role: 'brain',
      kind: 'activity',
      text: '→ list_sessions {}',
      session_id: null,
      turn_id: 'bt_1',
    });
    expect(decide({ type: 'notice', text: 'n' }, initialChatState).events[0].data).toEqual({ role: 'system', kind: 'notice', text: 'n', session_id: null });
    expect(decide({ type: 'confirmation', text: 'c', confirmation_id: 'cf_1' }, initialChatState).events[0].data).toEqual({
      role: 'system',
      kind: 'confirmation',
      text: 'c',
      session_id: null,
      confirmation_id: 'cf_1',
    });
  });

  it("Given supervision closed, Then a finished one posts the brain's wrap-up (or a notice without one) and any other reason a system notice", () => {
    const close = (reason: string, summary: string | null = null) => decide({ type: 'close', reason, summary }, initialChatState).events[0].data;
    expect(close('finished', 'All done.')).toEqual({ role: 'brain', kind: 'wrap_up', text: 'All done.', session_id: null });
    expect(close('finished')).toEqual({ role: 'brain', kind: 'notice', text: 'Supervision finished.', session_id: null });
    expect(close('max_turns')).toEqual({ role: 'system', kind: 'notice', text: 'Supervision closed: the turn cap was reached.', session_id: null });
    expect(close('something_new')).toMatchObject({ role: 'system', text: 'Supervision closed: something_new.' });
  });

  it('Given events that are not questions, Then the state is unchanged', () => {
    const s = evolveChat(initialChatState, stored({ type: 'chat.message', data: { role: 'user', kind: 'message', text: 'x', session_id: 'cs_1', answer_to: 2 } }, 5));
    expect(s).toBe(initialChatState);
  });
});
