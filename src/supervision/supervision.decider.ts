import { SnapshotFrom, initialTransition } from 'xstate';
import { pastRetention } from '../common/retention-queue';
import { JournalEvent } from '../journal/journal.port';
import { Coverage, coverRound, forgetCoverage, uncover } from './attention';
import { RoundHistory, foldRounds, forgetEndedRounds } from './round-history';
import { StallKind, cooldownKey, dropExpiredCooldowns } from './stall-watchdog';
import { ExternalInclusion, ScopeMode, ScopeSession, ToolScopeMode, planScope } from './supervision-scope';
import { SupervisionErrorCode } from './supervision.errors';
import { SupervisionEventMap, SupervisionJournalType, toMachineEvent } from './supervision.events';
import { ClosedReason, MAX_TURNS_LIMIT, RoundInFlight, RoundInterruption, StartedBy, nextSupervision, supervisionMachine, taskHintProblem } from './supervision.machine';

/**
 * Supervision's rules, pure: decide() judges a command against the state and answers the events to journal (stream
 * `supervision`) or why it is refused; evolve() folds a journaled event into the state. The machine is the state's
 * shape (off → on: idle ⇄ in_round): evolve moves it with the machine's own transition, and folds the rounds and the
 * stall cooldowns beside it, so replay and live commands fold the same way. The service loads, decides, appends and
 * does the effects (timers, delivery, the sessions' scope).
 */

export type SupervisionSnapshot = SnapshotFrom<typeof supervisionMachine>;

export interface SupervisionState {
  machine: SupervisionSnapshot;
  /** The last scope mode set other than invert: under `only`, sessions created later are not supervised. */
  scope_mode: ToolScopeMode;
  /** Whether external sessions reporting later join supervision (the user's include_external); by default they do not. */
  include_external: boolean;
  /** The rounds in memory, in the order they started (ended ones leave after their retention: forgetExpired). */
  rounds: RoundHistory;
  /** Until when (epoch ms) each (session, stall kind) may not fire again, by cooldownKey. */
  cooldowns: ReadonlyMap<string, number>;
  /** By session: the round whose reasons last named it (what GET …/autonomous lists as pending is what none covered since). */
  covered: ReadonlyMap<string, Coverage>;
  /** The wake-ups of the brain for each (session, loop pattern), by loopKey: the loop's signature, how many, the last one's time. */
  loop_wakes: ReadonlyMap<string, LoopWakes>;
  /** When the newest supervision event was journaled (epoch ms): supervision was last known current then. */
  last_event_at: number;
}

/** A journaled supervision event as evolve folds it: `at` in epoch ms, `seq` its place in the journal. */
export interface FoldedEvent {
  type: string;
  data: unknown;
  at: number;
  seq: number;
}

export interface LoopWakes {
  signature: string;
  wakes: number;
  at: number;
}

export const loopKey = (sessionId: string, pattern: string): string => `${sessionId}:${pattern}`;

export type SupervisionJournalEvent = { [K in SupervisionJournalType]: { type: K; data: SupervisionEventMap[K] } }[SupervisionJournalType];

/** A scope to set: the mode, the sessions it names (ids or aliases), and the sessions as the directory has them now. */
export interface ScopeRequest {
  mode: ScopeMode;
  session_ids: readonly string[];
  sessions: readonly ScopeSession[];
  /** Which external sessions it may bring in: none unless the user asks (the REST routes, the dashboard). */
  externals?: ExternalInclusion;
  /** The user's include_external: all external sessions join, now and when they report later (false: later ones do not). */
  include_external?: boolean;
}

/** The external sessions a scope may bring in. */
export const externalsOf = (scope: ScopeRequest): ExternalInclusion => (scope.include_external ? 'all' : (scope.externals ?? 'none'));

