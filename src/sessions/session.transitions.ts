import { addUsage } from '../usage/usage.model';
import { NETWORK_LOG_MAX, SessionContext, copyContext } from './session.context';
import { SessionEvent, SessionEventOf, SessionState } from './session.events';
import { WorktreeEventType, foldWorktree, isWorktreeEvent } from './session-worktree';
import { hostRule } from './network-hosts';

/**
 * The session machine's transitions as plain data and functions, pure: session.machine.ts builds the XState machine
 * from them, and step() below takes them directly, as XState would, without building an actor per step.
 */

/** What an action changes in the context; the actions of a transition apply in order, each seeing the one before. */
type Update = (context: SessionContext, event: SessionEvent) => Partial<SessionContext>;

const of = <K extends SessionEvent['type']>(event: SessionEvent, type: K): SessionEventOf<K> | null =>
  event.type === type ? (event as SessionEventOf<K>) : null;

const isCurrentPermission = (context: SessionContext, event: SessionEvent): boolean =>
  event.type === 'session.permission_resolved' && context.pending?.kind === 'permission' && context.pending.request_id === event.request_id;

export const GUARDS = {
  isCurrentPermission,
  /** The current request answered while others wait behind it. */
  isCurrentPermissionWithQueue: (context, event) => isCurrentPermission(context, event) && context.queued_permissions.length > 0,
  isQueuedPermission: (context, event) =>
    event.type === 'session.permission_resolved' && context.queued_permissions.some((p) => p.request_id === event.request_id),
  resumedRuntime: (_context, event) => event.type === 'session.recovered' && event.resumed,
  supersededTurn: (_context, event) => event.type === 'session.turn_ended' && event.superseded === true,
  answeredOnArrival: (_context, event) => event.type === 'session.permission_resolved' && event.by !== undefined,
  startsIdle: (_context, event) => event.type === 'session.started' && event.idle,
  /** Parked at its limit: a restart's resume keeps it working, its timer resumes it at the reset. */
  isParked: (context) => (context.parked ?? null) !== null,
} satisfies Record<string, (context: SessionContext, event: SessionEvent) => boolean>;

