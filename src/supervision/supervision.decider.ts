import { SnapshotFrom, initialTransition, transition } from 'xstate';
import { ScopeMode, ToolScopeMode } from './supervision-scope';
import { SupervisionErrorCode } from './supervision.errors';
import { SupervisionEventMap, SupervisionJournalType, toMachineEvent } from './supervision.events';
import { ClosedReason, MAX_TURNS_LIMIT, RoundInFlight, RoundOutcome, StartedBy, supervisionMachine, taskHintProblem } from './supervision.machine';

/**
 * Supervision's rules, pure: decide() judges a command against the state and answers the events to journal (stream
 * `supervision`) or why it is refused; evolve() folds a journaled event into the state. The machine is the state's
 * shape (off → on: idle ⇄ in_round): evolve moves it with the machine's own transition, so replay and live commands
 * fold the same way. The service loads, decides, appends and does the effects (timers, delivery, the sessions' scope).
 */

export type SupervisionSnapshot = SnapshotFrom<typeof supervisionMachine>;

export interface SupervisionState {
  machine: SupervisionSnapshot;
  /** The last scope mode set other than invert: under `only`, sessions created later are not supervised. */
  scope_mode: ToolScopeMode;
}

export type SupervisionJournalEvent = { [K in SupervisionJournalType]: { type: K; data: SupervisionEventMap[K] } }[SupervisionJournalType];

/** What the caller knows of a round a command names: its status, or null when no round of that id is known. */
export type KnownRound = 'in_flight' | RoundOutcome | null;

export type SupervisionCommand =
  | { type: 'enable'; started_by: StartedBy; task_hint?: string; max_turns?: number; round_now?: boolean }
  | { type: 'disable'; reason: ClosedReason; summary?: string }
  /** finish_supervision: off with the wrap-up. */
  | { type: 'finish'; summary?: string }
  | { type: 'set_scope'; mode: ScopeMode }
  | { type: 'start_round'; round: RoundInFlight }
  | { type: 'complete_round'; round_id: string; summary?: string; known: KnownRound }
  /** Delivering the round to the brain failed. */
  | { type: 'fail_round'; round_id: string; reason: string; known: KnownRound }
  /** The round's deadline passed. */
  | { type: 'time_out_round'; round_id: string }
  /** A restart found supervision on: the round in flight was cut off with the process. */
  | { type: 'resume' }
  | { type: 'detect_stall'; session_id: string; kind: string; stalled_for_s: number; cooldown_until: number };

export interface SupervisionRefusal {
  code: SupervisionErrorCode | 'invalid_input';
  message: string;
}

export type SupervisionDecision = { events: SupervisionJournalEvent[]; error?: undefined } | { events: []; error: SupervisionRefusal };

export function initialSupervisionState(): SupervisionState {
  return { machine: initialTransition(supervisionMachine)[0], scope_mode: 'all' };
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
    ...(round ? [{ type: 'round.interrupted' as const, data: { round_id: round.id, reasons: round.reasons } }] : []),
    { type: 'supervision.disabled', data: { reason, ...(summary ? { summary } : {}) } },
  ];
}

/** A round's end, and then off (max_turns) when that round was the last turn: no further round could start. */
function endRound(s: SupervisionState, end: SupervisionJournalEvent): SupervisionJournalEvent[] {
  const after = fold(s, [end]);
  const c = after.machine.context;
  return isOn(after) && c.turns_used >= c.max_turns ? [end, ...close(after, 'max_turns')] : [end];
}

function roundEndRefusal(s: SupervisionState, id: string, known: KnownRound): SupervisionDecision | null {
  if (known === null) return refuse('round_not_found', `no round ${id}`);
  if (s.machine.context.round?.id !== id) return refuse('round_already_ended', `round ${id} is already ${known === 'in_flight' ? 'ended' : known}`);
  return null;
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
      const data: SupervisionEventMap['supervision.enabled'] = {
        started_by: cmd.started_by,
        ...(cmd.task_hint !== undefined ? { task_hint: cmd.task_hint } : {}),
        ...(cmd.max_turns !== undefined ? { max_turns: cmd.max_turns } : {}),
        ...(cmd.round_now ? { round_now: true as const } : {}),
      };
      return { events: [{ type: 'supervision.enabled', data }] };
    }
    case 'disable':
      return { events: isOn(s) ? close(s, cmd.reason, cmd.summary) : [] };
    case 'finish':
      // Refused when off: the summary would be dropped unseen.
      return isOn(s) ? { events: close(s, 'finished', cmd.summary) } : offRefusal(s, 'post a wrap-up with reply_to_human');
    case 'set_scope':
      // invert flips the sessions named and leaves the rule for sessions created later as it was.
      return { events: cmd.mode === 'invert' || cmd.mode === s.scope_mode ? [] : [{ type: 'supervision.scope_set', data: { mode: cmd.mode } }] };
    case 'start_round':
      if (!isOn(s)) return offRefusal(s, 'no round starts');
      if (c.round) return refuse('round_in_flight', `round ${c.round.id} is in flight; one round at a time`);
      if (c.turns_used >= c.max_turns) return refuse('max_turns_reached', `all ${c.max_turns} turns are used`);
      return { events: [{ type: 'round.started', data: { round: cmd.round } }] };
    case 'complete_round':
      return (
        roundEndRefusal(s, cmd.round_id, cmd.known) ?? {
          events: endRound(s, { type: 'round.completed', data: { round_id: cmd.round_id, ...(cmd.summary ? { summary: cmd.summary } : {}) } }),
        }
      );
    case 'fail_round':
      return roundEndRefusal(s, cmd.round_id, cmd.known) ?? { events: endRound(s, { type: 'round.failed', data: { round_id: cmd.round_id, reason: cmd.reason } }) };
    case 'time_out_round':
      // A deadline that fires after its round ended has nothing to end.
      return { events: c.round?.id === cmd.round_id ? endRound(s, { type: 'round.timed_out', data: { round_id: cmd.round_id } }) : [] };
    case 'resume': {
      if (!isOn(s)) return { events: [] };
      if (c.round) return { events: endRound(s, { type: 'round.interrupted', data: { round_id: c.round.id, reasons: c.round.reasons } }) };
      return { events: c.turns_used >= c.max_turns ? close(s, 'max_turns') : [] };
    }
    case 'detect_stall': {
      if (!isOn(s)) return offRefusal(s, 'stalls wake no one');
      const { session_id, kind, stalled_for_s, cooldown_until } = cmd;
      return { events: [{ type: 'supervision.stall_detected', data: { session_id, kind, stalled_for_s, cooldown_until } }] };
    }
  }
}

/** Folds one journaled event (`at` in epoch ms) into the state. */
export function evolve(s: SupervisionState, e: { type: string; data: unknown; at: number }): SupervisionState {
  if (e.type === 'supervision.scope_set') return { ...s, scope_mode: (e.data as SupervisionEventMap['supervision.scope_set']).mode };
  const ev = toMachineEvent(e.type, e.data, e.at);
  return ev ? { ...s, machine: transition(supervisionMachine, s.machine, ev)[0] } : s;
}

function fold(s: SupervisionState, events: readonly SupervisionJournalEvent[]): SupervisionState {
  return events.reduce((acc, e) => evolve(acc, { ...e, at: acc.machine.context.changed_at }), s);
}
