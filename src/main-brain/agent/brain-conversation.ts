import { Decision } from '../../journal/command-handler';
import { JournalEvent } from '../../journal/journal.port';
import { promptAfterGuide, promptDelta, quoteWorkerData } from '../../supervision/round-prompt';
import { BudgetLine, BudgetScope, BudgetUnit, crossings } from '../../usage/budget.rules';
import { PricedUsage, addTurn } from '../../usage/usage.model';
import { LimitHit, LimitReason, LimitSettings, resumeTime } from '../../sessions/session-limit.model';

/** Why the brain's conversation is a new one. */
export type ConversationReason = 'first' | 'runtime_changed' | 'restore_expired' | 'context_budget' | 'context_full' | 'resume_failed';

export type BrainTurnOutcome = 'completed' | 'failed';

/** Journaled on stream `main-brain`: the hosted brain's one conversation, and its turns. */
export interface BrainEventMap {
  /** A new conversation; `summary` seeds its first turn (null for the very first one). */
  'brain.conversation_started': { runtime: string; reason: ConversationReason; summary: string | null };
  /** The runtime named the conversation (claude's session id, codex's thread id): a restart resumes it. */
  'brain.conversation_identified': { conversation_id: string };
  /** A turn: a round (round_id), the user's chat messages (their seqs), or both merged. */
  'brain.turn_started': { turn_id: string; round_id: string | null; chat_seqs: number[] };
  'brain.turn_ended': { turn_id: string; outcome: BrainTurnOutcome; text: string | null; reason: string | null; context_tokens: number | null };
  /** One model's usage of a turn of the brain (several models in a turn: one each, with the same turn_id). */
  'brain.usage': { turn_id: string; conversation_id: string | null; runtime: string | null } & PricedUsage;
  /** A turn took the brain's day budget, or Brainstem's, past 80%. */
  'brain.budget_warning': BrainBudgetCrossing;
  /** A turn reached the brain's day budget, or Brainstem's: the brain takes no turns until it has room again. */
  'brain.budget_exceeded': BrainBudgetCrossing;
  /**
   * A turn its model's limit refused (docs/guide/usage.md#usage-limits): the brain takes no turn until `resumes_at`;
   * rounds and chat messages wait for it. `attempt`: which refusal in a row (the backoff grows with it).
   */
  'brain.parked': { reason: LimitReason; resumes_at: number; source: 'runtime' | 'backoff'; limit_type: string | null; attempt: number };
}

export interface BrainBudgetCrossing {
  scope: BudgetScope;
  unit: BudgetUnit;
  used: number;
  limit: number;
}

declare module '../../bus/domain-event' {
  interface DomainEventMap extends BrainEventMap {}
}

export type BrainEventType = keyof BrainEventMap;
export type BrainEvent = { [K in BrainEventType]: { type: K; data: BrainEventMap[K]; at: number } }[BrainEventType];

export interface BrainTurnView {
  turn_id: string;
  round_id: string | null;
  chat_seqs: number[];
}

export interface BrainState {
  runtime: string | null;
  conversation_id: string | null;
  /** The kept summary the next turn opens with: set by a new conversation, spent by its first turn. */
  seed: string | null;
  /** Whether a turn of this conversation took a round: it read the rounds' guide, which later rounds leave out. */
  guided: boolean;
  /** The round of this conversation's last turn that ended answered: the brain read its prompt, so the next round is sent as what changed since. */
  last_round_id: string | null;
  context_tokens: number;
  turn: BrainTurnView | null;
  /** The newest chat seq a turn took in: messages after it still wait for the brain. */
  chat_seq_taken: number;
  /** The brain's last words of its recent turns (its decisions), newest last. */
  recent: string[];
  turns: number;
  last_at: number;
  /** Parked at its model's limit until `resumes_at` (its next turn unparks it), or null. */
  parked: { reason: LimitReason; resumes_at: number; attempt: number } | null;
}

/** How many of the brain's recent turns the kept summary recalls. */
export const RECENT_KEPT = 8;
/** The most the summary keeps of one turn's text, in characters. */
export const RECENT_MAX_CHARS = 600;

