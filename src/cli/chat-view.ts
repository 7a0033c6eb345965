import type { ChatDelta, ChatMessage } from '../main-brain/chat.service';
import { printable } from './terminal-text';

/** What to write, and whether it leaves a line open (the brain still typing) rather than ending on a new line. */
export interface ChatOutput {
  text: string;
  open: boolean;
}

/**
 * The main chat as terminal text. The brain's reply is written as it types (chat.delta); its message, journaled once
 * the text is complete, is then not written again. The user's own lines are on the screen already (typed), so their
 * echo from the stream is skipped; messages posted elsewhere (the dashboard) are shown.
 */
/** Under a question: who answered it (a question from the history may be), else how to answer it. */
function answered(question: ChatMessage): string {
  const a = question.answered;
  if (!a) return `answer with: /answer ${question.seq} <text>`;
  return `answered by ${a.by === 'main_brain' ? 'the brain' : 'you'} (#${a.seq}, ${a.at})`;
}

export class ChatView {
  /** Text streamed per turn that no message has covered yet. */
  private readonly drafts = new Map<string, string>();
  /** The turn whose line is open (the cursor at its end). */
  private openTurn: string | null = null;
  private readonly sent: string[] = [];
  private lastSeq = 0;

  constructor(private readonly aliasOf: (sessionId: string) => string) {}

  /** A line the user sent from this terminal: its echo is not shown. */
  sentByMe(text: string): void {
    this.sent.push(text);
  }

  /** A line the service refused: no echo of it will come. */
  refused(text: string): void {
    const i = this.sent.indexOf(text);
    if (i >= 0) this.sent.splice(i, 1);
  }

  /** Something else was written on the open line's behalf (ended it): the turn's next text starts a new line. */
  interrupt(): void {
    this.openTurn = null;
  }

  delta(d: ChatDelta): ChatOutput {
    const text = printable(d.text);
    this.drafts.set(d.turn_id, (this.drafts.get(d.turn_id) ?? '') + d.text);
    if (this.openTurn === d.turn_id) return { text, open: true };
    const close = this.openTurn !== null ? '\n' : '';
    this.openTurn = d.turn_id;
    return { text: `${close}brain: ${text}`, open: true };
  }

  /** A message from the history or the stream; one already shown (by seq) is not shown again. */
  message(m: ChatMessage): ChatOutput {
    if (m.seq <= this.lastSeq) return { text: '', open: this.openTurn !== null };
    this.lastSeq = m.seq;
    const draft = m.turn_id !== undefined && m.role === 'brain' && m.kind === 'message' ? this.drafts.get(m.turn_id) : undefined;
    if (draft !== undefined && m.turn_id !== undefined && draft.startsWith(m.text)) {
      // Streamed already: the line ends once everything streamed of the turn is covered.
      const rest = draft.slice(m.text.length);
      if (rest === '') this.drafts.delete(m.turn_id);
      else this.drafts.set(m.turn_id, rest);
      if (this.openTurn !== m.turn_id || rest !== '') return { text: '', open: this.openTurn !== null };
      this.openTurn = null;
      return { text: '\n', open: false };
    }
    const line = this.line(m);
    const close = this.openTurn !== null && line !== null ? '\n' : '';
    if (line === null) return { text: '', open: this.openTurn !== null };
    this.openTurn = null;
    return { text: `${close}${line}\n`, open: false };
  }

  /** The message as a line of text, or null for the echo of the user's own line. */
  private line(m: ChatMessage): string | null {
    const text = printable(m.text);
    const mine = m.role === 'user' ? this.sent.indexOf(m.text) : -1;
    if (mine >= 0) {
      this.sent.splice(mine, 1);
      return null;
    }
    const who = m.session_id !== null ? this.aliasOf(m.session_id) : null;
    switch (m.role) {
      case 'user':
        return m.answer_to !== undefined ? `you (to #${m.answer_to}): ${text}` : `you: ${text}`;
      case 'brain':
        if (m.kind === 'activity') return `  ${text}`;
        if (m.answer_to !== undefined) return `brain (to #${m.answer_to}): ${text}`;
        return m.kind === 'wrap_up' ? `brain (wrap-up): ${text}` : `brain: ${text}`;
      case 'worker':
        return m.kind === 'question' ? `${who ?? 'a worker'} asks (#${m.seq}): ${text}\n  ${answered(m)}` : `${who ?? 'worker'}: ${text}`;
      case 'system':
        // Both a held call and what became of it: /confirm and /refuse (see /help) take the id.
        return m.kind === 'confirmation' && m.confirmation_id !== undefined ? `gate (${m.confirmation_id}): ${text}` : `· ${text}`;
    }
  }
}
