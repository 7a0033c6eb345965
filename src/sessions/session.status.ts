import type { SandboxPolicy } from '../sandbox/sandbox-policy';
import { SessionActor } from './session.actor';
import { Budget } from '../usage/budget.rules';
import { UsageTotals, tokensOf } from '../usage/usage.model';
import { ExitReason, ExternalBinding, HoldReason, LastProgress, LoopRecord, NetworkRecord, Pending, PermissionRequest, RateLimitStatus, SessionOrigin, SessionState } from './session.events';
import { SessionWarning } from './session-warnings';
import { SessionWorktree } from './session-worktree';
import type { LimitReason, ParkSource } from './session-limit.model';

/** The display labels (docs/architecture/decisions.md#session-states) for the three states that wake the main brain. */
export const STATE_LABELS: Partial<Record<SessionState, string>> = {
  pending_handling: '待处理',
  pending_authorization: '待授权',
  pending_decision: '待拍板',
};

/** The session status object of docs/architecture/decisions.md#the-session-status-object, plus the exit signal and whether the worker is detached. */
export interface SessionStatus {
  id: string;
  alias: string;
  title: string;
  runtime: string;
  profile_id: string | null;
  cwd: string;
  /** The node that runs the worker (BRAINSTEM_NODE_ID); null for a session created before nodes. */
  node: string | null;
  state: SessionState;
  state_label: string | null;
  state_since: string;
  excluded: boolean;
  supervised: boolean;
  pid: number | null;
  detached: boolean;
  exit_code: number | null;
  exit_signal: string | null;
  exit_reason: ExitReason | null;
  last_progress: (Omit<LastProgress, 'at'> & { at: string }) | null;
  pending: Pending | null;
  /** Permission requests behind the pending one, oldest first. */
  queued_permissions: PermissionRequest[];
  /** Held: no message reaches the worker until the user releases it (POST …/release). */
  held: { reason: HoldReason; detail: string; since: string } | null;
  /**
   * The latest loop detected (docs/guide/loops.md), or null: `until` is when its cooldown ends (the dashboard shows it
   * as needing attention until then); the evidence is the worker's own text.
   */
  loop: (Pick<LoopRecord, 'pattern' | 'count' | 'summary' | 'evidence'> & { since: string; detected_at: string; until: string }) | null;
  /** What its turns used: tokens of each kind, their sum, and dollars (estimated from prices where the runtime said none). */
  usage: UsageTotals & { tokens: number };
  /** Its own budget; null: its profile's per-session budget applies, if the profile has one. */
  budget: Budget | null;
  /** Its runtime's rate-limit state, when it reported one: `rejected` until `resets_at`. */
  rate_limit: { status: RateLimitStatus; resets_at: string | null; limit_type: string | null; since: string } | null;
  /**
   * Parked at its model's limit (docs/guide/usage.md#usage-limits): why, when it resumes by itself (null: kept parked
   * until someone resumes it), where that time came from, and since when; null when not parked.
   */
  parked: { reason: LimitReason; resumes_at: string | null; source: ParkSource; limit_type: string | null; attempt: number; since: string; fallback_session_id: string | null } | null;
  /** `external`: a claude started outside Brainstem that reports through its hooks (docs/guide/external-sessions.md). */
  origin: SessionOrigin;
  /** An external session's claude session id and transcript; null for Brainstem's own sessions. */
  external: ExternalBinding | null;
  created_at: string;
  updated_at: string;
  isolation: 'none' | 'worktree';
  /** The git work tree the worker runs in (its worktree, or the checkout its cwd is in); null outside git. */
  work_tree: string | null;
  /** The session's worktree (isolation `worktree`): its branch, base, state and the last operation on it. */
  worktree: WorktreeStatus | null;
  /** What the session should know of (another live session in its work tree). */
  warnings: SessionWarning[];
  /**
   * Its sandboxed worker's latest network decisions (`kind: decided`: by whom, the rule, the request answered) and the
   * connections the sandbox refused on its own (`kind: refused`), oldest first, at most 50 (docs/guide/sessions.md#network-access).
   */
  network: Timed<NetworkRecord, 'at'>[];
  /**
   * Whether its worker runs in the OS sandbox (docs/operations/security.md), and under which policy; else why not
   * (`policy` null). External sessions, and sessions created before sandboxing, are not sandboxed.
   */
  sandbox: { on: boolean; policy: SandboxPolicy | null; reason: string | null };
}

