import { ToolScopeMode } from './supervision-scope';
import { ClosedReason, RoundInFlight, RoundInterruption, RoundOutcome, StartedBy, SupervisionEvent, WakeReason } from './supervision.machine';

/** Journaled supervision events (stream `supervision`), each one accepted machine event. */
export interface SupervisionEventMap {
  /** round_now: /supervise, whose round the supervisor runs at once, whichever node took the command. */
  'supervision.enabled': { started_by: StartedBy; task_hint?: string; max_turns?: number; round_now?: true };
  'supervision.disabled': { reason: ClosedReason; summary?: string };
  /** The prompt is not journaled: it is derived from the reasons and the state at the start. */
  'round.started': { round: RoundInFlight };
  'round.completed': { round_id: string; summary?: string };
  'round.timed_out': { round_id: string };
  /** `reason` is absent in rounds journaled before it was recorded. */
  'round.interrupted': { round_id: string; reasons: WakeReason[]; reason?: RoundInterruption };
  /** The driver's delivery failed: the reason says how (a crashed brain, a failed webhook, a command that could not spawn). */
  'round.failed': { round_id: string; reason: string };
  'supervision.stall_detected': { session_id: string; kind: string; stalled_for_s: number; cooldown_until: number };
  /**
   * A loop detected in a supervised session woke the brain: the wake-ups for the same loop (same signature) so far. The
   * loop escalation counts them: past the session's escalate_after, the next detection holds the session instead.
   */
  'supervision.loop_woken': { session_id: string; pattern: string; signature: string; wakes: number };
  /** The loop persisted after `wakes` wake-ups: the session is held and the user asked (the count starts again after). */
  'supervision.loop_escalated': { session_id: string; pattern: string; signature: string; wakes: number };
  /**
   * A scope set: the rule for sessions created later (and, when `include_external` is given, whether external sessions
   * reporting later join) (a mode other than invert; an invert keeps the rule it found). The
   * sessions' exclusions it changes are appended with it, in the same atomic append, on their own streams.
   */
  'supervision.scope_set': { mode: ToolScopeMode; include_external?: boolean };
}

declare module '../bus/domain-event' {
  interface DomainEventMap extends SupervisionEventMap {}
}

export type SupervisionJournalType = keyof SupervisionEventMap;

export type RoundEndType = 'round.completed' | 'round.timed_out' | 'round.interrupted' | 'round.failed';

/** How each journaled round end ends the round. */
export const ROUND_OUTCOME: Record<RoundEndType, RoundOutcome> = {
  'round.completed': 'completed',
  'round.timed_out': 'timed_out',
  'round.interrupted': 'interrupted',
  'round.failed': 'failed',
};

/** The machine event a journaled event stands for (replay); null for events that do not move the machine. */
export function toMachineEvent(type: string, data: unknown, at: number): SupervisionEvent | null {
  switch (type) {
    case 'supervision.enabled':
      return { type: 'ENABLE', at, ...(data as SupervisionEventMap['supervision.enabled']) };
    case 'supervision.disabled':
      return { type: 'DISABLE', at, ...(data as SupervisionEventMap['supervision.disabled']) };
    case 'round.started':
      return { type: 'ROUND_START', at, round: (data as SupervisionEventMap['round.started']).round };
    case 'round.completed':
    case 'round.timed_out':
    case 'round.interrupted':
    case 'round.failed':
      return { type: 'ROUND_END', at, round_id: (data as { round_id: string }).round_id, outcome: ROUND_OUTCOME[type] };
    default:
      return null;
  }
}
