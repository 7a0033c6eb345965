import { JournalEvent } from '../journal/journal.port';
import { NEEDS_ATTENTION } from './attention';
import { clipPermissionInput, clipTurnResult } from './round-prompt';
import { WakeReason, wakeReason } from './supervision.machine';
import { SessionView } from './session-directory.port';
import { BudgetScope, describeCrossing } from '../usage/budget.rules';

/** A loop detected in a supervised session: whether it wakes the brain or holds the session is the loop escalation's to decide. */
export interface LoopTrigger {
  kind: 'loop';
  reason: WakeReason;
  pattern: string;
  signature: string;
  summary: string;
  escalate_after: number;
}

/** `requested`: the exit of a stop someone asked for (the user, the brain's stop_session): it wakes no round of its own. */
export type TriggerOrExit = { kind: 'wake'; reason: WakeReason } | { kind: 'exit'; session_id: string; reason: WakeReason; requested: boolean } | LoopTrigger | null;

/**
 * Events that wake the brain on their own, also when the session waits already and its state's name stays the same
 * (a new question, a new blocked reason, a new turn result, a new permission request): the state change they cause
 * is the same reason, not a second one.
 */
const WAKING_SIGNALS = new Set(['session.permission_requested', 'session.blocked', 'session.asked_human', 'session.turn_ended']);
const WAKING_PROGRESS = new Set(['completed', 'blocked', 'needs_review']);

function sessionIdOf(e: JournalEvent): string | null {
  const fromData = (e.data as { session_id?: unknown } | null)?.session_id;
  if (typeof fromData === 'string') return fromData;
  return e.stream.startsWith('session-') ? e.stream.slice('session-'.length) : null;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const turnResult = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? clipTurnResult(v) : null);

/** A budget crossing as a wake reason says it: which budget, its limit, what is used. */
function budgetText(d: Record<string, unknown>): string {
  const unit = d.unit === 'usd' ? 'usd' : 'tokens';
  const n = (v: unknown) => (typeof v === 'number' ? v : 0);
  const scope = typeof d.scope === 'string' ? d.scope : 'session';
  return describeCrossing({ scope: scope as BudgetScope, unit, level: 'exceeded', used: n(d.used), limit: n(d.limit) });
}

/** A session's wake reason; one that waits in the state the reason names says since when (what it waits on began). */
function reasonOf(s: SessionView, trigger: string, message: string | null, state: string | null, request: Pick<WakeReason, 'request_id' | 'input'> = {}): WakeReason {
  const since = state === s.state && NEEDS_ATTENTION.has(state) ? new Date(s.attention_since).toISOString() : undefined;
  return wakeReason({ session_id: s.id, alias: s.alias, trigger, state, message, since, ...request });
}

/**
 * Maps a session event to what it means for supervision (docs/architecture/decisions.md#what-wakes-the-main-brain): a wake-up reason, a worker
 * exit (a check or a convergence close, decided by the caller), or nothing (heartbeats, request_context).
 * Only supervised (not excluded) sessions count. Events are published after the directory applied them, so
 * the session's state is the one the event brought it to (or newer).
 */
export function classifySessionEvent(e: JournalEvent, session: (id: string) => SessionView | undefined): TriggerOrExit {
  const id = sessionIdOf(e);
  const s = id ? session(id) : undefined;
  if (!s || s.excluded) return null;
  const d = (e.data ?? {}) as Record<string, unknown>;
  const reason = (trigger: string, message: string | null, state: string | null = s.state): WakeReason => reasonOf(s, trigger, message, state);
  switch (e.type) {
    // Entering a state that needs someone, for a reason no event below wakes for itself (a resumed runtime's restart).
    case 'session.state_changed': {
      const to = d.to;
      if (typeof to !== 'string' || !NEEDS_ATTENTION.has(to) || WAKING_SIGNALS.has(String(d.cause))) return null;
      return { kind: 'wake', reason: reason(to, null, to) };
    }
    // A turn's end wakes as 待处理 with its result, also a second one while 待处理 already; not one a next turn supersedes.
    case 'session.turn_ended':
      return d.superseded === true ? null : { kind: 'wake', reason: reason('pending_handling', turnResult(d.result), 'pending_handling') };
    case 'session.progress':
      return typeof d.status === 'string' && WAKING_PROGRESS.has(d.status)
        ? { kind: 'wake', reason: reason(`progress_${d.status}`, text(d.message)) }
        : null;
    // Wakes also when queued behind another request (no state change).
    case 'session.permission_requested': {
      const request = typeof d.request_id === 'string' ? { request_id: d.request_id, input: clipPermissionInput(d.input) } : {};
      return { kind: 'wake', reason: reasonOf(s, 'pending_authorization', text(d.tool), s.state, request) };
    }
    case 'session.blocked':
      return { kind: 'wake', reason: reason('notify_blocked', text(d.reason)) };
    case 'session.asked_human':
      return { kind: 'wake', reason: reason('ask_human', text(d.question)) };
    case 'session.exited':
      return { kind: 'exit', session_id: s.id, reason: reason('worker_exited', text(d.reason), 'exited'), requested: d.reason === 'stopped' };
    // The summary is Brainstem's words; the evidence the worker's text, which the round quotes as data.
    case 'session.loop_detected': {
      const summary = text(d.summary) ?? 'a loop';
      const evidence = typeof d.evidence === 'string' ? d.evidence : '';
      const pattern = String(d.pattern);
      const escalate_after = typeof d.escalate_after === 'number' ? d.escalate_after : 0;
      const loop = wakeReason({ session_id: s.id, alias: s.alias, trigger: `loop_${pattern}`, state: s.state, message: summary, evidence });
      return { kind: 'loop', reason: loop, pattern, signature: String(d.signature), summary, escalate_after };
    }
    // A collision newly predicted between two worktree sessions (or one and its moved base): Brainstem's words, and the
    // paths as git named them (the workers' file names), quoted as evidence.
    case 'worktree.conflict_predicted': {
      const other = typeof d.b === 'string' && d.b !== 'base' ? session(d.b) : undefined;
      const paths = Array.isArray(d.conflicting_paths) ? d.conflicting_paths.filter((p): p is string => typeof p === 'string') : [];
      const withWhom = d.b === 'base' ? 'its base branch as it is now' : other ? `${other.alias} (${other.id})` : String(d.b);
      const message = `merging it and ${withWhom} would conflict in ${paths.length} path${paths.length === 1 ? '' : 's'}`;
      return { kind: 'wake', reason: wakeReason({ session_id: s.id, alias: s.alias, trigger: 'conflict_predicted', state: s.state, message, evidence: paths.slice(0, 20).join('\n') }) };
    }
    // Budgets: Brainstem's own words, from the numbers the event carries. A model's limit wakes no one: the session
    // parks and resumes by itself, and the board of the next round says so (docs/guide/usage.md#usage-limits).
    case 'session.budget_warning':
    case 'session.budget_exceeded':
      return { kind: 'wake', reason: reason(e.type.slice('session.'.length), budgetText(d)) };
    default:
      return null;
  }
}
