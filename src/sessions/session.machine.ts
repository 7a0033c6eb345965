import { isDeepStrictEqual } from 'node:util';
import { SnapshotFrom, and, assign, initialTransition, setup, transition } from 'xstate';
import { Budget } from '../usage/budget.rules';
import { UsageTotals, addUsage, emptyTotals } from '../usage/usage.model';
import {
  Attachment,
  ExitReason,
  Hold,
  LastProgress,
  LoopRecord,
  Pending,
  PermissionRequest,
  RateLimit,
  SessionEvent,
  SessionEventOf,
  SessionInput,
  SessionState,
} from './session.events';
import { SessionWorktree, WorktreeEventType, foldWorktree, isWorktreeEvent } from './session-worktree';

export interface SessionContext extends Omit<SessionInput, 'budget'> {
  pid: number | null;
  /** /proc/<pid>/stat start time: a pid is only "ours" while this still matches. */
  pid_start_time: string | null;
  runtime_session_id: string | null;
  attachment: Attachment;
  last_progress: LastProgress | null;
  /** What the worker's latest turn reported as its result (null when that turn reported none). */
  last_result: string | null;
  pending: Pending | null;
  /**
   * Permission requests raised while another is pending (claude asks for parallel tool calls at once), in
   * order; each becomes `pending` when the one before it is resolved. Empty unless `pending` is a permission.
   */
  queued_permissions: PermissionRequest[];
  state_since: number;
  /**
   * When what the session waits on last changed without a change of state: a new question, a new blocked reason, a
   * new turn result, a new permission request while it waits already. What it waits on began at the later of this and
   * state_since (attentionSince).
   */
  waiting_since: number;
  updated_at: number;
  exit_code: number | null;
  exit_signal: string | null;
  exit_reason: ExitReason | null;
  /** When SIGKILL follows an unanswered SIGTERM: a timestamp, so a restart can re-arm it. */
  stop_deadline_at: number | null;
  /** Held: no message reaches the worker until it is released. Orthogonal to the state. */
  held: Hold | null;
  /** The latest loop detected; null when none was. */
  loop: LoopRecord | null;
  /** Until when (epoch ms) each loop pattern stays quiet for this session: journaled, so a restart keeps the cooldowns. */
  loop_cooldowns: Partial<Record<LoopRecord['pattern'], number>>;
  /** The session's git worktree (isolation `worktree`); null without one. */
  worktree: SessionWorktree | null;
  /** What its turns used, summed from its session.usage events. */
  usage: UsageTotals;
  /** Its own budget (the request's, or set since); null: its profile's per-session budget applies, if any. */
  budget: Budget | null;
  /** Its runtime's rate-limit state, as last reported; null until it reports one. */
  rate_limit: RateLimit | null;
}

const at = ({ event }: { event: SessionEvent }): number => event.at;
const of = <K extends SessionEvent['type']>(event: SessionEvent, type: K): SessionEventOf<K> | null =>
  event.type === type ? (event as SessionEventOf<K>) : null;

/** A worktree's facts, taken in every state: its merge or removal usually comes after the worker exited. */
const WORKTREE_FACT = { actions: ['worktree', 'touch'] } as const;
const WORKTREE = {
  'session.worktree_created': WORKTREE_FACT,
  'session.worktree_prepared': WORKTREE_FACT,
  'session.worktree_op_requested': WORKTREE_FACT,
  'session.worktree_merged': WORKTREE_FACT,
  'session.worktree_removed': WORKTREE_FACT,
  'session.worktree_op_failed': WORKTREE_FACT,
  'session.worktree_cleanup_blocked': WORKTREE_FACT,
  'session.worktree_missing': WORKTREE_FACT,
} as const satisfies Record<WorktreeEventType, typeof WORKTREE_FACT>;

/** What any state with a (possibly not yet started) worker accepts without changing state. */
const REPORTS = {
  ...WORKTREE,
  'session.progress': { actions: ['progress', 'touch'] },
  'session.context_requested': { actions: 'touch' },
  'session.runtime_session_assigned': { actions: ['runtimeSession', 'touch'] },
  'session.exclusion_changed': { actions: ['exclusion', 'touch'] },
  'session.stop_requested': { actions: ['stopRequested', 'touch'] },
  'session.held': { actions: ['held', 'touch'] },
  'session.released': { actions: ['released', 'touch'] },
  'session.loop_detected': { actions: ['loopDetected', 'touch'] },
  'session.usage': { actions: 'usage' },
  'session.budget_set': { actions: ['budgetSet', 'touch'] },
  'session.budget_warning': { actions: 'touch' },
  'session.budget_exceeded': { actions: 'touch' },
  'session.rate_limited': { actions: ['rateLimited', 'touch'] },
  'session.exited': { target: 'exited', actions: ['exited', 'touch'] },
  // An external session's claude under another process (a new pid), in whatever state the session is.
  'session.external_run': { actions: ['externalRun', 'touch'] },
} as const;