export const ACTIONS = {
  touch: (_c, event) => ({ updated_at: event.at }),
  enter: (_c, event) => ({ state_since: event.at }),
  waitChanged: (_c, event) => ({ waiting_since: event.at }),
  clearPending: () => ({ pending: null, queued_permissions: [] }),
  started: (_c, event) => {
    const e = of(event, 'session.started');
    return e ? { pid: e.pid, pid_start_time: e.pid_start_time, attachment: 'attached' as const } : {};
  },
  runtimeSession: (_c, event) => {
    const e = of(event, 'session.runtime_session_assigned');
    return e ? { runtime_session_id: e.runtime_session_id } : {};
  },
  turnResult: (_c, event) => {
    const e = of(event, 'session.turn_ended');
    return e ? { last_result: e.result } : {};
  },
  /** A turn that ended as turns do: the next limit refusal is the first in a row again. */
  limitsReset: () => ({ limit_attempts: 0 }),
  parked: (context, event) => {
    const e = of(event, 'session.parked');
    if (!e) return {};
    // One episode from its first refusal: a refusal again, or kept parked, does not start it anew.
    const since = context.parked?.since ?? e.at;
    const fallback = e.fallback_session_id ?? context.parked?.fallback_session_id;
    const parked = { reason: e.reason, resumes_at: e.resumes_at, source: e.source, limit_type: e.limit_type, attempt: e.attempt, prompt: e.prompt, since };
    return { parked: fallback === undefined ? parked : { ...parked, fallback_session_id: fallback }, limit_attempts: e.attempt };
  },
  unparked: () => ({ parked: null }),
  progress: (_c, event) => {
    const e = of(event, 'session.progress');
    return e ? { last_progress: { status: e.status, message: e.message, at: e.at } } : {};
  },
  blocked: (_c, event) => {
    const e = of(event, 'session.blocked');
    return e ? { pending: { kind: 'blocked' as const, reason: e.reason }, queued_permissions: [] } : {};
  },
  askedHuman: (_c, event) => {
    const e = of(event, 'session.asked_human');
    return e ? { pending: { kind: 'question' as const, question: e.question }, queued_permissions: [] } : {};
  },
  permissionRequested: (_c, event) => {
    const e = of(event, 'session.permission_requested');
    return e ? { pending: { kind: 'permission' as const, request_id: e.request_id, tool: e.tool, input: e.input }, queued_permissions: [] } : {};
  },
  queuePermission: (context, event) => {
    const e = of(event, 'session.permission_requested');
    return e ? { queued_permissions: [...context.queued_permissions, { request_id: e.request_id, tool: e.tool, input: e.input }] } : {};
  },
  nextPermission: (context) => {
    const [next, ...rest] = context.queued_permissions;
    return { pending: { kind: 'permission' as const, ...next }, queued_permissions: rest };
  },
  dropQueuedPermission: (context, event) => {
    const e = of(event, 'session.permission_resolved');
    return e ? { queued_permissions: context.queued_permissions.filter((p) => p.request_id !== e.request_id) } : {};
  },
  exclusion: (_c, event) => {
    const e = of(event, 'session.exclusion_changed');
    return e ? { excluded: e.excluded } : {};
  },
  held: (_c, event) => {
    const e = of(event, 'session.held');
    return e ? { held: { reason: e.reason, detail: e.detail, since: e.at } } : {};
  },
  released: () => ({ held: null }),
  loopDetected: (context, event) => {
    const e = of(event, 'session.loop_detected');
    if (!e) return {};
    const { pattern, count, since, at, signature, summary, evidence, cooldown_until: until } = e;
    return { loop: { pattern, count, since, at, until, signature, summary, evidence }, loop_cooldowns: { ...context.loop_cooldowns, [pattern]: until } };
  },
  worktree: (context, event) => (isWorktreeEvent(event) ? { worktree: foldWorktree(context.worktree, event) } : {}),
  usage: (context, event) => {
    const e = of(event, 'session.usage');
    if (!e) return {};
    const { at: _at, turn, ...entry } = e;
    return { usage: addUsage(context.usage, entry, turn !== context.usage.turns) };
  },
  budgetSet: (_c, event) => {
    const e = of(event, 'session.budget_set');
    return e ? { budget: e.budget } : {};
  },
  rateLimited: (_c, event) => {
    const e = of(event, 'session.rate_limited');
    return e ? { rate_limit: { status: e.status, resets_at: e.resets_at, limit_type: e.limit_type, since: e.at } } : {};
  },
  stopRequested: (_c, event) => {
    const e = of(event, 'session.stop_requested');
    return e ? { stop_deadline_at: e.deadline_at } : {};
  },
  externalRun: (_c, event) => {
    const e = of(event, 'session.external_run');
    return e ? { pid: e.pid, pid_start_time: e.pid_start_time, attachment: 'attached' as const } : {};
  },
  network: (context, event) => {
    const record = event.type === 'session.network_decided' ? { kind: 'decided' as const, ...event } : event.type === 'session.network_refused' ? { kind: 'refused' as const, ...event } : null;
    if (record === null) return {};
    const { type: _type, ...kept } = record;
    const network = [...(context.network ?? []), kept].slice(-NETWORK_LOG_MAX);
    const allowed = event.type === 'session.network_decided' && event.decision === 'allow' && event.scope === 'session' ? hostRule(event.host, event.port) : null;
    const known = context.network_allowed ?? [];
    return allowed === null || known.includes(allowed) ? { network } : { network, network_allowed: [...known, allowed] };
  },
  reopened: () => ({ exit_code: null, exit_signal: null, exit_reason: null }),
  recovered: (_c, event) => {
    const e = of(event, 'session.recovered');
    return e ? { attachment: e.attachment, pid: e.pid, pid_start_time: e.pid_start_time } : {};
  },
  exited: (_c, event) => {
    const e = of(event, 'session.exited');
    return e
      ? { exit_code: e.code, exit_signal: e.signal, exit_reason: e.reason, attachment: 'none' as const, pending: null, queued_permissions: [], stop_deadline_at: null, held: null, parked: null }
      : {};
  },
} satisfies Record<string, Update>;

export type GuardName = keyof typeof GUARDS;
export type ActionName = keyof typeof ACTIONS;

