import { Decision, Refusal } from '../journal/command-handler';
import { JournalEvent } from '../journal/journal.port';
import { taskHintProblem } from '../supervision/supervision.machine';

/**
 * The main chat, pure: what a message posted to it journals (stream `chat`), and the little of the chat a decision
 * needs, the workers' questions an answer may refer to. decide() judges a command against the state; evolveChat()
 * folds a stored event into it, the fold of boot, of following other nodes and of the command path alike.
 */

export type ChatRole = 'user' | 'brain' | 'system' | 'worker';
/** `activity`: a tool call of the hosted brain, shown compactly. */
export type ChatKind = 'message' | 'command' | 'question' | 'notice' | 'wrap_up' | 'confirmation' | 'activity';

export interface ChatEventMap {
  /**
   * `confirmation_id` on a human-gate message (kind confirmation) only; `turn_id` on what the hosted brain said or did in
   * a turn; `answer_to` on the user's answer to a worker's question (its seq; session_id is then the worker's).
   */
  'chat.message': { role: ChatRole; kind: ChatKind; text: string; session_id: string | null; confirmation_id?: string; turn_id?: string; answer_to?: number };
}

declare module '../bus/domain-event' {
  interface DomainEventMap extends ChatEventMap {}
}

export type ChatEvent = { type: 'chat.message'; data: ChatEventMap['chat.message'] };

export interface ChatState {
  /** Workers' questions by their chat seq, each with the session that asked: what an answer may refer to. */
  questions: ReadonlyMap<number, string>;
}

export const initialChatState: ChatState = { questions: new Map() };

export type ChatCommand =
  /**
   * A message of the user's or the brain's; the user's `/supervise [goal]` is posted as a command. `no_brain`: no brain
   * is connected to read it, and the notice that says so (and how to connect one), posted right after it.
   */
  | { type: 'post'; role: 'user' | 'brain'; text: string; no_brain?: string }
  /** The user's answer to the worker's question at chat seq `question_seq`. */
  | { type: 'answer'; question_seq: number; text: string }
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
      return said({ role: 'user', kind: 'message', text: cmd.text, session_id: asker, answer_to: cmd.question_seq });
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

/** Folds a stored event of stream `chat`: a worker's question is remembered by its seq. */
export function evolveChat(state: ChatState, e: JournalEvent): ChatState {
  if (e.type !== 'chat.message') return state;
  const d = e.data as ChatEventMap['chat.message'];
  if (d.kind !== 'question' || d.session_id === null) return state;
  return { questions: new Map(state.questions).set(e.seq, d.session_id) };
}