/**
 * What a started worker's states accept. Targets are siblings, so a repeat (blocked while already
 * pending_handling) is a self-transition that does not re-enter: state_since keeps its first value.
 */
const LIVE = {
  ...REPORTS,
  'session.blocked': { target: 'pending_handling', actions: ['blocked', 'waitChanged', 'touch'] },
  'session.asked_human': { target: 'pending_decision', actions: ['askedHuman', 'waitChanged', 'touch'] },
  'session.turn_ended': [
    { guard: 'supersededTurn', actions: ['turnResult', 'touch'] },
    { target: 'pending_handling', actions: ['turnResult', 'clearPending', 'waitChanged', 'touch'] },
  ],
  'session.permission_requested': { target: 'pending_authorization', actions: ['permissionRequested', 'waitChanged', 'touch'] },
  // Denied by the profile as it arrived: recorded, never pending, and the state stays as it was.
  'session.permission_resolved': { guard: 'deniedOnArrival', actions: 'touch' },
  // An external claude works again: what it waited for was answered where it runs (its own prompt, its terminal).
  'session.external_activity': { target: 'working', actions: ['clearPending', 'touch'] },
  // A resumed runtime restarts between turns: it waits for an instruction, its old prompt is gone.
  'session.recovered': [
    { guard: 'resumedRuntime', target: 'pending_handling', actions: ['recovered', 'clearPending', 'touch'] },
    { actions: ['recovered', 'touch'] },
  ],
} as const;

const DISPATCH = { target: 'working', actions: ['clearPending', 'touch'] } as const;

function contextFor(input: SessionInput): SessionContext {
  return {
    ...input,
    pid: null,
    pid_start_time: null,
    runtime_session_id: null,
    attachment: 'none',
    last_progress: null,
    last_result: null,
    pending: null,
    queued_permissions: [],
    state_since: input.created_at,
    waiting_since: input.created_at,
    updated_at: input.created_at,
    exit_code: null,
    exit_signal: null,
    exit_reason: null,
    stop_deadline_at: null,
    held: null,
    loop: null,
    loop_cooldowns: {},
    worktree: null,
    usage: emptyTotals(),
    budget: input.budget ?? null,
    rate_limit: null,
  };
}

const INERT_INPUT: SessionInput = {
  id: '',
  alias: '',
  title: '',
  runtime: '',
  profile_id: null,
  cwd: '',
  command: null,
  args: [],
  env: {},
  excluded: false,
  created_at: 0,
};
const INERT_CONTEXT = contextFor(INERT_INPUT);

/**
 * A coding session as a pure state machine: how each event moves the state. The rules on commands are in
 * session.decider.ts; the registry journals every accepted event before adopting the next snapshot, and replay
 * folds the journal through the same transitions.
 * No I/O, no timers, no clock: every event carries its own `at`.
 */
