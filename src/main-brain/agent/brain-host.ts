import { Logger } from '@nestjs/common';
import { Subscription, filter } from 'rxjs';
import { EventBus } from '../../bus/event-bus';
import { DomainError } from '../../common/domain-error';
import { SerialQueue } from '../../common/serial-queue';
import { FollowedStream } from '../../journal/followed-stream';
import { Fence, Journal, JournalEvent } from '../../journal/journal.port';
import { JsonObject } from '../../sessions/session.events';
import { RoundDriver } from '../../supervision/round-driver.port';
import { RoundView } from '../../supervision/round.view';
import { ChatService } from '../chat.service';
import { BrainActivity, BrainAgent, BrainTurnEnd } from './brain-agent.port';
import { activityText, chatInput, toChat } from './brain-chat-input';
import { BrainSpending, budgetNotice } from './brain-spending';
import {
  BrainCommand,
  BrainDecided,
  BrainState,
  ChatInput,
  ConversationReason,
  OpenSession,
  PendingConfirmation,
  brainTurnPrompt,
  conversationNotice,
  conversationToStart,
  decideBrain,
  evolveStoredBrain,
  initialBrainState,
  keptSummary,
  parkedUntil,
} from './brain-conversation';
import { LimitSettings } from '../../sessions/session-limit.model';

export const BRAIN_STREAM = 'main-brain';
/** The human gate's name for the brain's own runtime permission requests. */
export const BRAIN_PERMISSION = 'brain_permission';
/** How much of a turn's last text the journal keeps with its end (the chat has it whole). */
const TURN_TEXT_KEPT = 2000;

export interface BrainHostSettings {
  restore_ttl_ms: number;
  context_budget: number;
  /** The supervisor lease term the brain's appends are fenced by (it is hosted by the lease holder only). */
  fence?: () => Fence | undefined;
  /** What the brain spends, and the day budgets that stop it; none counted without it. */
  spending?: BrainSpending;
  /** How long a brain its model's limit refused waits (BRAINSTEM_LIMIT_*), and the jitter of its backoff, in [0, 1]. */
  limits: LimitSettings;
  jitter: () => number;
}

/** What the host reads of the rest of the service to seed a new conversation. */
export interface BrainSurroundings {
  goal(): string | null;
  openSessions(): OpenSession[];
  /** The brain's calls waiting for the user's confirmation. */
  pendingConfirmations(): PendingConfirmation[];
  /** A round's whole prompt, as journaled; null when there is no such round. */
  roundPrompt(roundId: string): string | null;
}

export interface BrainConversationView {
  runtime: string;
  pid: number | null;
  conversation_id: string | null;
  context_tokens: number;
  turns: number;
  turn_in_flight: string | null;
  waiting: { round: string | null; chat_messages: number };
  /** Parked at its model's limit: why, and when its next turn runs (ISO); null when it takes turns. */
  parked: { reason: 'usage_limit' | 'rate_limit'; resumes_at: string } | null;
}

interface PendingRound {
  round: RoundView;
  resolve: (result: { summary: string } | null) => void;
  reject: (error: Error) => void;
}

interface PendingPermission {
  request_id: string;
  input: JsonObject;
}

const reasonOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * The main brain, hosted: one agent conversation whose turns are supervision rounds and chat turns, one at a time. What
 * arrives during a turn (a user's message, a round) waits and goes into the next turn, merged; nothing is dropped. The
 * conversation id and every turn are journaled (stream `main-brain`), so a restart resumes the same conversation; when
 * it cannot be continued (context full, resume failed, idle past the restore TTL, over the context budget) a new one
 * starts, seeded with the summary Brainstem keeps. The brain's text reaches the chat as it is produced.
 */
export class BrainHost {
  /**
   * Stream main-brain, followed: only the lease holder hosts the brain and appends, fenced, but whatever another node
   * appended to it is in the state the next command is decided on.
   */
  private readonly stream: FollowedStream<BrainState>;
  private round: PendingRound | null = null;
  private chats: ChatInput[] = [];
  /** A user's message waits: the brain is woken for it. (Brainstem's own notices wait for the next turn.) */
  private woken = false;
  private running: { round: PendingRound | null; turn_id: string } | null = null;
  private booted = true;
  private closed = false;
  private sub: Subscription | null = null;
  private readonly appends = new SerialQueue();
  /** Confirmation id → the brain's permission request it stands for. */
  private readonly permissions = new Map<string, PendingPermission>();
  private readonly logger = new Logger('main-brain');
  /** The timer of the turn after the brain's limit resets. */
  private resumeTimer: NodeJS.Timeout | null = null;

  /** Waiting for the turn that runs to end: the next round starts then (see RoundDriver.ready). */
  private readonly idle: Array<() => void> = [];

  readonly driver: RoundDriver = {
    name: 'agent',
    ready: () => this.whenIdle(),
    deliver: (round, signal) => this.deliver(round, signal),
    pausedUntil: () => this.parkedUntil(),
  };

  constructor(
    private readonly bus: EventBus,
    journal: Journal,
    private readonly chat: ChatService,
    private readonly agent: BrainAgent,
    private readonly surroundings: BrainSurroundings,
    private readonly askUser: (call: { tool: string; args: Record<string, unknown>; description: string; actor: string }) => Promise<{ confirmation_id: string }>,
    private readonly settings: BrainHostSettings,
    private readonly now: () => number,
    private readonly newId: () => string,
    /** Settles once the service listens: the brain's MCP server is reachable only then. */
    private readonly ready: Promise<unknown> = Promise.resolve(),
  ) {
    this.stream = new FollowedStream(journal, BRAIN_STREAM, initialBrainState, evolveStoredBrain);
  }

  private get state(): BrainState {
    return this.stream.state;
  }

  get runtime(): string {
    return this.agent.runtime;
  }

  /** Whether the conversation runs on this node now: started (this node holds the supervisor lease) and not stopped. */
  get active(): boolean {
    return this.sub !== null && !this.closed;
  }

  /**
   * Rebuilds the conversation from the journal; a turn the last run left unfinished ends failed, and its messages wait
   * again. Also after stop() (this node lost the supervisor lease, and holds it again): the journal, which the node that
   * supervised meanwhile appended to, is the conversation's state, not what this host held before.
   */
  async start(): Promise<void> {
    this.round = null;
    this.chats = [];
    this.permissions.clear();
    this.booted = true;
    this.closed = false;
    await this.stream.start();
    const unfinished = this.state.turn;
    if (unfinished) {
      await this.command({ type: 'end_turn', turn_id: unfinished.turn_id, outcome: 'failed', text: null, reason: 'the service stopped during the turn', context_tokens: null });
    }
    const again = new Set(unfinished?.chat_seqs ?? []);
    // A brain hosted for the first time starts from now: the chat before it was not addressed to it.
    const since = this.state.runtime === null ? (this.chat.list(1)[0]?.seq ?? 0) : this.state.chat_seq_taken;
    for (const m of this.chat.list(2000)) {
      const input = chatInput(m);
      if (input && (m.seq > since || again.has(m.seq))) this.chats.push(input);
    }
    this.woken = this.chats.some((c) => c.role === 'user' && c.session_id === null);
    this.sub = this.bus.events$.pipe(filter((e) => e.type === 'chat.message' || e.type === 'confirmation.refused' || e.type === 'confirmation.expired')).subscribe((e) => this.onEvent(e as unknown as JournalEvent));
    this.armResume();
    this.kick();
  }

  stop(): Promise<void> {
    this.closed = true;
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = null;
    for (const resolve of this.idle.splice(0)) resolve();
    this.stream.stop();
    this.sub?.unsubscribe();
    return this.agent.close();
  }

  /** The view GET /main-brain/conversation gives. */
  view(): BrainConversationView {
    return {
      runtime: this.agent.runtime,
      pid: this.agent.pid,
      conversation_id: this.state.conversation_id,
      context_tokens: this.state.context_tokens,
      turns: this.state.turns,
      turn_in_flight: this.running?.turn_id ?? null,
      waiting: { round: this.round?.round.id ?? null, chat_messages: this.chats.length },
      parked: this.state.parked && this.parkedUntil() !== null ? { reason: this.state.parked.reason, resumes_at: new Date(this.state.parked.resumes_at).toISOString() } : null,
    };
  }

  /** Until when the brain is parked at its model's limit (epoch ms), or null when it takes turns. */
  private parkedUntil(): number | null {
    return parkedUntil(this.state, this.now());
  }

  /** The turn after the reset: armed from the journaled resumes_at, so a restart or a new leader arms it as well. */
  private armResume(): void {
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = null;
    const until = this.parkedUntil();
    if (until === null || this.closed) return;
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = null;
      this.kick();
    }, until - this.now());
  }

  /** Runs a confirmed permission request of the brain (the human gate's arguments): its runtime is told to go ahead. */
  allowPermission(args: Record<string, unknown>): { allowed: string } {
    const entry = [...this.permissions].find(([, p]) => p.request_id === args.request_id);
    if (!entry) throw new DomainError('conflict', 'the brain turn that asked has ended; nothing was allowed');
    this.permissions.delete(entry[0]);
    this.agent.resolvePermission(entry[1].request_id, 'allow', null, entry[1].input);
    return { allowed: entry[1].request_id };
  }

  /** Settles once no turn runs: a round ended by complete_round mid-turn waits for the brain's last words, not the next round. */
  private whenIdle(): Promise<void> {
    if (!this.running || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private deliver(round: RoundView, signal: AbortSignal): Promise<{ summary: string } | null> {
    // Stopped: this node does not hold the supervisor lease (its rounds are another node's), or the service is stopping.
    if (this.closed) return Promise.reject(new Error('the main brain is not hosted on this node now (it does not hold the supervisor lease, or it is stopping)'));
    const until = this.parkedUntil();
    // Refused at once: the round runner keeps its reasons for the first round after the reset.
    if (until !== null) return Promise.reject(new Error(`the main brain is parked at its model's limit until ${new Date(until).toISOString()}`));
    return new Promise((resolve, reject) => {
      const pending: PendingRound = { round, resolve, reject };
      // Supervision is single-flight, so a round never waits behind another round; only behind a chat turn.
      this.round = pending;
      signal.addEventListener(
        'abort',
        () => {
          if (this.round === pending) {
            this.round = null;
            resolve(null);
          } else if (this.running?.round === pending && signal.reason !== 'completed') {
            // Timed out or closed: a brain silent past the round's deadline is stopped; the next turn resumes it.
            this.agent.interrupt(`the round ${round.id} ${signal.reason === 'timed_out' ? 'timed out' : 'was interrupted'}`);
          }
        },
        { once: true },
      );
      this.kick();
    });
  }

  private onEvent(e: JournalEvent): void {
    if (e.type === 'chat.message') {
      const input = chatInput(toChat(e));
      if (!input || input.seq <= this.state.chat_seq_taken || this.chats.some((c) => c.seq === input.seq)) return;
      this.chats.push(input);
      if (input.role === 'user' && input.session_id === null) this.woken = true;
      this.kick();
      return;
    }
    const id = (e.data as { id?: unknown }).id;
    const p = typeof id === 'string' ? this.permissions.get(id) : undefined;
    if (!p || typeof id !== 'string') return;
    this.permissions.delete(id);
    const reason = e.type === 'confirmation.expired' ? 'the user did not answer in time' : ((e.data as { reason?: string | null }).reason ?? 'refused by the user');
    this.agent.resolvePermission(p.request_id, 'deny', reason, p.input);
  }

  private kick(): void {
    if (this.closed || this.running || (!this.round && !this.woken)) return;
    if (this.parkedUntil() !== null) return;
    if (this.overBudget()) return;
    const round = this.round;
    this.round = null;
    const chats = this.chats.splice(0);
    this.woken = false;
    const turnId = `bt_${this.newId()}`;
    this.running = { round, turn_id: turnId };
    this.runTurn(turnId, round, chats)
      .then(
        (end) => {
          if (!round) return;
          if (end.outcome === 'completed') round.resolve({ summary: end.text ?? 'The main brain ended its turn without a message.' });
          else round.reject(new Error(end.reason));
        },
        (e: unknown) => {
          this.logger.error(`a turn of the main brain could not run: ${reasonOf(e)}`);
          round?.reject(e instanceof Error ? e : new Error(String(e)));
        },
      )
      .finally(() => {
        this.running = null;
        this.booted = false;
        for (const resolve of this.idle.splice(0)) resolve();
        this.kick();
      });
  }

  /** A brain over its day budget (or Brainstem's) takes no turn: a waiting round fails with the reason, the chat waits. */
  private overBudget(): boolean {
    const stop = this.settings.spending?.stopped(this.now());
    if (!stop) return false;
    const round = this.round;
    this.round = null;
    round?.reject(new Error(stop.reason));
    if (stop.tell) this.notice(stop.reason).catch((e: unknown) => this.logger.error(`the brain's budget notice was not posted: ${reasonOf(e)}`));
    return true;
  }

  /** What a turn used, journaled with what it does to the day budgets; a runtime's garbage is logged and not counted. */
  private async recordUsage(turnId: string, usage: BrainActivity & { kind: 'turn_usage' }): Promise<void> {
    const id = this.state.conversation_id;
    const cmd = await this.settings.spending?.usageCommand(turnId, usage.entries, usage.cumulative && id !== null ? { conversation_id: id } : null);
    if (!cmd) return;
    if ('problem' in cmd) return this.logger.warn(`a turn of the main brain is not counted, its runtime reported ${cmd.problem}`);
    for (const e of await this.command(cmd)) {
      const text = budgetNotice(e);
      if (text !== null) await this.notice(text);
    }
  }

  /** One turn, tried again once in a new conversation when the old one cannot go on. */
  private async runTurn(turnId: string, round: PendingRound | null, chats: ChatInput[]): Promise<BrainTurnEnd> {
    await this.ready;
    const reason = conversationToStart(this.state, { runtime: this.agent.runtime, now: this.now(), booted: this.booted, ...this.settings });
    if (reason) await this.newConversation(reason);
    let end = await this.attempt(turnId, round, chats);
    if (end.outcome === 'failed' && (end.resume_failed || end.context_full) && !this.closed) {
      await this.newConversation(end.context_full ? 'context_full' : 'resume_failed');
      end = await this.attempt(`bt_${this.newId()}`, round, chats);
    }
    if (end.outcome === 'failed' && end.limit && !this.closed) await this.park(end.limit);
    else if (end.outcome === 'failed' && !this.closed) await this.notice(`The main brain's turn failed: ${end.reason}`);
    return end;
  }

  /** Refused by its model's limit: parked until the reset (journaled), the chat told once, and the turn after it armed. */
  private async park(limit: NonNullable<Extract<BrainTurnEnd, { outcome: 'failed' }>['limit']>): Promise<void> {
    const [e] = await this.command({ type: 'park', at: this.now(), limit: { ...limit, prompt: null }, settings: this.settings.limits, jitter: this.settings.jitter() });
    if (e?.type !== 'brain.parked') return;
    const d = e.data;
    const when = new Date(d.resumes_at).toISOString().slice(11, 16);
    const why = `${d.reason.replace('_', ' ')}${d.limit_type ? ` (${d.limit_type})` : ''}`;
    this.logger.warn(`the main brain is parked at its model's ${why} until ${new Date(d.resumes_at).toISOString()} (${d.source === 'runtime' ? 'its reset' : `backoff, refusal ${d.attempt} in a row`})`);
    await this.notice(`The main brain is paused at its model's ${why} until ${when} UTC. Rounds and your messages wait; the first round after it covers everything that came in meanwhile.`);
    this.armResume();
  }

  private async attempt(turnId: string, round: PendingRound | null, chats: ChatInput[]): Promise<BrainTurnEnd> {
    if (this.running) this.running.turn_id = turnId;
    const prompt = brainTurnPrompt({
      seed: this.state.seed,
      guided: this.state.guided,
      // The last round this conversation answered, from the journal: after a restart too, a round is what changed since.
      previous: this.state.last_round_id ? this.surroundings.roundPrompt(this.state.last_round_id) : null,
      round: round ? { id: round.round.id, prompt: round.round.prompt } : null,
      chats,
    });
    await this.command({ type: 'start_turn', turn_id: turnId, round_id: round?.round.id ?? null, chat_seqs: chats.map((c) => c.seq) });
    let contextTokens: number | null = null;
    let usage: (BrainActivity & { kind: 'turn_usage' }) | null = null;
    const posts = new SerialQueue();
    const post = (job: () => Promise<unknown>) => void posts.run(job).catch((e: unknown) => this.logger.error(`brain turn ${turnId}: ${reasonOf(e)}`));
    const end = await this.agent.turn(prompt, this.state.conversation_id, (a: BrainActivity) => {
      switch (a.kind) {
        case 'conversation':
          post(() => this.command({ type: 'identify_conversation', conversation_id: a.id }));
          break;
        case 'text_delta':
          this.chat.publishDelta({ turn_id: turnId, text: a.text });
          break;
        case 'text':
          post(() => this.chat.postBrain('message', a.text, turnId));
          break;
        case 'tool_use':
          post(() => this.chat.postBrain('activity', activityText(a.name, a.input), turnId));
          break;
        case 'usage':
          contextTokens = a.context_tokens;
          break;
        case 'turn_usage':
          usage = a;
          break;
        case 'api_error':
          post(() => this.notice(`The main brain's model API failed: ${a.message}`));
          break;
        case 'permission_requested':
          post(() => this.askPermission(a.request_id, a.tool, a.input));
          break;
      }
    });
    await posts.run(async () => undefined);
    const text = end.outcome === 'completed' ? end.text : null;
    await this.command({
      type: 'end_turn',
      turn_id: turnId,
      outcome: end.outcome,
      text: text === null ? null : text.slice(0, TURN_TEXT_KEPT),
      reason: end.outcome === 'failed' ? end.reason : null,
      context_tokens: contextTokens,
    });
    if (usage) await this.recordUsage(turnId, usage);
    return end;
  }

  private async newConversation(reason: ConversationReason): Promise<void> {
    const s = this.surroundings;
    const summary = reason === 'first' ? null : keptSummary({ reason, goal: s.goal(), sessions: s.openSessions(), confirmations: s.pendingConfirmations(), recent: this.state.recent });
    await this.command({ type: 'start_conversation', runtime: this.agent.runtime, reason, summary });
    if (reason !== 'first') await this.notice(conversationNotice(reason));
  }

  /** The brain's own runtime asks for a tool: the user decides through the human gate, never the service by itself. */
  private async askPermission(requestId: string, tool: string, input: JsonObject): Promise<void> {
    const shown = JSON.stringify(input);
    const description = `The main brain's runtime asks to use ${tool} with ${shown.length > 1000 ? `${shown.slice(0, 1000)}…` : shown}`;
    const { confirmation_id } = await this.askUser({ tool: BRAIN_PERMISSION, args: { request_id: requestId, tool, input }, description, actor: 'main_brain' });
    this.permissions.set(confirmation_id, { request_id: requestId, input });
  }

  private notice(text: string): Promise<unknown> {
    return this.chat.postNotice(text);
  }

  /** The one command path, one command at a time, fenced by the supervisor lease the brain is hosted under. */
  private command(cmd: BrainCommand): Promise<readonly BrainDecided[]> {
    return this.appends.run(async () => {
      const { events } = await this.stream.handle((state) => decideBrain(cmd, state), { fence: this.settings.fence?.() });
      return events;
    });
  }
}