export type SupervisionCommand =
  /** With a scope, the scope is set in the same decision (and its exclusions are written with it). */
  /** include_external: the user's, over REST; it sets the rule for external sessions and brings in those reporting now. */
  | { type: 'enable'; started_by: StartedBy; task_hint?: string; max_turns?: number; round_now?: boolean; scope?: ScopeRequest; include_external?: boolean }
  | { type: 'disable'; reason: ClosedReason; summary?: string }
  /** finish_supervision: off with the wrap-up. */
  | { type: 'finish'; summary?: string }
  | { type: 'set_scope'; scope: ScopeRequest }
  | { type: 'start_round'; round: RoundInFlight }
  | { type: 'complete_round'; round_id: string; summary?: string }
  /** Delivering the round to the brain failed. */
  | { type: 'fail_round'; round_id: string; reason: string }
  /** The round's deadline passed. */
  | { type: 'time_out_round'; round_id: string }
  /**
   * A node took the lease (at boot, or from another node) and found supervision on: the round in flight is cut off
   * (`interrupt`: why), or kept (`interrupt` null) for the brain that still follows it through a live node.
   */
  | { type: 'resume'; interrupt: Exclude<RoundInterruption, 'supervision_closed'> | null }
  | { type: 'detect_stall'; session_id: string; kind: string; stalled_for_s: number; cooldown_until: number }
  /**
   * A loop detected in a supervised session (docs/guide/loops.md): it wakes the brain, unless the brain has been woken
   * `escalate_after` times (not 0) for this very loop already, which escalates it (the session is held, the user asked).
   */
  | { type: 'take_loop'; session_id: string; pattern: string; signature: string; escalate_after: number };

export interface SupervisionRefusal {
  code: SupervisionErrorCode | 'invalid_input';
  message: string;
}

export type SupervisionDecision = { events: SupervisionJournalEvent[]; error?: undefined } | { events: []; error: SupervisionRefusal };

export function initialSupervisionState(): SupervisionState {
  return { machine: initialTransition(supervisionMachine)[0], scope_mode: 'all', include_external: false, rounds: new Map(), cooldowns: new Map(), covered: new Map(), loop_wakes: new Map(), last_event_at: 0 };
}

export const isOn = (s: SupervisionState): boolean => s.machine.matches('on');

const refuse = (code: SupervisionRefusal['code'], message: string): SupervisionDecision => ({ events: [], error: { code, message } });

function offRefusal(s: SupervisionState, what: string): SupervisionDecision {
  const closed = s.machine.context.closed_reason;
  return refuse('supervision_off', `supervision is not on${closed ? ` (closed: ${closed})` : ''}; ${what}`);
}

/** Off, ending the round in flight as interrupted first: closing must not leave a round that can never end. */
function close(s: SupervisionState, reason: ClosedReason, summary?: string): SupervisionJournalEvent[] {
  const round = s.machine.context.round;
  return [
    ...(round ? [{ type: 'round.interrupted' as const, data: { round_id: round.id, reasons: round.reasons, reason: 'supervision_closed' as const } }] : []),
    { type: 'supervision.disabled', data: { reason, ...(summary ? { summary } : {}) } },
  ];
}

/** A round's end, and then off (max_turns) when that round was the last turn: no further round could start. */
function endRound(s: SupervisionState, end: SupervisionJournalEvent): SupervisionJournalEvent[] {
  const ev = toMachineEvent(end.type, end.data, s.machine.context.changed_at);
  const after = ev ? nextSupervision(s.machine, ev) : s.machine;
  const c = after.context;
  return after.matches('on') && c.turns_used >= c.max_turns ? [end, { type: 'supervision.disabled', data: { reason: 'max_turns' } }] : [end];
}

/** Why a round named by a command cannot be ended now: none of that id in memory, or it ended already. */
function roundEndRefusal(s: SupervisionState, id: string): SupervisionDecision | null {
  const held = s.rounds.get(id);
  if (!held) return refuse('round_not_found', `no round ${id}`);
  if (s.machine.context.round?.id !== id) return refuse('round_already_ended', `round ${id} is already ${held.view.status === 'in_flight' ? 'ended' : held.view.status}`);
  return null;
}

/**
 * The scope's event: the rule for sessions created later (invert keeps the rule it finds), journaled when the rule
 * changes or the scope changes a session's exclusion (those changes are written with it, on the sessions' streams).
 */
function scopeEvents(s: SupervisionState, scope: ScopeRequest): SupervisionDecision {
  const plan = planScope(scope.mode, scope.session_ids, scope.sessions, externalsOf(scope));
  if ('error' in plan) return refuse(plan.error.code, plan.error.message);
  const mode = plan.mode === 'invert' ? s.scope_mode : plan.mode;
  const rule = scope.include_external ?? s.include_external;
  const data = { mode, ...(scope.include_external !== undefined ? { include_external: scope.include_external } : {}) };
  return { events: mode !== s.scope_mode || rule !== s.include_external || plan.changes.length > 0 ? [{ type: 'supervision.scope_set', data }] : [] };
}