export const sessionMachine = setup({
  types: { context: {} as SessionContext, events: {} as SessionEvent, input: {} as SessionInput },
  guards: {
    isCurrentPermission: ({ context, event }) =>
      event.type === 'session.permission_resolved' && context.pending?.kind === 'permission' && context.pending.request_id === event.request_id,
    isQueuedPermission: ({ context, event }) =>
      event.type === 'session.permission_resolved' && context.queued_permissions.some((p) => p.request_id === event.request_id),
    hasQueuedPermission: ({ context }) => context.queued_permissions.length > 0,
    resumedRuntime: ({ event }) => event.type === 'session.recovered' && event.resumed,
    supersededTurn: ({ event }) => event.type === 'session.turn_ended' && event.superseded === true,
    deniedOnArrival: ({ event }) => event.type === 'session.permission_resolved' && event.by === 'profile',
    startsIdle: ({ event }) => event.type === 'session.started' && event.idle,
  },
  actions: {
    touch: assign({ updated_at: at }),
    enter: assign({ state_since: at }),
    waitChanged: assign({ waiting_since: at }),
    clearPending: assign({ pending: null, queued_permissions: [] }),
    started: assign(({ event }) => {
      const e = of(event, 'session.started');
      return e ? { pid: e.pid, pid_start_time: e.pid_start_time, attachment: 'attached' as const } : {};
    }),
    runtimeSession: assign(({ event }) => {
      const e = of(event, 'session.runtime_session_assigned');
      return e ? { runtime_session_id: e.runtime_session_id } : {};
    }),
    turnResult: assign(({ event }) => {
      const e = of(event, 'session.turn_ended');
      return e ? { last_result: e.result } : {};
    }),
    progress: assign(({ event }) => {
      const e = of(event, 'session.progress');
      return e ? { last_progress: { status: e.status, message: e.message, at: e.at } } : {};
    }),
    blocked: assign(({ event }) => {
      const e = of(event, 'session.blocked');
      return e ? { pending: { kind: 'blocked' as const, reason: e.reason }, queued_permissions: [] } : {};
    }),
    askedHuman: assign(({ event }) => {
      const e = of(event, 'session.asked_human');
      return e ? { pending: { kind: 'question' as const, question: e.question }, queued_permissions: [] } : {};
    }),
    permissionRequested: assign(({ event }) => {
      const e = of(event, 'session.permission_requested');
      return e ? { pending: { kind: 'permission' as const, request_id: e.request_id, tool: e.tool, input: e.input }, queued_permissions: [] } : {};
    }),
    queuePermission: assign(({ context, event }) => {
      const e = of(event, 'session.permission_requested');
      return e ? { queued_permissions: [...context.queued_permissions, { request_id: e.request_id, tool: e.tool, input: e.input }] } : {};
    }),
    nextPermission: assign(({ context }) => {
      const [next, ...rest] = context.queued_permissions;
      return { pending: { kind: 'permission' as const, ...next }, queued_permissions: rest };
    }),
    dropQueuedPermission: assign(({ context, event }) => {
      const e = of(event, 'session.permission_resolved');
      return e ? { queued_permissions: context.queued_permissions.filter((p) => p.request_id !== e.request_id) } : {};
    }),
    exclusion: assign(({ event }) => {
      const e = of(event, 'session.exclusion_changed');
      return e ? { excluded: e.excluded } : {};
    }),
    held: assign(({ event }) => {
      const e = of(event, 'session.held');
      return e ? { held: { reason: e.reason, detail: e.detail, since: e.at } } : {};
    }),
    released: assign({ held: null }),
    loopDetected: assign(({ context, event }) => {
      const e = of(event, 'session.loop_detected');
      if (!e) return {};
      const { pattern, count, since, at, signature, summary, evidence, cooldown_until: until } = e;
      return { loop: { pattern, count, since, at, until, signature, summary, evidence }, loop_cooldowns: { ...context.loop_cooldowns, [pattern]: until } };
    }),
    worktree: assign(({ context, event }) => (isWorktreeEvent(event) ? { worktree: foldWorktree(context.worktree, event) } : {})),
    usage: assign(({ context, event }) => {
      const e = of(event, 'session.usage');
      if (!e) return {};
      const { at: _at, turn, ...entry } = e;
      return { usage: addUsage(context.usage, entry, turn !== context.usage.turns) };
    }),
    budgetSet: assign(({ event }) => {
      const e = of(event, 'session.budget_set');
      return e ? { budget: e.budget } : {};
    }),
    rateLimited: assign(({ event }) => {
      const e = of(event, 'session.rate_limited');
      return e ? { rate_limit: { status: e.status, resets_at: e.resets_at, limit_type: e.limit_type, since: e.at } } : {};
    }),
    stopRequested: assign(({ event }) => {
      const e = of(event, 'session.stop_requested');
      return e ? { stop_deadline_at: e.deadline_at } : {};
    }),
    externalRun: assign(({ event }) => {
      const e = of(event, 'session.external_run');
      return e ? { pid: e.pid, pid_start_time: e.pid_start_time, attachment: 'attached' as const } : {};
    }),
    reopened: assign({ exit_code: null, exit_signal: null, exit_reason: null }),
    recovered: assign(({ event }) => {
      const e = of(event, 'session.recovered');
      return e ? { attachment: e.attachment, pid: e.pid, pid_start_time: e.pid_start_time } : {};
    }),
    exited: assign(({ event }) => {
      const e = of(event, 'session.exited');
      return e
        ? {
            exit_code: e.code,
            exit_signal: e.signal,
            exit_reason: e.reason,
            attachment: 'none' as const,
            pending: null,
            queued_permissions: [],
            stop_deadline_at: null,
            held: null,
          }
        : {};
    }),
  },
}).createMachine({
  id: 'session',
  // xstate's transition() builds a throwaway actor without input on every call; a placeholder, never adopted, keeps
  // that from throwing a TypeError each time (caught by xstate, it made every step several times dearer).
  context: ({ input }) => (input === undefined ? INERT_CONTEXT : contextFor(input)),
  initial: 'starting',
  states: {
    starting: {
      on: {
        ...REPORTS,
        // An external session is created at its claude's first report: the claude runs already.
        'session.external_run': { target: 'working', actions: ['externalRun', 'touch'] },
        'session.started': [
          { guard: 'startsIdle', target: 'pending_handling', actions: ['started', 'touch'] },
          { target: 'working', actions: ['started', 'touch'] },
        ],
      },
    },
    working: { entry: 'enter', on: { ...LIVE, 'session.message_dispatched': DISPATCH } },
    pending_handling: { entry: 'enter', on: { ...LIVE, 'session.message_dispatched': DISPATCH } },
    pending_decision: {
      entry: 'enter',
      // A question to the human is still open after a resume.
      on: { ...LIVE, 'session.message_dispatched': DISPATCH, 'session.recovered': { actions: ['recovered', 'touch'] } },
    },
    // Instructions wait until every permission is resolved; requests are answered in any order.
    pending_authorization: {
      entry: 'enter',
      on: {
        ...LIVE,
        'session.permission_requested': { actions: ['queuePermission', 'waitChanged', 'touch'] },
        'session.permission_resolved': [
          { guard: 'deniedOnArrival', actions: 'touch' },
          { guard: and(['isCurrentPermission', 'hasQueuedPermission']), actions: ['nextPermission', 'touch'] },
          { guard: 'isCurrentPermission', target: 'working', actions: ['clearPending', 'touch'] },
          { guard: 'isQueuedPermission', actions: ['dropQueuedPermission', 'touch'] },
        ],
      },
    },
    exited: {
      entry: 'enter',
      on: {
        ...WORKTREE,
        'session.exclusion_changed': { actions: ['exclusion', 'touch'] },
        // A turn's usage can come after the exit it ended with: it was spent all the same.
        'session.usage': { actions: 'usage' },
        // An external session resumed (`claude --resume`): the same claude session, so the same Brainstem session.
        'session.external_run': { target: 'working', actions: ['reopened', 'externalRun', 'touch'] },
      },
    },
  },
});

