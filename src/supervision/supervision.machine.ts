import { AnyActorScope, SnapshotFrom, assign, createActor, setup } from 'xstate';

export type StartedBy = 'user' | 'workflow';
export type ClosedReason = 'finished' | 'disabled' | 'converged' | 'workflow_converged' | 'max_turns' | 'restore_expired' | 'no_recoverable_worker';
/** failed: delivering the round to the brain failed (its process crashed, its webhook failed); the turn is used all the same. */
export type RoundOutcome = 'completed' | 'timed_out' | 'interrupted' | 'failed';
/**
 * Why a round was cut off: its service restarted (restart), another node took the supervisor lease from the node that
 * ran it (leader_lost), or supervision closed while it was in flight (supervision_closed).
 */
export type RoundInterruption = 'restart' | 'leader_lost' | 'supervision_closed';
const INTERRUPTIONS: ReadonlySet<unknown> = new Set<RoundInterruption>(['restart', 'leader_lost', 'supervision_closed']);
export const isRoundInterruption = (v: unknown): v is RoundInterruption => INTERRUPTIONS.has(v);

export const DEFAULT_MAX_TURNS = 60;
export const MAX_TURNS_LIMIT = 1000;
/** The longest supervision goal (task_hint), in characters. */
export const MAX_TASK_HINT = 4000;

/** Why supervision cannot take this task_hint (absent is fine), or null. */
export function taskHintProblem(hint: unknown): string | null {
  return hint === undefined || (typeof hint === 'string' && hint.length <= MAX_TASK_HINT) ? null : `task_hint: must be a string of at most ${MAX_TASK_HINT} characters`;
}

/** Why the main brain is woken: one supervised session and what it did. */
export interface WakeReason {
  session_id: string;
  alias: string;
  trigger: string;
  state: string | null;
  message: string | null;
  /** For a session that waits on someone: since when (ISO), what it waits on began. Absent otherwise, and in rounds journaled before. */
  since?: string;
  /** A loop's evidence: what the worker tried and what came back, its own text (quoted as data); absent for other triggers. */
  evidence?: string;
  /** A permission request's id, and its input as JSON (the worker's data, bounded); absent for other triggers, and before. */
  request_id?: string;
  input?: string;
  /** A question's seq in the main chat, where the user answers it (answer_to); absent when it is not there yet, and before. */
  chat_seq?: number;
}

/**
 * A reason with its keys in sorted order: a round carries hundreds, and journaling then needs no sorting copy. Built
 * key by key, without the spread objects of the optional keys: every trigger of a burst makes one.
 */
export function wakeReason(r: WakeReason): WakeReason {
  const out: Partial<WakeReason> = { alias: r.alias };
  if (r.chat_seq !== undefined) out.chat_seq = r.chat_seq;
  if (r.evidence !== undefined) out.evidence = r.evidence;
  if (r.input !== undefined) out.input = r.input;
  out.message = r.message;
  if (r.request_id !== undefined) out.request_id = r.request_id;
  out.session_id = r.session_id;
  if (r.since !== undefined) out.since = r.since;
  out.state = r.state;
  out.trigger = r.trigger;
  return out as WakeReason;
}

export interface RoundInFlight {
  id: string;
  /** Epoch ms. The deadline is a timestamp, not a timer, so it survives replay and is re-armed after restore. */
  started_at: number;
  deadline_at: number;
  reasons: WakeReason[];
  /** What each woken session last reported, taken when the round started: in rounds journaled before `reports`. */
  evidence?: WorkerEvidence[];
  /**
   * What the woken sessions that had something to report last reported, taken when the round started; a session the
   * reasons name with no report had neither a turn result nor output (round-evidence.ts). Absent in rounds journaled before.
   */
  reports?: WorkerReport[];
  /** Sessions the reasons name that the directory did not know when the round started: no evidence is said of them. */
  unseen?: string[];
  /** Live sessions sharing one git work tree when the round started (no worktree of their own); absent when none, or before. */
  shared_work_trees?: SharedWorkTree[];
  /**
   * The facts taken as it started (round-facts.ts): reasons resolved before it started, one line per supervised
   * session (and how many more there were), what others did since the round before (and how many lines more), and
   * which round that was. Absent in rounds journaled before.
   */
  resolved?: ResolvedReason[];
  board?: BoardLine[];
  board_more?: number;
  since?: string[];
  since_more?: number;
  since_round?: string;
  /** The node that started it, in which lease term, and the driver it was handed to: absent in rounds journaled before. */
  node?: string;
  term?: number;
  driver?: string;
}

/** A reason the round was woken for that was resolved before it started: shown as such, never as waiting. */
export interface ResolvedReason {
  session_id: string;
  alias: string;
  trigger: string;
  /** The state the session is in when the round starts, and since when (epoch ms). */
  state: string;
  at: number;
}

/** A supervised session as the board shows it: Brainstem's facts, no worker text. */
export interface BoardLine {
  session_id: string;
  alias: string;
  state: string;
  /** Since when (epoch ms) it is in its state, or waits on what it waits on. */
  since: number;
  /** What it waits on (permission, question, blocked), or absent. */
  waits?: 'permission' | 'question' | 'blocked';
  runtime?: string;
  /** Brainstem holds it (loop, budget). */
  held?: string;
  loop?: string;
  /** Until when its model's rate limit holds it (epoch ms; 0: no reset said). */
  rate_limited_until?: number;
  /** Parked at its model's limit, until when (epoch ms; null: kept parked until someone resumes it). */
  parked?: { reason: 'usage_limit' | 'rate_limit'; resumes_at: number | null };
  spend_usd?: number;
  budget_usd?: number;
  /** How many deny rules its profile gives it: a pending request matched none of them. */
  deny_rules?: number;
  worktree?: { branch: string; base: string | null; state: string; merged: boolean };
  /** Its worker runs outside the OS sandbox, with the user's full rights. */
  unsandboxed?: true;
}