export function decide(cmd: SupervisionCommand, s: SupervisionState): SupervisionDecision {
  const c = s.machine.context;
  switch (cmd.type) {
    case 'enable': {
      if (cmd.max_turns !== undefined && !(Number.isInteger(cmd.max_turns) && cmd.max_turns >= 1 && cmd.max_turns <= MAX_TURNS_LIMIT)) {
        return refuse('invalid_input', `max_turns: must be an integer in 1..${MAX_TURNS_LIMIT}`);
      }
      // Checked here too: /supervise in the chat and the tools reach this without the DTO.
      const hintProblem = taskHintProblem(cmd.task_hint);
      if (hintProblem) return refuse('invalid_input', hintProblem);
      // include_external without a scope keeps the scope's rule, and brings in the external sessions (written with it).
      const scope = cmd.scope
        ? scopeEvents(s, { ...cmd.scope, ...(cmd.include_external ? { include_external: true } : {}) })
        : cmd.include_external
          ? { events: [{ type: 'supervision.scope_set' as const, data: { mode: s.scope_mode, include_external: true } }] }
          : { events: [] };
      if (scope.error) return scope;
      const data: SupervisionEventMap['supervision.enabled'] = {
        started_by: cmd.started_by,
        ...(cmd.task_hint !== undefined ? { task_hint: cmd.task_hint } : {}),
        ...(cmd.max_turns !== undefined ? { max_turns: cmd.max_turns } : {}),
        ...(cmd.round_now ? { round_now: true as const } : {}),
      };
      return { events: [...scope.events, { type: 'supervision.enabled', data }] };
    }
    case 'disable':
      return { events: isOn(s) ? close(s, cmd.reason, cmd.summary) : [] };
    case 'finish':
      // Refused when off: the summary would be dropped unseen.
      return isOn(s) ? { events: close(s, 'finished', cmd.summary) } : offRefusal(s, 'post a wrap-up with reply_to_human');
    case 'set_scope':
      return scopeEvents(s, cmd.scope);
    case 'start_round':
      if (!isOn(s)) return offRefusal(s, 'no round starts');
      if (c.round) return refuse('round_in_flight', `round ${c.round.id} is in flight; one round at a time`);
      if (c.turns_used >= c.max_turns) return refuse('max_turns_reached', `all ${c.max_turns} turns are used`);
      return { events: [{ type: 'round.started', data: { round: cmd.round } }] };
    case 'complete_round':
      return (
        roundEndRefusal(s, cmd.round_id) ?? {
          events: endRound(s, { type: 'round.completed', data: { round_id: cmd.round_id, ...(cmd.summary ? { summary: cmd.summary } : {}) } }),
        }
      );
    case 'fail_round':
      return roundEndRefusal(s, cmd.round_id) ?? { events: endRound(s, { type: 'round.failed', data: { round_id: cmd.round_id, reason: cmd.reason } }) };
    case 'time_out_round':
      // A deadline that fires after its round ended has nothing to end.
      return { events: c.round?.id === cmd.round_id ? endRound(s, { type: 'round.timed_out', data: { round_id: cmd.round_id } }) : [] };
    case 'resume': {
      if (!isOn(s)) return { events: [] };
      if (c.round && cmd.interrupt) return { events: endRound(s, { type: 'round.interrupted', data: { round_id: c.round.id, reasons: c.round.reasons, reason: cmd.interrupt } }) };
      if (c.round) return { events: [] };
      return { events: c.turns_used >= c.max_turns ? close(s, 'max_turns') : [] };
    }
    case 'detect_stall': {
      if (!isOn(s)) return offRefusal(s, 'stalls wake no one');
      const { session_id, kind, stalled_for_s, cooldown_until } = cmd;
      return { events: [{ type: 'supervision.stall_detected', data: { session_id, kind, stalled_for_s, cooldown_until } }] };
    }
    case 'take_loop': {
      if (!isOn(s)) return offRefusal(s, 'loops wake no one');
      const { session_id, pattern, signature } = cmd;
      const known = s.loop_wakes.get(loopKey(session_id, pattern));
      const wakes = known?.signature === signature ? known.wakes : 0;
      if (cmd.escalate_after > 0 && wakes >= cmd.escalate_after) return { events: [{ type: 'supervision.loop_escalated', data: { session_id, pattern, signature, wakes } }] };
      return { events: [{ type: 'supervision.loop_woken', data: { session_id, pattern, signature, wakes: wakes + 1 } }] };
    }
  }
}