export type SessionSnapshot = SnapshotFrom<typeof sessionMachine>;

export function createSession(input: SessionInput): SessionSnapshot {
  return initialTransition(sessionMachine, input)[0];
}

export function stateOf(snapshot: SessionSnapshot): SessionState {
  return snapshot.value as SessionState;
}

/** When what the session waits on began: entering its state, or a later change of what it waits on within it. */
export function attentionSince(c: Pick<SessionContext, 'state_since' | 'waiting_since'>): number {
  return Math.max(c.state_since, c.waiting_since);
}

/**
 * The transition last taken from each snapshot. Snapshots are immutable and the machine is pure, so the next snapshot
 * is a function of the two: the command path takes each transition twice (deciding what a fact changes, then applying
 * the fact as stored), and xstate's public transition() builds a throwaway actor every time, which made a command
 * several times dearer (bench:sessions). Held weakly: it goes with the snapshot.
 */
const taken = new WeakMap<SessionSnapshot, { event: SessionEvent; next: SessionSnapshot }>();

/**
 * The next snapshot if the machine accepts the event (some transition is enabled), else null. Through xstate's public,
 * pure transition(): it answers the actions to execute instead of running them, and the session machine only assigns,
 * so an action to execute would break replay's purity: refused.
 */
export function nextSnapshot(snapshot: SessionSnapshot, event: SessionEvent): SessionSnapshot | null {
  if (!snapshot.can(event)) return null;
  const last = taken.get(snapshot);
  if (last && isDeepStrictEqual(last.event, event)) return last.next;
  const [next, actions] = transition(sessionMachine, snapshot, event);
  if (actions.length > 0) throw new Error(`session machine action ${actions[0].type} has an effect; the machine must stay pure`);
  taken.set(snapshot, { event, next });
  return next;
}
