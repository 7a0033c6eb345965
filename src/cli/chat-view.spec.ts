import type { ChatMessage } from '../main-brain/chat.service';
import { ChatView } from './chat-view';

const message = (seq: number, m: Partial<ChatMessage>): ChatMessage => ({ seq, at: '2026-11-22T21:40:00.000Z', role: 'brain', kind: 'message', text: '', session_id: null, ...m });

describe('the chat as terminal text', () => {
  const view = () => new ChatView((id) => (id === 'cs_1' ? 'w1' : id));

  it("given the brain typing, writes its text as it comes and does not write its message again once it is journaled", () => {
    const v = view();
    expect(v.delta({ turn_id: 't1', text: 'Hi, ' })).toEqual({ text: 'brain: Hi, ', open: true });
    expect(v.delta({ turn_id: 't1', text: 'I am here.' })).toEqual({ text: 'I am here.', open: true });
    expect(v.message(message(5, { text: 'Hi, I am here.', turn_id: 't1' }))).toEqual({ text: '\n', open: false });
    // Then a second text block of the same turn starts a new line
    expect(v.delta({ turn_id: 't1', text: 'More.' })).toEqual({ text: 'brain: More.', open: true });
  });

  it('given a message while the brain types, ends its line first; the typed text is not written again when its message comes', () => {
    const v = view();
    v.delta({ turn_id: 't1', text: 'Looking' });
    expect(v.message(message(6, { role: 'system', kind: 'notice', text: 'Supervision turned off.' }))).toEqual({ text: '\n· Supervision turned off.\n', open: false });
    expect(v.message(message(7, { text: 'Looking', turn_id: 't1' }))).toEqual({ text: '', open: false });
  });

  it("skips the echo of the user's own line once, shows what was posted elsewhere, and shows a seq only once", () => {
    const v = view();
    v.sentByMe('hello');
    expect(v.message(message(1, { role: 'user', text: 'hello' })).text).toBe('');
    expect(v.message(message(2, { role: 'user', text: 'hello' })).text).toBe('you: hello\n');
    expect(v.message(message(2, { role: 'user', text: 'hello' })).text).toBe('');
    // A line the service refused has no echo to skip: the same text posted elsewhere later is shown
    v.sentByMe('again');
    v.refused('again');
    expect(v.message(message(3, { role: 'user', text: 'again' })).text).toBe('you: again\n');
  });

  it("names a worker's question by alias and says how to answer it; names a held call's id", () => {
    const v = view();
    expect(v.message(message(9, { role: 'worker', kind: 'question', text: 'Which DB?', session_id: 'cs_1' })).text).toBe('w1 asks (#9): Which DB?\n  answer with: /answer 9 <text>\n');
    expect(v.message(message(10, { role: 'system', kind: 'confirmation', text: 'Stop w1?', confirmation_id: 'cf_1' })).text).toBe('gate (cf_1): Stop w1?\n');
    expect(v.message(message(11, { kind: 'activity', text: '→ send_to_session {"session":"w1"}' })).text).toBe('  → send_to_session {"session":"w1"}\n');
  });

  it("shows an answer beside the question it answers, the brain's too; a question answered already says by whom instead of how to answer it", () => {
    const v = view();
    expect(v.message(message(12, { role: 'brain', text: 'postgres', session_id: 'cs_1', answer_to: 9, via: 'send_to_session' })).text).toBe('brain (to #9): postgres\n');
    expect(v.message(message(13, { role: 'user', text: '8080', session_id: 'cs_1', answer_to: 10, via: 'session_messages' })).text).toBe('you (to #10): 8080\n');
    const at = '2026-11-22T21:41:00.000Z';
    expect(v.message(message(14, { role: 'worker', kind: 'question', text: 'Which DB?', session_id: 'cs_1', answered: { by: 'main_brain', via: 'send_to_session', at, seq: 15 } })).text).toBe(
      `w1 asks (#14): Which DB?\n  answered by the brain (#15, ${at})\n`,
    );
    expect(v.message(message(16, { role: 'worker', kind: 'question', text: 'Port?', session_id: 'cs_1', answered: { by: 'user', via: 'chat', at, seq: 17 } })).text).toBe(`w1 asks (#16): Port?\n  answered by you (#17, ${at})\n`);
    expect(v.message(message(18, { role: 'worker', kind: 'question', text: 'Name?', session_id: 'cs_1', answered: null })).text).toBe('w1 asks (#18): Name?\n  answer with: /answer 18 <text>\n');
  });

  it("drops a worker's terminal escapes: it cannot move the cursor or retitle the window", () => {
    const v = view();
    const text = 'done\x1b[2J\x1b]0;pwned\x07 \x1b[31mred\x1b[0m\x07';
    expect(v.message(message(3, { role: 'worker', kind: 'message', text, session_id: 'cs_1' })).text).toBe('w1: done red\n');
  });
});