/** Folds one journaled event into the state: the machine, the rounds, the cooldowns, the scope rule. */
export function evolve(s: SupervisionState, e: FoldedEvent): SupervisionState {
  const base = { ...s, last_event_at: e.at };
  if (e.type === 'supervision.scope_set') {
    const set = e.data as SupervisionEventMap['supervision.scope_set'];
    return { ...base, scope_mode: set.mode, include_external: set.include_external ?? s.include_external };
  }
  if (e.type === 'supervision.stall_detected') {
    const st = e.data as SupervisionEventMap['supervision.stall_detected'];
    // The cooldowns run out by now leave with it: those of sessions that stalled once are not kept for ever.
    const cooldowns = new Map(s.cooldowns);
    dropExpiredCooldowns(cooldowns, e.at);
    return { ...base, cooldowns: cooldowns.set(cooldownKey(st.session_id, st.kind as StallKind), st.cooldown_until) };
  }
  if (e.type === 'supervision.loop_woken' || e.type === 'supervision.loop_escalated') {
    const l = e.data as SupervisionEventMap['supervision.loop_woken'];
    const loop_wakes = new Map(s.loop_wakes);
    if (e.type === 'supervision.loop_woken') loop_wakes.set(loopKey(l.session_id, l.pattern), { signature: l.signature, wakes: l.wakes, at: e.at });
    else loop_wakes.delete(loopKey(l.session_id, l.pattern));
    return { ...base, loop_wakes };
  }
  const ev = toMachineEvent(e.type, e.data, e.at);
  const machine = ev ? nextSupervision(s.machine, ev) : s.machine;
  return { ...base, machine, rounds: foldRounds(s.rounds, e, machine.context), covered: foldCoverage(s.covered, e) };
}

/** A round that started covers the sessions it names; one that failed or was cut off may not have reached the brain. */
function foldCoverage(covered: ReadonlyMap<string, Coverage>, e: FoldedEvent): ReadonlyMap<string, Coverage> {
  if (e.type === 'round.started') return coverRound(covered, (e.data as SupervisionEventMap['round.started']).round);
  if (e.type === 'round.failed' || e.type === 'round.interrupted') return uncover(covered, (e.data as { round_id: string }).round_id);
  return covered;
}

/** evolve over an event as the journal stores it: the fold of the command path and of replay. */
export const evolveStored = (s: SupervisionState, e: JournalEvent): SupervisionState => evolve(s, { type: e.type, data: e.data, at: Date.parse(e.at), seq: e.seq });

/**
 * What leaves memory with time rather than with an event: rounds ended at least `retentionMs` before `now` (and the
 * coverage they gave), stall cooldowns run out by then, and loop wake-up counts last moved that long ago (their
 * sessions have long exited, or looped no more). The journal keeps them all; the same state when nothing leaves.
 */
export function forgetExpired(s: SupervisionState, now: number, retentionMs: number): SupervisionState {
  const rounds = forgetEndedRounds(s.rounds, now, retentionMs);
  const covered = forgetCoverage(s.covered, rounds);
  const expired = [...s.cooldowns.values()].some((until) => until <= now);
  const staleLoops = [...s.loop_wakes.values()].some((l) => pastRetention(l.at, retentionMs, now));
  if (rounds === s.rounds && covered === s.covered && !expired && !staleLoops) return s;
  const cooldowns = new Map(s.cooldowns);
  dropExpiredCooldowns(cooldowns, now);
  const loop_wakes = staleLoops ? new Map([...s.loop_wakes].filter(([, l]) => !pastRetention(l.at, retentionMs, now))) : s.loop_wakes;
  return { ...s, rounds, cooldowns, covered, loop_wakes };
}