export const initialBrainState: BrainState = {
  runtime: null,
  conversation_id: null,
  seed: null,
  guided: false,
  last_round_id: null,
  context_tokens: 0,
  turn: null,
  chat_seq_taken: 0,
  recent: [],
  turns: 0,
  last_at: 0,
  parked: null,
};

export function evolveBrain(state: BrainState, event: BrainEvent): BrainState {
  const next = { ...state, last_at: event.at };
  switch (event.type) {
    case 'brain.conversation_started':
      return { ...next, runtime: event.data.runtime, conversation_id: null, seed: event.data.summary, guided: false, last_round_id: null, context_tokens: 0 };
    case 'brain.conversation_identified':
      return { ...next, conversation_id: event.data.conversation_id };
    case 'brain.turn_started': {
      const taken = Math.max(state.chat_seq_taken, ...event.data.chat_seqs);
      // Its turn after the reset: unparked, though the count of refusals in a row holds until a turn is answered.
      const parked = state.parked ? { ...state.parked, resumes_at: 0 } : null;
      return { ...next, seed: null, guided: state.guided || event.data.round_id !== null, turn: { ...event.data }, chat_seq_taken: taken, turns: state.turns + 1, parked };
    }
    case 'brain.turn_ended': {
      const { text, context_tokens } = event.data;
      const recent = text ? [...state.recent, text.slice(0, RECENT_MAX_CHARS)].slice(-RECENT_KEPT) : state.recent;
      const read = event.data.outcome === 'completed' && state.turn?.turn_id === event.data.turn_id ? state.turn.round_id : null;
      const parked = event.data.outcome === 'completed' ? null : state.parked;
      return { ...next, turn: null, recent, last_round_id: read ?? state.last_round_id, context_tokens: context_tokens ?? state.context_tokens, parked };
    }
    case 'brain.parked': {
      const { reason, resumes_at, attempt } = event.data;
      return { ...next, parked: { reason, resumes_at, attempt } };
    }
    // Spending is the usage projection's to sum; the conversation's state does not change with it.
    case 'brain.usage':
    case 'brain.budget_warning':
    case 'brain.budget_exceeded':
      return state;
  }
}

/** Folds a stored event of stream `main-brain`: the fold of boot, of following and of the command path alike. */
export const evolveStoredBrain = (state: BrainState, e: JournalEvent): BrainState => evolveBrain(state, { type: e.type, data: e.data, at: Date.parse(e.at) } as BrainEvent);

/** What the host journals of its conversation and turns, as commands. */
export type BrainCommand =
  | { type: 'start_conversation'; runtime: string; reason: ConversationReason; summary: string | null }
  | { type: 'identify_conversation'; conversation_id: string }
  | { type: 'start_turn'; turn_id: string; round_id: string | null; chat_seqs: number[] }
  | { type: 'end_turn'; turn_id: string; outcome: BrainTurnOutcome; text: string | null; reason: string | null; context_tokens: number | null }
  /** What a turn used (priced), and the day budgets it counts against, with what they had used before it. */
  | { type: 'record_usage'; turn_id: string; entries: readonly PricedUsage[]; budgets: readonly BudgetLine[] }
  /** A turn its model's limit refused: when the brain goes on (the runtime's reset, else a backoff with `jitter` in [0, 1]). */
  | { type: 'park'; at: number; limit: LimitHit; settings: LimitSettings; jitter: number };

/** An event decided, before the journal stores it (and stamps its time). */
export type BrainDecided = { [K in BrainEventType]: { type: K; data: BrainEventMap[K] } }[BrainEventType];

/**
 * The host's commands judged against the conversation: a turn ends only while it is in flight; a turn that starts
 * while another is still open (its end could not be journaled) ends that one failed first, so every turn journaled
 * has its end; a conversation already known by its id is not identified again.
 */
