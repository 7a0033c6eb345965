import { Logger } from '@nestjs/common';
import { Observable, Subject, Subscription, filter, map, merge } from 'rxjs';
import { EventBus } from '../bus/event-bus';
import { DomainError } from '../common/domain-error';
import { SseMessage, SseResume, sseEvents } from '../journal/audit';
import { Fence, Journal, JournalEvent } from '../journal/journal.port';
import { AutonomousView, SupervisionService } from '../supervision/supervision.service';
import { taskHintProblem } from '../supervision/supervision.machine';

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

/** A piece of the hosted brain's text as it is produced: streamed, not journaled (the complete message is). */
export interface ChatDelta {
  turn_id: string;
  text: string;
}

/** Delivers the user's answer to a worker's question to that worker. */
export type AnswerDelivery = (sessionId: string, text: string) => Promise<unknown>;

export interface ChatMessage {
  seq: number;
  at: string;
  role: ChatRole;
  kind: ChatKind;
  text: string;
  session_id: string | null;
  confirmation_id?: string;
  turn_id?: string;
  answer_to?: number;
}

export const CHAT_STREAM = 'chat';
const SUPERVISE = /^\/supervise(?:\s+([\s\S]*))?$/;
const WATCHED = new Set<string>(['supervision.disabled', 'session.asked_human']);
/** Messages kept in memory for listing; the journal keeps them all. */
const KEEP = 2000;

const CLOSE_NOTICE: Record<string, string> = {
  max_turns: 'Supervision closed: the turn cap was reached.',
  converged: 'Supervision closed: no supervised worker is left (converged).',
  workflow_converged: 'Supervision closed: the workflow run that started it converged.',
  disabled: 'Supervision turned off.',
  restore_expired: 'Supervision was not restored after the restart: its snapshot was older than the restore TTL.',
  no_recoverable_worker: 'Supervision was not restored after the restart: no supervised worker survived.',
};

/** The main chat between the human and the main brain; workers' questions and supervision notices land here. */
export class ChatService {
  private messages: ChatMessage[] = [];
  private sub: Subscription | null = null;
  private unfollow: (() => void) | null = null;
  /** Seqs of watched events other nodes appended: the node that appended one posts what it says, not this one. */
  private readonly foreign = new Set<number>();
  private readonly logger = new Logger('chat');
  private readonly deltas = new Subject<ChatDelta>();
  readonly deltas$: Observable<ChatDelta> = this.deltas.asObservable();

  constructor(
    private readonly bus: EventBus,
    private readonly journal: Journal,
    private readonly supervision: SupervisionService,
    private readonly deliverAnswer: AnswerDelivery,
  ) {}

  async start(): Promise<void> {
    // Messages posted on other nodes (a shared journal) join the list as they arrive, from before it is read.
    const early: ChatMessage[] = [];
    let loaded = false;
    this.unfollow = this.journal.follow((e) => {
      if (e.stream === CHAT_STREAM && e.type === 'chat.message') {
        if (loaded) this.keep(toMessage(e));
        else early.push(toMessage(e));
      } else if (WATCHED.has(e.type)) this.foreign.add(e.seq);
    });
    const version = await this.journal.streamVersion(CHAT_STREAM);
    const events = await this.journal.readStream(CHAT_STREAM, Math.max(1, version - KEEP + 1));
    this.messages = events.map(toMessage);
    loaded = true;
    for (const m of early) if (m.seq > (this.messages[this.messages.length - 1]?.seq ?? 0)) this.keep(m);
    this.sub = this.bus.events$
      .pipe(filter((e) => WATCHED.has(e.type)))
      .subscribe((e) => {
        if (this.foreign.delete(e.seq)) return;
        // A notice or a worker's question that could not be posted is logged: nobody else waits for it.
        this.onEvent(e as unknown as JournalEvent).catch((err: unknown) =>
          this.logger.error(`posting to the chat what ${e.type} of ${e.stream} (seq ${e.seq}) says failed: ${(err as Error)?.message ?? String(err)}`),
        );
      });
  }

  stop(): void {
    this.unfollow?.();
    this.sub?.unsubscribe();
    this.deltas.complete();
  }

  list(limit = 200): ChatMessage[] {
    return this.messages.slice(-limit);
  }

  /** A message from the human or the brain; `/supervise [goal]` from the human enables supervision and runs a round. */
  async post(text: string, role: 'user' | 'brain', actor: string, answerTo?: number): Promise<{ message: ChatMessage; autonomous?: AutonomousView | null }> {
    if (answerTo !== undefined) return this.answer(answerTo, text);
    const command = role === 'user' ? SUPERVISE.exec(text.trim()) : null;
    const goal = command?.[1]?.trim() || undefined;
    // Refused before the command is posted, so a goal supervision would refuse leaves no trace in the chat.
    const problem = taskHintProblem(goal);
    if (problem) throw new DomainError('invalid_input', `/supervise: the goal becomes the ${problem}`);
    const message = await this.append(role, command ? 'command' : 'message', text, null);
    if (!command) return { message };
    return { message, ...(await this.supervision.supervise(goal, actor)) };
  }

