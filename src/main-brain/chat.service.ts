import { Logger } from '@nestjs/common';
import { Observable, Subject, Subscription, filter, map, merge } from 'rxjs';
import { EventBus } from '../bus/event-bus';
import { DomainError } from '../common/domain-error';
import { SerialQueue } from '../common/serial-queue';
import { SseMessage, SseResume, sseEvents } from '../journal/audit';
import { CommandStream, handleCommand } from '../journal/command-handler';
import { Fence, Journal, JournalEvent } from '../journal/journal.port';
import { AutonomousView, SupervisionService } from '../supervision/supervision.service';
import { BrainPresence, noBrainNotice } from './brain-presence';
import type { MessageVia } from '../sessions/session.events';
import { ChatAnswer, ChatCommand, ChatEventMap, ChatKind, ChatRole, ChatState, decide, evolveChat, initialChatState, openQuestion, superviseCommand } from './chat.decider';

/** A piece of the hosted brain's text as it is produced: streamed, not journaled (the complete message is). */
export interface ChatDelta {
  turn_id: string;
  text: string;
}

/** Delivers the user's answer to a worker's question to that worker (a message from the user, by the chat). */
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
  /** On an answer: the path it reached the worker by. */
  via?: MessageVia;
  /** On a worker's question, as listed: its first answer (who, how, when, its seq), or null while it is open. */
  answered?: ChatAnswer | null;
}

export const CHAT_STREAM = 'chat';
const WATCHED = new Set<string>(['supervision.disabled', 'session.asked_human', 'session.message_dispatched']);
/** Messages kept in memory for listing; the journal keeps them all. */
const KEEP = 2000;

/**
 * The main chat between the human and the main brain; workers' questions and supervision notices land here. Every
 * message is a command of the chat's decider, appended at the stream's version; the stream is shared by the nodes of a
 * shared journal, so what they post is followed into the state and the list.
 */
export class ChatService {
  private messages: ChatMessage[] = [];
  private state: ChatState = initialChatState;
  /** The stream's version the state is at: commands append at it. */
  private version = 0;
  /** The first version read at boot: what came before it is read from the journal when asked for (recall). */
  private readFrom = 1;
  private sub: Subscription | null = null;
  private unfollow: (() => void) | null = null;
  /** Seqs of watched events other nodes appended: the node that appended one posts what it says, not this one. */
  private readonly foreign = new Set<number>();
  /** One command at a time: each is decided at the version the one before it left. */
  private readonly queue = new SerialQueue();
  private readonly logger = new Logger('chat');
  private readonly deltas = new Subject<ChatDelta>();
  readonly deltas$: Observable<ChatDelta> = this.deltas.asObservable();
  /** Who reads the chat now; set by the main brain's module once the brain is chosen. */
  private presence: (() => BrainPresence) | null = null;

  constructor(
    private readonly bus: EventBus,
    private readonly journal: Journal,
    private readonly supervision: SupervisionService,
    private readonly deliverAnswer: AnswerDelivery,
  ) {}

