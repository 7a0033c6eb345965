import { Decision, Refusal } from '../journal/command-handler';
import { JournalEvent } from '../journal/journal.port';
import type { MessageVia } from '../sessions/session.events';
import { taskHintProblem } from '../supervision/supervision.machine';

/**
 * The main chat, pure: what a message posted to it journals (stream `chat`), and the little of the chat a decision
 * needs, the workers' questions an answer may refer to and whether each is answered. decide() judges a command against
 * the state; evolveChat() folds a stored event into it, the fold of boot, of following other nodes and of the command
 * path alike. A question is answered once: by the first message that reaches its worker from a person, whichever path
 * it came by (the chat's answer_to, the brain's send_to_session, a message to the session); a later answer_to is refused.
 */

export type ChatRole = 'user' | 'brain' | 'system' | 'worker';
/** `activity`: a tool call of the hosted brain, shown compactly. */
export type ChatKind = 'message' | 'command' | 'question' | 'notice' | 'wrap_up' | 'confirmation' | 'activity';

export interface ChatEventMap {
  /**
   * `confirmation_id` on a human-gate message (kind confirmation) only; `turn_id` on what the hosted brain said or did in
   * a turn; `answer_to` on the answer to a worker's question (its seq; session_id is then the worker's), with `via`, the
   * path it reached the worker by (absent on answers journaled before it was recorded: they came by the chat). The role
   * says who answered: the user, or the brain.
   */
  'chat.message': {
    role: ChatRole;
    kind: ChatKind;
    text: string;
    session_id: string | null;
    confirmation_id?: string;
    turn_id?: string;
    answer_to?: number;
    via?: MessageVia;
  };
}

declare module '../bus/domain-event' {
  interface DomainEventMap extends ChatEventMap {}
}

export type ChatEvent = { type: 'chat.message'; data: ChatEventMap['chat.message'] };

/** Who answered a worker's question, how, when (ISO) and where: the answer's chat seq. */
export interface ChatAnswer {
  seq: number;
  at: string;
  by: 'user' | 'main_brain';
  via: MessageVia;
}

export interface ChatState {
  /** Workers' questions by their chat seq, each with the session that asked: what an answer may refer to. */
  questions: ReadonlyMap<number, string>;
  /** The first answer to each answered question, by the question's seq (an answer may be folded before its question is recalled). */
  answers: ReadonlyMap<number, ChatAnswer>;
}

export const initialChatState: ChatState = { questions: new Map(), answers: new Map() };

export type ChatCommand =
  /**
   * A message of the user's or the brain's; the user's `/supervise [goal]` is posted as a command. `no_brain`: no brain
   * is connected to read it, and the notice that says so (and how to connect one), posted right after it.
   */
  | { type: 'post'; role: 'user' | 'brain'; text: string; no_brain?: string }
  /** The user's answer in the chat (answer_to) to the worker's question at chat seq `question_seq`. */
  | { type: 'answer'; question_seq: number; text: string }
  /**
   * A person's message reached a worker by another path: it answers that worker's open question (its latest), if it has
   * one, and is then shown in the chat beside it; else it is no answer, and nothing is posted.
   */
  | { type: 'sent'; session_id: string; text: string; by: 'user' | 'main_brain'; via: 'send_to_session' | 'session_messages' }
  /** What the hosted brain said (message) or did (activity) in a turn. */
  | { type: 'brain'; kind: 'message' | 'activity'; text: string; turn_id: string }
  | { type: 'notice'; text: string }
  /** The human gate: a call waiting for the user, and what became of it. */
  | { type: 'confirmation'; text: string; confirmation_id: string }
  /** A worker asked the human. */
  | { type: 'ask'; session_id: string; question: string }
  /** Supervision closed, for `reason`; a finished one may leave the brain's wrap-up `summary`. */
  | { type: 'close'; reason: string; summary: string | null };

const SUPERVISE = /^\/supervise(?:\s+([\s\S]*))?$/;

const CLOSE_NOTICE: Record<string, string> = {
  max_turns: 'Supervision closed: the turn cap was reached.',
  converged: 'Supervision closed: no supervised worker is left (converged).',
  workflow_converged: 'Supervision closed: the workflow run that started it converged.',
  disabled: 'Supervision turned off.',
  restore_expired: 'Supervision was not restored after the restart: its snapshot was older than the restore TTL.',
  no_recoverable_worker: 'Supervision was not restored after the restart: no supervised worker survived.',
};

/** The user's `/supervise [goal]`: the goal it names (undefined for none); null when the text is not that command. */
export function superviseCommand(text: string): { goal: string | undefined } | null {
  const m = SUPERVISE.exec(text.trim());
  return m ? { goal: m[1]?.trim() || undefined } : null;
}

const ANSWERER: Record<ChatAnswer['by'], string> = { user: 'the user', main_brain: 'the main brain' };
const PATH: Record<MessageVia, string> = {
  chat: "the chat's answer_to",
  send_to_session: 'send_to_session',
  session_messages: 'a message to its session',
};