export function decideBrain(cmd: BrainCommand, state: BrainState): Decision<BrainDecided> {
  switch (cmd.type) {
    case 'start_conversation':
      return { events: [{ type: 'brain.conversation_started', data: { runtime: cmd.runtime, reason: cmd.reason, summary: cmd.summary } }] };
    case 'identify_conversation':
      return { events: state.conversation_id === cmd.conversation_id ? [] : [{ type: 'brain.conversation_identified', data: { conversation_id: cmd.conversation_id } }] };
    case 'start_turn': {
      const open: BrainDecided[] = state.turn
        ? [{ type: 'brain.turn_ended', data: { turn_id: state.turn.turn_id, outcome: 'failed', text: null, reason: 'its end was not journaled before the next turn started', context_tokens: null } }]
        : [];
      return { events: [...open, { type: 'brain.turn_started', data: { turn_id: cmd.turn_id, round_id: cmd.round_id, chat_seqs: cmd.chat_seqs } }] };
    }
    case 'end_turn': {
      if (state.turn?.turn_id !== cmd.turn_id) return { events: [], error: { code: 'conflict', message: `the brain's turn ${cmd.turn_id} is not in flight: nothing to end` } };
      const { turn_id, outcome, text, reason, context_tokens } = cmd;
      return { events: [{ type: 'brain.turn_ended', data: { turn_id, outcome, text, reason, context_tokens } }] };
    }
    case 'record_usage': {
      const usage = cmd.entries.map((e): BrainDecided => ({ type: 'brain.usage', data: { turn_id: cmd.turn_id, conversation_id: state.conversation_id, runtime: state.runtime, ...e } }));
      const found = crossings(cmd.budgets, (used) => addTurn(used, cmd.entries));
      const exceeded = found.find((c) => c.level === 'exceeded');
      const said = exceeded ? [exceeded] : found;
      const budget = said.map(({ scope, unit, used, limit, level }): BrainDecided => ({ type: level === 'exceeded' ? 'brain.budget_exceeded' : 'brain.budget_warning', data: { scope, unit, used, limit } }));
      return { events: [...usage, ...budget] };
    }
    case 'park': {
      const attempt = (state.parked?.attempt ?? 0) + 1;
      const when = resumeTime(cmd.at, cmd.limit, attempt, cmd.settings, cmd.jitter);
      return { events: [{ type: 'brain.parked', data: { reason: cmd.limit.reason, resumes_at: when.resumes_at, source: when.source, limit_type: cmd.limit.limit_type, attempt } }] };
    }
  }
}

/** Until when the brain is parked at its model's limit at `now` (epoch ms), or null when it may take turns. */
export const parkedUntil = (state: BrainState, now: number): number | null => (state.parked && state.parked.resumes_at > now ? state.parked.resumes_at : null);

export interface ConversationPolicy {
  runtime: string;
  now: number;
  /** A conversation idle longer than this is not resumed after a restart (the supervision restore TTL). */
  restore_ttl_ms: number;
  /** Context tokens past which the conversation is rotated before its next turn. */
  context_budget: number;
  /** Whether the service has just booted (the TTL applies to a resume across a restart only). */
  booted: boolean;
}

/** Whether the next turn needs a new conversation, and why; null when the current one goes on. */
export function conversationToStart(state: BrainState, policy: ConversationPolicy): ConversationReason | null {
  if (state.runtime === null) return 'first';
  if (state.runtime !== policy.runtime) return 'runtime_changed';
  if (policy.booted && state.last_at > 0 && policy.now - state.last_at > policy.restore_ttl_ms) return 'restore_expired';
  if (state.context_tokens >= policy.context_budget) return 'context_budget';
  return null;
}

export interface OpenSession {
  id: string;
  alias: string;
  title: string | null;
  state: string;
  runtime: string;
  /** What it waits on, in a line: a question's text, a permission request (id, tool, input), a block; null when nothing. */
  waits_on?: string | null;
}

/** A call the brain made that waits for the user's confirmation. */
export interface PendingConfirmation {
  id: string;
  tool: string;
  description: string;
}

const REASON_TEXT: Record<ConversationReason, string> = {
  first: 'this is the first conversation',
  runtime_changed: 'the brain now runs on another runtime',
  restore_expired: 'the previous conversation was idle longer than the restore TTL',
  context_budget: "the previous conversation reached the brain's context budget",
  context_full: "the previous conversation's context was full",
  resume_failed: 'the previous conversation could not be resumed',
};