  async start(): Promise<void> {
    // What other nodes (a shared journal) post joins the state and the list as it arrives, from before it is read.
    const early: JournalEvent[] = [];
    let loaded = false;
    this.unfollow = this.journal.follow((e) => {
      if (e.stream === CHAT_STREAM) {
        if (loaded) this.fold(e);
        else early.push(e);
      } else if (WATCHED.has(e.type)) this.foreign.add(e.seq);
    });
    const head = await this.journal.streamVersion(CHAT_STREAM);
    const from = Math.max(1, head - KEEP + 1);
    this.version = from - 1;
    this.readFrom = from;
    for (const e of await this.journal.readStream(CHAT_STREAM, from)) this.fold(e);
    this.version = Math.max(this.version, head);
    loaded = true;
    for (const e of early) this.fold(e);
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

  /** Where the chat learns whether a brain reads it: a message posted while none does gets a notice saying so. */
  usePresence(presence: () => BrainPresence): void {
    this.presence = presence;
  }

  /** The seq of a session's open question in the chat (its latest not answered yet), or null. */
  openQuestionSeq(sessionId: string): number | null {
    return openQuestion(this.state, sessionId);
  }

  /** The latest messages; a worker's question says whether it is answered, and by whom. */
  list(limit = 200): ChatMessage[] {
    return this.messages.slice(-limit).map((m) => (m.kind === 'question' && m.role === 'worker' ? { ...m, answered: this.state.answers.get(m.seq) ?? null } : m));
  }

  /** A message from the human or the brain; `/supervise [goal]` from the human enables supervision and runs a round. */
  async post(text: string, role: 'user' | 'brain', actor: string, answerTo?: number): Promise<{ message: ChatMessage; autonomous?: AutonomousView | null }> {
    if (answerTo !== undefined) return this.answer(answerTo, text);
    // Judged as the message is posted: each message no brain is connected to read is followed by the notice.
    const presence = role === 'user' ? this.presence?.() : undefined;
    const message = await this.command({ type: 'post', role, text, ...(presence && !presence.connected ? { no_brain: noBrainNotice(presence) } : {}) });
    if (message.kind !== 'command') return { message };
    return { message, ...(await this.supervision.supervise(superviseCommand(text)?.goal, actor)) };
  }

  /**
   * The user's answer to a worker's question (the chat message at seq `questionSeq`): decided, delivered to that
   * worker, then appended (decided again), so the chat shows only answers that reached it. All of it in the queue: no
   * other answer (the brain's send_to_session meanwhile) is decided between this one's decision and its append.
   */
  answer(questionSeq: number, text: string): Promise<{ message: ChatMessage }> {
    const cmd: ChatCommand = { type: 'answer', question_seq: questionSeq, text };
    return this.queue.run(async () => {
      // Decided on what every node has journaled: an answer another node took is not delivered a second time here.
      await this.journal.catchUp();
      await this.recall(questionSeq);
      const decision = decide(cmd, this.state);
      if (decision.error) throw new DomainError(decision.error.code, decision.error.message, decision.error.details);
      await this.deliverAnswer(decision.events[0].data.session_id as string, text);
      return { message: toMessage((await this.handle(cmd))[0]) };
    });
  }

  /** What the hosted brain said (kind message) or did (kind activity) in a turn. */
  postBrain(kind: 'message' | 'activity', text: string, turnId: string): Promise<ChatMessage> {
    // Only the lease holder hosts the brain: what a stale one would still say is fenced off.
    return this.command({ type: 'brain', kind, text, turn_id: turnId }, this.supervision.fence());
  }

  postNotice(text: string): Promise<ChatMessage> {
    return this.command({ type: 'notice', text });
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
    return this.command({ type: 'confirmation', text, confirmation_id: confirmationId });
  }

  private readonly chatStream: CommandStream<ChatState> = {
    name: CHAT_STREAM,
    current: () => ({ state: this.state, version: this.version }),
    adopt: (state, version, stored) => {
      this.state = state;
      this.version = version;
      for (const e of stored) this.keep(toMessage(e));
    },
  };

  /** The one command path, in the queue: decided against the state, appended at the stream's version, applied; the message it posted. */
  private command(cmd: ChatCommand, fence?: Fence): Promise<ChatMessage> {
    return this.queue.run(async () => toMessage((await this.handle(cmd, fence))[0]));
  }

  /** A command decided and appended (inside the queue): the events it stored, none when it posts nothing. */
  private async handle(cmd: ChatCommand, fence?: Fence): Promise<readonly JournalEvent[]> {
    return (await handleCommand(this.journal, this.chatStream, (state) => decide(cmd, state), evolveChat, { fence })).stored;
  }

  /** An event of the stream another node appended (or read at boot): into the state and the list, once. */
  private fold(e: JournalEvent): void {
    if (e.version <= this.version) return;
    this.state = evolveChat(this.state, e);
    this.version = e.version;
    if (e.type === 'chat.message') this.keep(toMessage(e));
  }

  private keep(message: ChatMessage): void {
    this.messages.push(message);
    if (this.messages.length > KEEP) this.messages.splice(0, this.messages.length - KEEP);
  }

  /**
   * A question the state does not hold (older than the messages read at boot, or posted on another node and not
   * followed yet) is read from the journal: a stored question of the stream, folded as any other. Its answer may be
   * older than the messages read at boot too: the chat between the two is read for it, a page at a time.
   */
  private async recall(seq: number): Promise<void> {
    if (this.state.questions.has(seq) || !Number.isSafeInteger(seq) || seq < 1) return;
    const [e] = await this.journal.readAll(seq - 1, 1);
    if (e?.seq !== seq || e.stream !== CHAT_STREAM) return;
    this.state = evolveChat(this.state, e);
    for (let v = e.version + 1; v < this.readFrom && !this.state.answers.has(seq); v += KEEP) {
      for (const later of await this.journal.readStream(CHAT_STREAM, v, Math.min(KEEP, this.readFrom - v))) {
        if ((later.data as ChatEventMap['chat.message']).answer_to === seq) this.state = evolveChat(this.state, later);
      }
    }
  }

  private async onEvent(e: JournalEvent): Promise<void> {
    const d = (e.data ?? {}) as Record<string, unknown>;
    if (e.type === 'supervision.disabled') {
      // Every node follows the close; the supervisor alone posts it, fenced, so the chat has it once.
      const fence = this.supervision.fence();
      if (!fence) return;
      await this.command({ type: 'close', reason: String(d.reason), summary: typeof d.summary === 'string' ? d.summary : null }, fence);
    } else if (e.type === 'session.asked_human' && typeof d.question === 'string') {
      const sessionId = typeof d.session_id === 'string' ? d.session_id : e.stream.replace(/^session-/, '');
      await this.command({ type: 'ask', session_id: sessionId, question: d.question });
    } else if (e.type === 'session.message_dispatched' && typeof d.text === 'string' && (d.via === 'send_to_session' || d.via === 'session_messages')) {
      // A person's message to the worker (the chat's own answers, via chat, are journaled by answer()): it answers an open question.
      const by = e.meta.actor;
      if (by !== 'user' && by !== 'main_brain') return;
      await this.queue.run(() => this.handle({ type: 'sent', session_id: e.stream.replace(/^session-/, ''), text: d.text as string, by, via: d.via as 'send_to_session' | 'session_messages' }));
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
    ...(d.via !== undefined ? { via: d.via } : {}),
  };
}
