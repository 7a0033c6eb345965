import { SessionActor } from './session.actor';
import { ExitReason, ExternalBinding, HoldReason, LastProgress, Pending, PermissionRequest, SessionOrigin, SessionState } from './session.events';

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
  /** `external`: a claude started outside Brainstem that reports through its hooks (docs/guide/external-sessions.md). */
  origin: SessionOrigin;
  /** An external session's claude session id and transcript; null for Brainstem's own sessions. */
  external: ExternalBinding | null;
  created_at: string;
  updated_at: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function toStatus(actor: SessionActor): SessionStatus {
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
    origin: c.origin ?? 'brainstem',
    external: c.external ?? null,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}