/** The refusal of a second answer_to: who answered the question, how, when, and the answer's seq. */
function alreadyAnswered(questionSeq: number, sessionId: string, a: ChatAnswer): Refusal {
  return {
    code: 'question_already_answered',
    message:
      `answer_to: the worker's question at chat seq ${questionSeq} is answered already: ${ANSWERER[a.by]} answered it by ${PATH[a.via]} at ${a.at} ` +
      `(chat seq ${a.seq}). To tell the worker more, send it a message (POST /api/v1/coding-sessions/${sessionId}/messages).`,
    details: { question_seq: questionSeq, session_id: sessionId, answered_by: a.by, via: a.via, answered_at: a.at, answer_seq: a.seq },
  };
}

/** The session's latest question not answered yet, or null. */
export function openQuestion(state: ChatState, sessionId: string): number | null {
  let open: number | null = null;
  for (const [seq, asker] of state.questions) if (asker === sessionId && !state.answers.has(seq) && (open === null || seq > open)) open = seq;
  return open;
}

const said = (data: ChatEventMap['chat.message']): Decision<ChatEvent> => ({ events: [{ type: 'chat.message', data }] });
const refuse = (error: Refusal): Decision<ChatEvent> => ({ events: [], error });

export function decide(cmd: ChatCommand, state: ChatState): Decision<ChatEvent> {
  switch (cmd.type) {
    case 'post': {
      const command = cmd.role === 'user' ? superviseCommand(cmd.text) : null;
      // Refused before the command is posted, so a goal supervision would refuse leaves no trace in the chat.
      const problem = command ? taskHintProblem(command.goal) : null;
      if (problem) return refuse({ code: 'invalid_input', message: `/supervise: the goal becomes the ${problem}` });
      const posted = said({ role: cmd.role, kind: command ? 'command' : 'message', text: cmd.text, session_id: null });
      if (cmd.no_brain === undefined) return posted;
      return { events: [...posted.events, { type: 'chat.message', data: { role: 'system', kind: 'notice', text: cmd.no_brain, session_id: null } }] };
    }
    case 'answer': {
      const asker = state.questions.get(cmd.question_seq);
      if (asker === undefined) return refuse({ code: 'question_not_found', message: `answer_to: no worker's question at chat seq ${cmd.question_seq}` });
      const answered = state.answers.get(cmd.question_seq);
      if (answered) return refuse(alreadyAnswered(cmd.question_seq, asker, answered));
      return said({ role: 'user', kind: 'message', text: cmd.text, session_id: asker, answer_to: cmd.question_seq, via: 'chat' });
    }
    case 'sent': {
      const question = openQuestion(state, cmd.session_id);
      if (question === null) return { events: [] };
      return said({ role: cmd.by === 'main_brain' ? 'brain' : 'user', kind: 'message', text: cmd.text, session_id: cmd.session_id, answer_to: question, via: cmd.via });
    }
    case 'brain':
      return said({ role: 'brain', kind: cmd.kind, text: cmd.text, session_id: null, turn_id: cmd.turn_id });
    case 'notice':
      return said({ role: 'system', kind: 'notice', text: cmd.text, session_id: null });
    case 'confirmation':
      return said({ role: 'system', kind: 'confirmation', text: cmd.text, session_id: null, confirmation_id: cmd.confirmation_id });
    case 'ask':
      return said({ role: 'worker', kind: 'question', text: cmd.question, session_id: cmd.session_id });
    case 'close':
      if (cmd.reason === 'finished') return said({ role: 'brain', kind: cmd.summary ? 'wrap_up' : 'notice', text: cmd.summary ?? 'Supervision finished.', session_id: null });
      return said({ role: 'system', kind: 'notice', text: CLOSE_NOTICE[cmd.reason] ?? `Supervision closed: ${cmd.reason}.`, session_id: null });
  }
}

/**
 * Folds a stored event of stream `chat`: a worker's question is remembered by its seq, and its first answer (the lowest
 * seq, in whatever order they are folded) as who answered it, how and when.
 */
export function evolveChat(state: ChatState, e: JournalEvent): ChatState {
  if (e.type !== 'chat.message') return state;
  const d = e.data as ChatEventMap['chat.message'];
  if (d.kind === 'question' && d.session_id !== null) return { ...state, questions: new Map(state.questions).set(e.seq, d.session_id) };
  if (d.answer_to === undefined) return state;
  const first = state.answers.get(d.answer_to);
  if (first && first.seq <= e.seq) return state;
  const answer: ChatAnswer = { seq: e.seq, at: e.at, by: d.role === 'brain' ? 'main_brain' : 'user', via: d.via ?? 'chat' };
  return { ...state, answers: new Map(state.answers).set(d.answer_to, answer) };
}
