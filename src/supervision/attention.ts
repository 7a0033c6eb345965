import { clipPermissionInput, clipTurnResult } from './round-prompt';
import { SessionView } from './session-directory.port';
import { WakeReason, wakeReason } from './supervision.machine';

/**
 * Attention as a state, pure: which supervised sessions wait on someone now, why and since when, and which of them
 * no round has covered since (docs/guide/supervision.md#attention-is-a-state). A round covers a session when its
 * reasons name it; supervision's state keeps, per session, the round that last did.
 */

/** The states that need someone (docs/architecture/decisions.md#session-states). */
export const NEEDS_ATTENTION: ReadonlySet<string> = new Set(['pending_handling', 'pending_authorization', 'pending_decision']);

/** The round that last named a session, and when it started (epoch ms). */
export interface Coverage {
  at: number;
  round_id: string;
}

/** A session GET …/autonomous lists as pending: it waits on someone, and no round has named it since that began. */
export interface PendingAttention {
  session_id: string;
  alias: string;
  state: string;
  /** Why it waits, as a round's reason would say: pending_handling (a turn ended), notify_blocked, ask_human, pending_authorization. */
  trigger: string;
  /** Since when (ISO) what it waits on began. */
  since: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** Whether a supervised, live session waits on someone now. */
export const needsAttention = (s: SessionView): boolean => s.active && !s.excluded && NEEDS_ATTENTION.has(s.state);

/**
 * Why a waiting session wakes the brain, as the change that brought it there would say it: its question, its blocked
 * reason, the tool it asks for, or its last turn's result; with since when. Null for a session that waits on no one.
 */
export function attentionReason(s: SessionView): WakeReason | null {
  if (!needsAttention(s)) return null;
  const base = { session_id: s.id, alias: s.alias, state: s.state, since: iso(s.attention_since) };
  const on = s.waiting_on;
  if (s.state === 'pending_authorization') {
    if (on?.kind !== 'permission') return wakeReason({ ...base, trigger: 'pending_authorization', message: null });
    return wakeReason({ ...base, trigger: 'pending_authorization', message: on.text, request_id: on.request_id, input: clipPermissionInput(on.input) });
  }
  if (s.state === 'pending_decision') return wakeReason({ ...base, trigger: 'ask_human', message: on?.kind === 'question' ? on.text : null });
  if (on?.kind === 'blocked') return wakeReason({ ...base, trigger: 'notify_blocked', message: on.text });
  return wakeReason({ ...base, trigger: 'pending_handling', message: s.last_result?.trim() ? clipTurnResult(s.last_result) : null });
}

/** Whether no round named the session since what it waits on began. */
const uncovered = (s: SessionView, covered: ReadonlyMap<string, Coverage>): boolean => (covered.get(s.id)?.at ?? -Infinity) < s.attention_since;

/**
 * The reasons of the supervised sessions waiting on someone that no round covered since that began: what wakes the
 * brain at switch-on and when a node takes the lease. A session a round showed already, still waiting on the same
 * thing, is not news; a new turn result, question or request starts a new wait, and is.
 */
export function uncoveredAttention(sessions: readonly SessionView[], covered: ReadonlyMap<string, Coverage>): WakeReason[] {
  return sessions.flatMap((s) => (uncovered(s, covered) ? (attentionReason(s) ?? []) : []));
}

/** The sessions waiting on someone that no round has named since what they wait on began, the longest waiting first. */
export function pendingAttention(sessions: readonly SessionView[], covered: ReadonlyMap<string, Coverage>): PendingAttention[] {
  return sessions
    .filter((s) => needsAttention(s) && uncovered(s, covered))
    .sort((a, b) => a.attention_since - b.attention_since)
    .flatMap((s) => {
      const r = attentionReason(s);
      return r ? [{ session_id: s.id, alias: s.alias, state: s.state, trigger: r.trigger, since: iso(s.attention_since) }] : [];
    });
}

/**
 * The coverage after a round started: each session its reasons name is covered from its start. A round that failed or
 * was interrupted may never have reached the brain: what it covered is uncovered (`uncover`).
 */
export function coverRound(covered: ReadonlyMap<string, Coverage>, round: { id: string; started_at: number; reasons: readonly WakeReason[] }): ReadonlyMap<string, Coverage> {
  let next: Map<string, Coverage> | null = null;
  // One coverage for all the sessions the round names (a burst names a thousand): it is never changed in place.
  const coverage: Coverage = { at: round.started_at, round_id: round.id };
  for (const r of round.reasons) if (r.session_id !== '-') (next ??= new Map(covered)).set(r.session_id, coverage);
  return next ?? covered;
}

/** The coverage less what one round covered (it failed, or was cut off): those sessions count as unseen again. */
export function uncover(covered: ReadonlyMap<string, Coverage>, roundId: string): ReadonlyMap<string, Coverage> {
  if (![...covered.values()].some((c) => c.round_id === roundId)) return covered;
  return new Map([...covered].filter(([, c]) => c.round_id !== roundId));
}

/**
 * The coverage less what rounds no longer in memory gave (they leave after their retention): a session waiting that
 * long since a round named it shows as pending again.
 */
export function forgetCoverage(covered: ReadonlyMap<string, Coverage>, rounds: ReadonlyMap<string, unknown>): ReadonlyMap<string, Coverage> {
  if ([...covered.values()].every((c) => rounds.has(c.round_id))) return covered;
  return new Map([...covered].filter(([, c]) => rounds.has(c.round_id)));
}