/** Each member of T with its K fields as ISO text (distributed, so a union keeps its members apart). */
type Timed<T, K extends keyof T> = T extends unknown ? Omit<T, K> & { [P in K]: string } : never;

/** A worktree as the status shows it: its times as ISO text. */
export type WorktreeStatus = Omit<SessionWorktree, 'created_at' | 'pending_op' | 'last_op' | 'merged' | 'removed'> & {
  created_at: string;
  pending_op: Timed<NonNullable<SessionWorktree['pending_op']>, 'at'> | null;
  last_op: Timed<NonNullable<SessionWorktree['last_op']>, 'at'> | null;
  merged: Timed<NonNullable<SessionWorktree['merged']>, 'at'> | null;
  removed: Timed<NonNullable<SessionWorktree['removed']>, 'at'> | null;
};

/** ISO texts of the times statuses showed lately: a session's creation and state times recur in every status of it. */
const isoTexts = new Map<number, string>();
const ISO_TEXTS = 4096;

function iso(ms: number): string {
  let text = isoTexts.get(ms);
  if (text === undefined) {
    // Cleared whole when full: the times in use come back at once, the rest were one status's.
    if (isoTexts.size >= ISO_TEXTS) isoTexts.clear();
    text = new Date(ms).toISOString();
    isoTexts.set(ms, text);
  }
  return text;
}

function worktreeStatus(w: SessionWorktree): WorktreeStatus {
  const timed = <T extends { at: number }>(x: T | null): (Omit<T, 'at'> & { at: string }) | null => (x ? { ...x, at: iso(x.at) } : null);
  return { ...w, created_at: iso(w.created_at), pending_op: timed(w.pending_op), last_op: timed(w.last_op), merged: timed(w.merged), removed: timed(w.removed) } as WorktreeStatus;
}

export function toStatus(actor: SessionActor, warnings: SessionWarning[] = []): SessionStatus {
  const c = actor.context;
  const state = actor.state;
  return {
    id: c.id,
    alias: c.alias,
    title: c.title,
    runtime: c.runtime,
    profile_id: c.profile_id,
    cwd: c.cwd,
    node: c.node ?? null,
    state,
    state_label: STATE_LABELS[state] ?? null,
    state_since: iso(c.state_since),
    excluded: c.excluded,
    supervised: !c.excluded,
    pid: c.pid,
    detached: c.attachment === 'detached',
    exit_code: c.exit_code,
    exit_signal: c.exit_signal,
    exit_reason: c.exit_reason,
    last_progress: c.last_progress ? { ...c.last_progress, at: iso(c.last_progress.at) } : null,
    pending: c.pending,
    queued_permissions: c.queued_permissions,
    held: c.held ? { reason: c.held.reason, detail: c.held.detail, since: iso(c.held.since) } : null,
    loop: c.loop ? { pattern: c.loop.pattern, count: c.loop.count, summary: c.loop.summary, evidence: c.loop.evidence, since: iso(c.loop.since), detected_at: iso(c.loop.at), until: iso(c.loop.until) } : null,
    usage: { ...c.usage, tokens: tokensOf(c.usage) },
    budget: c.budget,
    rate_limit: c.rate_limit
      ? { status: c.rate_limit.status, resets_at: c.rate_limit.resets_at === null ? null : iso(c.rate_limit.resets_at), limit_type: c.rate_limit.limit_type, since: iso(c.rate_limit.since) }
      : null,
    parked: c.parked
      ? { reason: c.parked.reason, resumes_at: c.parked.resumes_at === null ? null : iso(c.parked.resumes_at), source: c.parked.source, limit_type: c.parked.limit_type, attempt: c.parked.attempt, since: iso(c.parked.since), fallback_session_id: c.parked.fallback_session_id ?? null }
      : null,
    origin: c.origin ?? 'brainstem',
    external: c.external ?? null,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
    isolation: c.isolation ?? 'none',
    work_tree: c.work_tree ?? null,
    worktree: c.worktree ? worktreeStatus(c.worktree) : null,
    warnings,
    network: (c.network ?? []).map((r) => ({ ...r, at: iso(r.at) })),
    sandbox: sandboxStatus(c),
  };
}

function sandboxStatus(c: SessionActor['context']): SessionStatus['sandbox'] {
  if (c.sandbox?.on) return { on: true, policy: c.sandbox.policy, reason: null };
  const reason = c.sandbox ? c.sandbox.reason : c.origin === 'external' ? 'started outside Brainstem' : 'created before sandboxing';
  return { on: false, policy: null, reason };
}