  /**
   * The user's answer to a worker's question (the chat message at seq `questionSeq`): delivered to that worker, then
   * posted, so the chat shows only answers that reached it.
   */
  async answer(questionSeq: number, text: string): Promise<{ message: ChatMessage }> {
    const question = this.messages.find((m) => m.seq === questionSeq) ?? (await this.fromJournal(questionSeq));
    if (!question || question.kind !== 'question' || question.session_id === null) {
      throw new DomainError('question_not_found', `answer_to: no worker's question at chat seq ${questionSeq}`);
    }
    await this.deliverAnswer(question.session_id, text);
    return { message: await this.append('user', 'message', text, question.session_id, { answer_to: questionSeq }) };
  }

  /** What the hosted brain said (kind message) or did (kind activity) in a turn. */
  postBrain(kind: 'message' | 'activity', text: string, turnId: string): Promise<ChatMessage> {
    // Only the lease holder hosts the brain: what a stale one would still say is fenced off.
    return this.append('brain', kind, text, null, { turn_id: turnId }, this.supervision.fence());
  }

  postNotice(text: string): Promise<ChatMessage> {
    return this.append('system', 'notice', text, null);
  }

  /** The chat as SSE: its messages from the journal (resumable by seq), and the brain's deltas live, without an id. */
  stream(resume: SseResume): Observable<SseMessage | { type: 'chat.delta'; data: ChatDelta }> {
    const deltas = this.deltas$.pipe(map((data) => ({ type: 'chat.delta' as const, data })));
    return merge(sseEvents(this.journal, resume, (e) => e.stream === CHAT_STREAM), deltas);
  }

  publishDelta(delta: ChatDelta): void {
    this.deltas.next(delta);
  }

  /** The human gate's messages: a call waiting for the user, and what became of it. */
  postConfirmation(text: string, confirmationId: string): Promise<ChatMessage> {
    return this.append('system', 'confirmation', text, null, { confirmation_id: confirmationId });
  }

  private async append(
    role: ChatRole,
    kind: ChatKind,
    text: string,
    sessionId: string | null,
    extra: Pick<ChatMessage, 'confirmation_id' | 'turn_id' | 'answer_to'> = {},
    fence?: Fence,
  ): Promise<ChatMessage> {
    const data = { role, kind, text, session_id: sessionId, ...extra };
    let message: ChatMessage | undefined;
    await this.bus.emit(CHAT_STREAM, [{ type: 'chat.message', data } as never], {
      fence,
      apply: ({ events }) => {
        message = toMessage(events[0]);
        this.keep(message);
      },
    });
    return message as ChatMessage;
  }

  private keep(message: ChatMessage): void {
    this.messages.push(message);
    if (this.messages.length > KEEP) this.messages.splice(0, this.messages.length - KEEP);
  }

  /** A message older than those kept in memory. */
  private async fromJournal(seq: number): Promise<ChatMessage | null> {
    const [e] = await this.journal.readAll(seq - 1, 1);
    return e && e.stream === CHAT_STREAM && e.type === 'chat.message' ? toMessage(e) : null;
  }

  private async onEvent(e: JournalEvent): Promise<void> {
    const d = (e.data ?? {}) as Record<string, unknown>;
    if (e.type === 'supervision.disabled') {
      // Every node follows the close; the supervisor alone posts it, fenced, so the chat has it once.
      const fence = this.supervision.fence();
      if (!fence) return;
      const summary = typeof d.summary === 'string' ? d.summary : null;
      if (d.reason === 'finished') await this.append('brain', summary ? 'wrap_up' : 'notice', summary ?? 'Supervision finished.', null, {}, fence);
      else await this.append('system', 'notice', CLOSE_NOTICE[d.reason as string] ?? `Supervision closed: ${String(d.reason)}.`, null, {}, fence);
    } else if (e.type === 'session.asked_human' && typeof d.question === 'string') {
      const sessionId = typeof d.session_id === 'string' ? d.session_id : e.stream.replace(/^session-/, '');
      await this.append('worker', 'question', d.question, sessionId);
    }
  }
}

function toMessage(e: JournalEvent): ChatMessage {
  const d = e.data as ChatEventMap['chat.message'];
  return {
    seq: e.seq,
    at: e.at,
    role: d.role,
    kind: d.kind,
    text: d.text,
    session_id: d.session_id,
    ...(d.confirmation_id !== undefined ? { confirmation_id: d.confirmation_id } : {}),
    ...(d.turn_id !== undefined ? { turn_id: d.turn_id } : {}),
    ...(d.answer_to !== undefined ? { answer_to: d.answer_to } : {}),
  };
}
