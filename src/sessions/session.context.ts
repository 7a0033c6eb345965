import { Budget } from '../usage/budget.rules';
import { UsageTotals, emptyTotals } from '../usage/usage.model';
import { Attachment, ExitReason, Hold, LastProgress, LoopRecord, NetworkRecord, Pending, PermissionRequest, RateLimit, SessionInput } from './session.events';
import { SessionWorktree } from './session-worktree';
import type { Parked } from './session-limit.model';

/** What a session holds besides its state, pure: the session machine's context (session.machine.ts). */

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
  /** Parked at its model's limit until it resumes (session.parked); null or absent when not. */
  parked?: Parked | null;
  /** Limit refusals in a row (the backoff grows with them); a turn that ends normally sets it back to 0. Absent: 0. */
  limit_attempts?: number;
  /** Its sandboxed worker's latest network decisions and refusals, oldest first (NETWORK_LOG_MAX). Absent in sessions from before them. */
  network?: NetworkRecord[];
  /** The host:port rules the user allowed for the rest of this session (scope `session`). Absent when none. */
  network_allowed?: string[];
}

/** How many network facts a session keeps for its detail: the journal has them all. */
export const NETWORK_LOG_MAX = 50;

/**
 * A copy of the context as one object literal, every field in one order, so that every session's context has the one
 * shape (hidden class) and the same code reads them all alike. A spread copied whatever shape it was given: contexts
 * made at creation, restored from a snapshot and stepped had several, the copy in step() went through V8's slow
 * path, and each signal allocated about 2 KB more for its context and read it more slowly (bench/README.md, The
 * signal path, profiled). A field absent from an older session is copied as undefined, which reads as absent.
 */
export function copyContext(c: SessionContext): SessionContext {
  const copy: { [K in keyof Required<SessionContext>]: SessionContext[K] } = {
    id: c.id,
    alias: c.alias,
    title: c.title,
    runtime: c.runtime,
    profile_id: c.profile_id,
    cwd: c.cwd,
    command: c.command,
    args: c.args,
    profile_args: c.profile_args,
    profile_env: c.profile_env,
    permission_deny: c.permission_deny,
    env: c.env,
    excluded: c.excluded,
    loops: c.loops,
    created_at: c.created_at,
    node: c.node,
    isolation: c.isolation,
    work_tree: c.work_tree,
    origin: c.origin,
    external: c.external,
    pid: c.pid,
    pid_start_time: c.pid_start_time,
    runtime_session_id: c.runtime_session_id,
    attachment: c.attachment,
    last_progress: c.last_progress,
    last_result: c.last_result,
    pending: c.pending,
    queued_permissions: c.queued_permissions,
    state_since: c.state_since,
    waiting_since: c.waiting_since,
    updated_at: c.updated_at,
    exit_code: c.exit_code,
    exit_signal: c.exit_signal,
    exit_reason: c.exit_reason,
    stop_deadline_at: c.stop_deadline_at,
    held: c.held,
    loop: c.loop,
    loop_cooldowns: c.loop_cooldowns,
    worktree: c.worktree,
    usage: c.usage,
    budget: c.budget,
    rate_limit: c.rate_limit,
    network: c.network,
    network_allowed: c.network_allowed,
    sandbox: c.sandbox,
    parked: c.parked,
    limit_attempts: c.limit_attempts,
  };
  return copy;
}

export function contextFor(input: SessionInput): SessionContext {
  return copyContext({
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
  });
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
export const INERT_CONTEXT = contextFor(INERT_INPUT);
