import { pastRetention } from '../common/retention-queue';
import { RoundView } from './round.view';
import { roundEvidence } from './round-evidence';
import { roundPrompt } from './round-prompt';
import { RoundOutcome, SupervisionContext, isRoundInterruption } from './supervision.machine';
import { ROUND_OUTCOME, RoundEndType, SupervisionEventMap } from './supervision.events';

/** A round as supervision's state holds it: its view, and the seq of its round.started (its place in the list, and what its cursor names). */
export interface HeldRound {
  seq: number;
  view: RoundView;
}

/**
 * The rounds in memory, in the order they started: the one in flight, and ended ones until their retention has passed.
 * Never changed in place: a fold answers a new map (an ended round's view is a new object too), so a state handed
 * out stays as it was.
 */
export type RoundHistory = ReadonlyMap<string, HeldRound>;

const iso = (at: number) => new Date(at).toISOString();

/**
 * The view with its prompt written when first read, then kept: a round of 1,000 reasons takes milliseconds to write,
 * which would delay its round.started for every subscriber, and replay and followers mostly never read it. The
 * property stays in its place and enumerable, so the view serialises as it did.
 */
function withPrompt(view: RoundView, write: () => string): RoundView {
  let prompt: string | undefined;
  return Object.defineProperty(view, 'prompt', { enumerable: true, get: () => (prompt ??= write()) });
}

/** A copy of the view with these fields changed, its prompt as it is (not written yet, if it was not). */
function changed(view: RoundView, fields: Partial<Omit<RoundView, 'prompt'>>): RoundView {
  return Object.assign(Object.defineProperties({}, Object.getOwnPropertyDescriptors(view)) as RoundView, fields);
}

/**
 * Folds one journaled event into the rounds; `context` is the machine's context after the event (a round's turn and
 * prompt are taken from it as the round starts). Events that concern no round leave the same map.
 */
export function foldRounds(rounds: RoundHistory, e: { type: string; data: unknown; at: number; seq: number }, context: SupervisionContext): RoundHistory {
  if (e.type === 'round.started') {
    const { round } = e.data as SupervisionEventMap['round.started'];
    const { task_hint, turns_used, max_turns } = context;
    const view = withPrompt(
      {
        id: round.id,
        turn: turns_used,
        status: 'in_flight',
        started_at: iso(round.started_at),
        deadline_at: iso(round.deadline_at),
        ended_at: null,
        reasons: round.reasons,
        prompt: '',
        summary: null,
        failure: null,
        interruption: null,
      },
      () =>
        roundPrompt({
          round_id: round.id,
          started_at: round.started_at,
          reasons: round.reasons,
          evidence: roundEvidence(round),
          shared_work_trees: round.shared_work_trees,
          board: round.board,
          board_more: round.board_more,
          resolved: round.resolved,
          since: round.since,
          since_more: round.since_more,
          since_round: round.since_round,
          task_hint,
          turns_used,
          max_turns,
        }),
    );
    return new Map(rounds).set(round.id, { seq: e.seq, view });
  }
  if (e.type === 'supervision.disabled') {
    // Journals written before a close interrupted the round in flight: the view ends it all the same.
    const open = [...rounds.values()].filter((r) => r.view.status === 'in_flight');
    return open.reduce((acc, r) => ended(acc, r, 'interrupted', e.at, { interruption: 'supervision_closed' }), rounds);
  }
  if (!Object.hasOwn(ROUND_OUTCOME, e.type)) return rounds;
  const status = ROUND_OUTCOME[e.type as RoundEndType];
  const d = e.data as { round_id: string; summary?: unknown; reason?: unknown };
  const held = rounds.get(d.round_id);
  if (!held || held.view.status !== 'in_flight') return rounds;
  return ended(rounds, held, status, e.at, {
    summary: typeof d.summary === 'string' ? d.summary : null,
    failure: status === 'failed' ? String(d.reason) : null,
    interruption: status === 'interrupted' && isRoundInterruption(d.reason) ? d.reason : null,
  });
}

type RoundEnd = Partial<Pick<RoundView, 'summary' | 'failure' | 'interruption'>>;

function ended(rounds: RoundHistory, held: HeldRound, status: RoundOutcome, at: number, end: RoundEnd = {}): RoundHistory {
  const { summary = null, failure = null, interruption = null } = end;
  return new Map(rounds).set(held.view.id, { seq: held.seq, view: changed(held.view, { status, ended_at: iso(at), summary, failure, interruption }) });
}

const endedAt = (r: HeldRound): number | null => (r.view.ended_at === null ? null : Date.parse(r.view.ended_at));

/** The rounds less those ended at least `retentionMs` before `now` (the journal keeps them); the same map when none is. */
export function forgetEndedRounds(rounds: RoundHistory, now: number, retentionMs: number): RoundHistory {
  const due = [...rounds.values()].filter((r) => {
    const at = endedAt(r);
    return at !== null && pastRetention(at, retentionMs, now);
  });
  if (due.length === 0) return rounds;
  const kept = new Map(rounds);
  for (const r of due) kept.delete(r.view.id);
  return kept;
}

/** When the next ended round leaves memory (epoch ms), or null when none will. */
export function nextRoundForgotten(rounds: RoundHistory, retentionMs: number): number | null {
  let first: number | null = null;
  for (const r of rounds.values()) {
    const at = endedAt(r);
    if (at !== null && (first === null || at < first)) first = at;
  }
  return first === null || !Number.isFinite(retentionMs) ? null : first + retentionMs;
}