export interface TransitionSpec {
  readonly target?: SessionState;
  readonly guard?: GuardName;
  readonly actions: ActionName | readonly ActionName[];
}
type Candidates = TransitionSpec | readonly TransitionSpec[];
type On = { readonly [T in SessionEvent['type']]?: Candidates };

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
  'session.network_decided': { actions: ['network', 'touch'] },
  'session.network_refused': { actions: ['network', 'touch'] },
  // An external session's claude under another process (a new pid), in whatever state the session is.
  'session.external_run': { actions: ['externalRun', 'touch'] },
} as const satisfies On;

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
    { target: 'pending_handling', actions: ['turnResult', 'limitsReset', 'clearPending', 'waitChanged', 'touch'] },
  ],
  // Refused by its model's limit: still active, waiting for the reset (its timer, or someone, resumes it).
  'session.parked': { target: 'working', actions: ['parked', 'clearPending', 'touch'] },
  'session.unparked': { actions: ['unparked', 'touch'] },
  'session.permission_requested': { target: 'pending_authorization', actions: ['permissionRequested', 'waitChanged', 'touch'] },
  // Answered as it arrived (the profile's deny, the sandbox's Bash): recorded, never pending, and the state stays as it was.
  'session.permission_resolved': { guard: 'answeredOnArrival', actions: 'touch' },
  // An external claude works again: what it waited for was answered where it runs (its own prompt, its terminal).
  'session.external_activity': { target: 'working', actions: ['clearPending', 'touch'] },
  // A resumed runtime restarts between turns: it waits for an instruction, its old prompt is gone.
  'session.recovered': [
    { guard: 'isParked', actions: ['recovered', 'touch'] },
    { guard: 'resumedRuntime', target: 'pending_handling', actions: ['recovered', 'clearPending', 'touch'] },
    { actions: ['recovered', 'touch'] },
  ],
} as const satisfies On;

/** A message for the worker: a parked one takes it as its resume. */
const DISPATCH = { target: 'working', actions: ['clearPending', 'unparked', 'touch'] } as const;

/** Each state: the action on entering it from another, and what it accepts. */
export const STATES = {
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
        { guard: 'answeredOnArrival', actions: 'touch' },
        { guard: 'isCurrentPermissionWithQueue', actions: ['nextPermission', 'touch'] },
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
      // A connection still waiting when the session exited is denied by the exit; the launcher may report a refusal late.
      'session.network_decided': { actions: ['network', 'touch'] },
      'session.network_refused': { actions: ['network', 'touch'] },
      // An external session resumed (`claude --resume`): the same claude session, so the same Brainstem session.
      'session.external_run': { target: 'working', actions: ['reopened', 'externalRun', 'touch'] },
    },
  },
} as const satisfies Record<SessionState, { entry?: ActionName; on: On }>;

/** The transition the state takes for the event, as XState picks it: the first candidate whose guard holds; null when none does. */
export function selected(state: SessionState, context: SessionContext, event: SessionEvent): TransitionSpec | null {
  const on: On = STATES[state].on;
  const candidates = on[event.type];
  if (candidates === undefined) return null;
  const list: readonly TransitionSpec[] = Array.isArray(candidates) ? candidates : [candidates as TransitionSpec];
  for (const t of list) if (t.guard === undefined || GUARDS[t.guard](context, event)) return t;
  return null;
}

/**
 * The state and context after the event, as XState's transition computes them for this machine: the transition's
 * actions in order, then, when it targets another state, that state's entry action (a state targeting itself is not
 * re-entered). Null when the state does not take the event.
 */
export function step(state: SessionState, context: SessionContext, event: SessionEvent): { state: SessionState; context: SessionContext } | null {
  const t = selected(state, context, event);
  if (t === null) return null;
  const next = copyContext(context);
  const actions: readonly ActionName[] = typeof t.actions === 'string' ? [t.actions] : t.actions;
  for (const a of actions) Object.assign(next, ACTIONS[a](next, event));
  const target = t.target ?? state;
  const entry: ActionName | undefined = target === state ? undefined : (STATES[target] as { entry?: ActionName }).entry;
  if (entry !== undefined) Object.assign(next, ACTIONS[entry](next, event));
  return { state: target, context: next };
}