/** Live sessions working in one git work tree: they can overwrite each other's changes. */
export interface SharedWorkTree {
  work_tree: string;
  aliases: string[];
}

/** A woken session's last turn result, or else the tail of its output: worker text, bounded. */
export interface WorkerEvidence {
  session_id: string;
  alias: string;
  /** output_unavailable: no turn result, and the node that keeps its output gave none (`text` says which and why). */
  kind: 'turn_result' | 'output_tail' | 'output_unavailable' | 'nothing';
  text: string;
}

/**
 * A woken session's report as a round journals it: the session's alias is in the reasons, and `text` is absent when it
 * is the message of the session's pending_handling reason (the same turn result, journaled once).
 */
export interface WorkerReport {
  kind: 'turn_result' | 'output_tail' | 'output_unavailable';
  session_id: string;
  text?: string;
}

export interface SupervisionContext {
  ever_enabled: boolean;
  turns_used: number;
  max_turns: number;
  task_hint: string;
  started_by: StartedBy | null;
  closed_reason: ClosedReason | null;
  summary: string | null;
  round: RoundInFlight | null;
  changed_at: number;
}

export type SupervisionEvent =
  | { type: 'ENABLE'; at: number; started_by: StartedBy; task_hint?: string; max_turns?: number }
  | { type: 'DISABLE'; at: number; reason: ClosedReason; summary?: string }
  | { type: 'ROUND_START'; at: number; round: RoundInFlight }
  | { type: 'ROUND_END'; at: number; round_id: string; outcome: RoundOutcome };

const initialContext: SupervisionContext = {
  ever_enabled: false,
  turns_used: 0,
  max_turns: DEFAULT_MAX_TURNS,
  task_hint: '',
  started_by: null,
  closed_reason: null,
  summary: null,
  round: null,
  changed_at: 0,
};

/**
 * Supervision's state as a pure state machine: off → on (idle ⇄ in_round) → off. supervision.decider.ts decides
 * the commands and folds the journaled events through it (live and at replay). No round starts once turns_used
 * reaches max_turns; the decider closes with reason max_turns as the last round ends.
 */
export const supervisionMachine = setup({
  types: { context: {} as SupervisionContext, events: {} as SupervisionEvent },
  guards: {
    isCurrentRound: ({ context, event }) => event.type === 'ROUND_END' && context.round?.id === event.round_id,
    hasTurnsLeft: ({ context }) => context.turns_used < context.max_turns,
  },
  actions: {
    enable: assign(({ context, event }) => {
      if (event.type !== 'ENABLE') return {};
      const wasOn = context.ever_enabled && context.closed_reason === null;
      return {
        ever_enabled: true,
        turns_used: 0,
        max_turns: event.max_turns ?? (wasOn ? context.max_turns : DEFAULT_MAX_TURNS),
        task_hint: event.task_hint ?? (wasOn ? context.task_hint : ''),
        // A user enabling takes ownership: a workflow converging then leaves supervision on.
        started_by: wasOn && context.started_by === 'user' ? 'user' : event.started_by,
        closed_reason: null,
        summary: null,
        changed_at: event.at,
      };
    }),
    disable: assign(({ event }) =>
      event.type === 'DISABLE' ? { closed_reason: event.reason, summary: event.summary ?? null, round: null, changed_at: event.at } : {},
    ),
    startRound: assign(({ context, event }) =>
      event.type === 'ROUND_START' ? { round: event.round, turns_used: context.turns_used + 1, changed_at: event.at } : {},
    ),
    endRound: assign(({ event }) => ({ round: null, changed_at: event.at })),
  },
}).createMachine({
  id: 'supervision',
  context: initialContext,
  initial: 'off',
  states: {
    off: {
      on: { ENABLE: { target: 'on', actions: 'enable' } },
    },
    on: {
      initial: 'idle',
      on: {
        ENABLE: { actions: 'enable' },
        DISABLE: { target: 'off', actions: 'disable' },
      },
      states: {
        idle: {
          on: { ROUND_START: { guard: 'hasTurnsLeft', target: 'in_round', actions: 'startRound' } },
        },
        in_round: {
          on: {
            ROUND_END: { guard: 'isCurrentRound', target: 'idle', actions: 'endRound' },
          },
        },
      },
    },
  },
});

type MachineSnapshot = SnapshotFrom<typeof supervisionMachine>;

/**
 * The scope every fold runs the machine in. xstate's transition() builds a throwaway actor, with its initial snapshot,
 * on every call: a third of folding a round.started, which is applied before the round is published. The machine has
 * only assign actions and guards (no children, invokes or actions to run), so one inert scope serves every step
 * (supervision.machine.spec.ts holds the two equal).
 */
const inertScope: AnyActorScope = (() => {
  const self = createActor(supervisionMachine);
  const none = () => undefined;
  return { self, id: '', sessionId: '', logger: none, defer: none, emit: none, system: self.system, stopChild: none, actionExecutor: none };
})();

/** The snapshot after an event: xstate's pure transition(), without the actor it builds each time. */
export function nextSupervision(snapshot: MachineSnapshot, event: SupervisionEvent): MachineSnapshot {
  return supervisionMachine.transition(snapshot, event, inertScope);
}
