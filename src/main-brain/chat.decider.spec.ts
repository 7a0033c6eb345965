import { JournalEvent } from '../journal/journal.port';
import { ChatCommand, ChatEvent, ChatState, decide, evolveChat, initialChatState, openQuestion, superviseCommand } from './chat.decider';

/** The time the journal stamps an event stored at `seq` with. */
const atOf = (seq: number) => `2026-11-26T10:00:${String(seq).padStart(2, '0')}.000Z`;

/** A decided event as the journal stores it at `seq`. */
const stored = (e: ChatEvent, seq: number): JournalEvent => ({
  seq,
  stream: 'chat',
  version: seq,
  type: e.type,
  at: atOf(seq),
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
    expect(events[0].data).toEqual({ role: 'user', kind: 'message', text: 'eu-west', session_id: 'cs_w1', answer_to: 7, via: 'chat' });
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

  describe('a question is answered once', () => {
    const asked = step(initialChatState, { type: 'ask', session_id: 'cs_w1', question: 'Which database?' }, 2).state;
    const brainSent = (state: ChatState, seq: number, session_id = 'cs_w1') => step(state, { type: 'sent', session_id, text: 'sqlite', by: 'main_brain', via: 'send_to_session' }, seq);

    it('Given a question the user answered in the chat, When answer_to names it again, Then it is refused naming the user, the path, the time and the answer', () => {
      const once = step(asked, { type: 'answer', question_seq: 2, text: 'postgres' }, 3);
      const { events, error } = step(once.state, { type: 'answer', question_seq: 2, text: 'mysql' }, 4);
      expect(events).toEqual([]);
      expect(error).toEqual({
        code: 'question_already_answered',
        message:
          `answer_to: the worker's question at chat seq 2 is answered already: the user answered it by the chat's answer_to at ${atOf(3)} (chat seq 3). ` +
          'To tell the worker more, send it a message (POST /api/v1/coding-sessions/cs_w1/messages).',
        details: { question_seq: 2, session_id: 'cs_w1', answered_by: 'user', via: 'chat', answered_at: atOf(3), answer_seq: 3 },
      });
    });

    it("Given a worker's open question, When the brain's send_to_session reaches that worker, Then the brain's text is posted as the answer beside the question, and a later answer_to is refused naming the main brain", () => {
      const sent = brainSent(asked, 5);
      expect(sent.events).toEqual([
        { type: 'chat.message', data: { role: 'brain', kind: 'message', text: 'sqlite', session_id: 'cs_w1', answer_to: 2, via: 'send_to_session' } },
      ]);
      expect(openQuestion(sent.state, 'cs_w1')).toBeNull();
      const { events, error } = step(sent.state, { type: 'answer', question_seq: 2, text: 'sqlite' }, 6);
      expect(events).toEqual([]);
      expect(error).toMatchObject({
        code: 'question_already_answered',
        message: expect.stringContaining(`the main brain answered it by send_to_session at ${atOf(5)} (chat seq 5)`),
        details: { answered_by: 'main_brain', via: 'send_to_session', answered_at: atOf(5), answer_seq: 5 },
      });
    });

    it("Given a question the user answered with a message to its session (the dashboard's reply), Then that is the user's answer, by that path", () => {
      const { events, state } = step(asked, { type: 'sent', session_id: 'cs_w1', text: 'sqlite', by: 'user', via: 'session_messages' }, 4);
      expect(events[0].data).toEqual({ role: 'user', kind: 'message', text: 'sqlite', session_id: 'cs_w1', answer_to: 2, via: 'session_messages' });
      expect(step(state, { type: 'answer', question_seq: 2, text: 'x' }, 5).error).toMatchObject({ details: { answered_by: 'user', via: 'session_messages', answer_seq: 4 } });
    });

    it('Given no open question of that session (none asked, another session asked, or answered already), When a message reaches its worker, Then it is no answer and nothing is posted', () => {
      expect(brainSent(initialChatState, 3).events).toEqual([]);
      expect(brainSent(asked, 3, 'cs_w2').events).toEqual([]);
      const answered = brainSent(asked, 3).state;
      const again = brainSent(answered, 4);
      expect(again.events).toEqual([]);
      expect(again.state.answers.get(2)).toMatchObject({ seq: 3 });
    });

    it('Given an answered question, When the worker asks again, Then the new question is open (the next message answers it) and the old one stays answered', () => {
      const answered = step(asked, { type: 'answer', question_seq: 2, text: 'postgres' }, 3).state;
      const askedAgain = step(answered, { type: 'ask', session_id: 'cs_w1', question: 'Which version?' }, 4).state;
      expect(openQuestion(askedAgain, 'cs_w1')).toBe(4);
      expect(brainSent(askedAgain, 5).events[0].data).toMatchObject({ answer_to: 4 });
      expect(step(askedAgain, { type: 'answer', question_seq: 2, text: 'x' }, 5).error).toMatchObject({ code: 'question_already_answered', details: { answer_seq: 3 } });
      expect(step(askedAgain, { type: 'answer', question_seq: 4, text: '16' }, 5).events[0].data).toMatchObject({ answer_to: 4, via: 'chat' });
    });

    it("Given two open questions of one worker, When a message reaches it, Then it answers the latest (the one it waits on now); the earlier stays open to answer_to", () => {
      const twice = step(asked, { type: 'ask', session_id: 'cs_w1', question: 'Which version?' }, 3).state;
      const sent = brainSent(twice, 4);
      expect(sent.events[0].data).toMatchObject({ answer_to: 3 });
      expect(openQuestion(sent.state, 'cs_w1')).toBe(2);
      expect(step(sent.state, { type: 'answer', question_seq: 2, text: 'postgres' }, 5).error).toBeUndefined();
    });

    it('Given the chat replayed from the journal, in any order (an answer read before its question is recalled), Then the first answer (the lowest seq) is the one, and a question answered before the restart is refused after it', () => {
      const events: JournalEvent[] = [
        stored({ type: 'chat.message', data: { role: 'worker', kind: 'question', text: 'Which database?', session_id: 'cs_w1' } }, 2),
        stored({ type: 'chat.message', data: { role: 'brain', kind: 'message', text: 'sqlite', session_id: 'cs_w1', answer_to: 2, via: 'send_to_session' } }, 5),
        // An answer journaled before `via` was: it came by the chat.
        stored({ type: 'chat.message', data: { role: 'user', kind: 'message', text: 'mysql', session_id: 'cs_w1', answer_to: 2 } }, 7),
      ];
      const inOrder = events.reduce(evolveChat, initialChatState);
      const reversed = [...events].reverse().reduce(evolveChat, initialChatState);
      expect(inOrder.answers.get(2)).toEqual({ seq: 5, at: atOf(5), by: 'main_brain', via: 'send_to_session' });
      expect(reversed).toEqual(inOrder);
      expect(decide({ type: 'answer', question_seq: 2, text: 'x' }, inOrder).error).toMatchObject({ code: 'question_already_answered', details: { answered_by: 'main_brain' } });
      const legacy = [events[0], events[2]].reduce(evolveChat, initialChatState);
      expect(legacy.answers.get(2)).toEqual({ seq: 7, at: atOf(7), by: 'user', via: 'chat' });
    });
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

  it('Given events that are neither questions nor answers, Then the state is unchanged', () => {
    const s = evolveChat(initialChatState, stored({ type: 'chat.message', data: { role: 'user', kind: 'message', text: 'x', session_id: null } }, 5));
    expect(evolveChat(s, stored({ type: 'chat.message', data: { role: 'brain', kind: 'activity', text: '→ list_sessions {}', session_id: null, turn_id: 'bt_1' } }, 6))).toBe(initialChatState);
  });
});