export const conversationNotice = (reason: ConversationReason): string => `The main brain starts a new conversation: ${REASON_TEXT[reason]}. It is seeded with the summary Brainstem keeps (goal, open sessions, recent decisions).`;

/**
 * What a new conversation opens with: the goal, the open sessions and the brain's recent decisions, as Brainstem kept
 * them. Session titles are the users' and aliases the workers' text: quoted as data.
 */
export function keptSummary(input: {
  reason: ConversationReason;
  goal: string | null;
  sessions: readonly OpenSession[];
  confirmations?: readonly PendingConfirmation[];
  recent: readonly string[];
}): string {
  const lines = [`Brainstem starts a new conversation with you because ${REASON_TEXT[input.reason]}. What it kept from before:`, ''];
  lines.push(`Goal: ${input.goal ?? '(none set)'}`, '');
  if (input.sessions.length === 0) lines.push('Open sessions: none.');
  else {
    lines.push('Open sessions (id, alias, runtime, state, title):');
    lines.push(...quoteWorkerData(input.sessions.map((s) => `${s.id} ${s.alias} ${s.runtime} ${s.state} ${s.title ?? ''}`.trimEnd()).join('\n'), ''));
  }
  // What is still open must survive the new conversation: the questions and requests waiting, the calls the user has not confirmed.
  const waiting = input.sessions.filter((s) => s.waits_on);
  lines.push('');
  if (waiting.length === 0) lines.push('Open questions and requests: none.');
  else {
    lines.push('Open questions and requests (id, alias, what it waits on):');
    lines.push(...quoteWorkerData(waiting.map((s) => `${s.id} ${s.alias} ${(s.waits_on ?? '').replace(/\s+/g, ' ')}`).join('\n'), ''));
  }
  const confirmations = input.confirmations ?? [];
  lines.push('');
  if (confirmations.length === 0) lines.push('Waiting for the user to confirm: nothing.');
  else {
    lines.push('Waiting for the user to confirm (id, tool, what):');
    lines.push(...quoteWorkerData(confirmations.map((c) => `${c.id} ${c.tool} ${c.description.replace(/\s+/g, ' ')}`).join('\n'), ''));
  }
  lines.push('');
  if (input.recent.length === 0) lines.push('Your recent decisions: none recorded.');
  else lines.push('Your recent decisions (your last words of each recent turn, oldest first):', ...input.recent.map((t, i) => `${i + 1}. ${t.replace(/\s+/g, ' ').trim()}`));
  return lines.join('\n');
}

export interface ChatInput {
  seq: number;
  role: 'user' | 'system';
  text: string;
  /** The worker whose question this answers, if it does. */
  session_id: string | null;
}

/**
 * One turn's prompt: the kept summary (a new conversation's first turn), the round, and the chat since the last turn.
 * A conversation that took a round before (`guided`) has read the rounds' guide: the round comes without it, and when
 * the whole prompt of the round before is known (`previous`), without the sessions whose line has not changed since.
 */
export function brainTurnPrompt(input: {
  seed: string | null;
  guided?: boolean;
  previous?: string | null;
  round: { id: string; prompt: string } | null;
  chats: readonly ChatInput[];
}): string {
  const parts: string[] = [];
  if (input.seed) parts.push(input.seed);
  if (input.round) {
    // A conversation that read a round before knows how a turn ends one: it gets the delta alone.
    if (input.guided && input.previous) parts.push(promptDelta(input.round.prompt, input.previous));
    else {
      const prompt = input.guided ? promptAfterGuide(input.round.prompt) : input.round.prompt;
      parts.push(`Supervision round ${input.round.id}. Your turn ends the round: your last message is its summary (or call complete_round yourself).\n\n${prompt}`);
    }
  }
  for (const c of input.chats) {
    if (c.role === 'system') parts.push(`Main chat, from Brainstem (#${c.seq}): ${c.text}`);
    else if (c.session_id) parts.push(`Main chat, the user's answer to the question of session ${c.session_id} (#${c.seq}; it has been delivered to that session):\n${c.text}`);
    else parts.push(`Main chat, the user (#${c.seq}):\n${c.text}`);
  }
  return parts.join('\n\n---\n\n');
}
