import { Coverage } from './attention';
import { HeldRound } from './round-history';
import { RoundView } from './round.view';
import { ToolScopeMode } from './supervision-scope';
import { LoopWakes, SupervisionSnapshot, SupervisionState, forgetExpired } from './supervision.decider';
import { SupervisionContext, supervisionMachine } from './supervision.machine';

/**
 * The snapshot of stream `supervision`, in the shape snapshots on disk already have: the machine, the rounds and stall
 * cooldowns in memory, and when the stream last moved.
 */
export interface StoredSupervision {
  value: SupervisionSnapshot['value'];
  context: SupervisionContext;
  /**
   * In the order they started, each with the seq of its round.started (its place in the list); `failure` is absent in
   * snapshots written before rounds could fail, `interruption` in those written before it was recorded.
   */
  rounds: Array<{ seq: number; round: Omit<RoundView, 'failure' | 'interruption'> & { failure?: string | null; interruption?: RoundView['interruption'] } }>;
  cooldowns: Array<[string, number]>;
  last_event_at: number;
  /** The last scope mode set other than invert; absent in snapshots written before it was kept. */
  scope_mode?: ToolScopeMode;
  /** By session, the round that last named it; absent in snapshots written before it was kept. */
  covered?: Array<[string, Coverage]>;
  /** The loop wake-up counts by (session, pattern); absent in snapshots written before loops were detected. */
  loop_wakes?: Array<[string, LoopWakes]>;
  /** Absent in snapshots written before external sessions: false. */
  include_external?: boolean;
}

/** The state as a snapshot stores it; cooldowns run out by `now` are left out. */
export function storeSupervision(s: SupervisionState, now: number): StoredSupervision {
  return {
    value: s.machine.value,
    context: s.machine.context,
    rounds: [...s.rounds.values()].map(({ seq, view }) => ({ seq, round: view })),
    cooldowns: [...s.cooldowns].filter(([, until]) => until > now),
    last_event_at: s.last_event_at,
    scope_mode: s.scope_mode,
    covered: [...s.covered],
    loop_wakes: [...s.loop_wakes],
    // Written only when set, so a snapshot of a supervision that never took external sessions keeps its shape.
    ...(s.include_external ? { include_external: true } : {}),
  };
}

/** The state a snapshot holds, less the rounds whose retention has passed since and the cooldowns run out. */
export function restoreSupervision(stored: StoredSupervision, now: number, retentionMs: number): SupervisionState {
  const rounds = new Map<string, HeldRound>(stored.rounds.map(({ seq, round }) => [round.id, { seq, view: { ...round, failure: round.failure ?? null, interruption: round.interruption ?? null } }]));
  const state: SupervisionState = {
    machine: supervisionMachine.resolveState({ value: stored.value, context: stored.context }),
    scope_mode: stored.scope_mode ?? 'all',
    include_external: stored.include_external ?? false,
    rounds,
    cooldowns: new Map(stored.cooldowns),
    covered: new Map(stored.covered ?? []),
    loop_wakes: new Map(stored.loop_wakes ?? []),
    last_event_at: stored.last_event_at,
  };
  return forgetExpired(state, now, retentionMs);
}
