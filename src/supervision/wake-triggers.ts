import { JournalEvent } from '../journal/journal.port';
import { clipTurnResult } from './round-prompt';
import { WakeReason, wakeReason } from './supervision.machine';
import { SessionView } from './session-directory.port';

export type TriggerOrExit = { kind: 'wake'; reason: WakeReason } | { kind: 'exit'; session_id: string; reason: WakeReason } | null;

const PENDING = new Set(['pending_handling', 'pending_authorization', 'pending_decision']);
const WAKING_PROGRESS = new Set(['completed', 'blocked', 'needs_review']);

function sessionIdOf(e: JournalEvent): string | null {
  const fromData = (e.data as { session_id?: unknown } | null)?.session_id;
  if (typeof fromData === 'string') return fromData;
  return e.stream.startsWith('session-') ? e.stream.slice('session-'.length) : null;
}

const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const turnResult = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? clipTurnResult(v) : null);

/**
 * Maps a session event to what it means for supervision (seed: Events table): a wake-up reason, a worker
 * exit (a check or a convergence close, decided by the caller), or nothing (heartbeats, request_context).
 * Only supervised (not excluded) sessions count.
 */
export function classifySessionEvent(e: JournalEvent, session: (id: string) => SessionView | undefined): TriggerOrExit {
  const id = sessionIdOf(e);
  const s = id ? session(id) : undefined;
  if (!s || s.excluded) return null;
  const d = (e.data ?? {}) as Record<string, unknown>;
  const reason = (trigger: string, message: string | null, state = s.state): WakeReason =>
    wakeReason({ session_id: s.id, alias: s.alias, trigger, state, message });
  switch (e.type) {
    case 'session.state_changed': {
      const to = d.to;
      return typeof to === 'string' && PENDING.has(to) ? { kind: 'wake', reason: reason(to, text(d.message), to) } : null;
    }
    // The turn's end moves the session to 待处理 (unless a next turn supersedes it, or it is there already): the
    // state change appended with it restates this reason, so the wake-up carries the turn's result.
    case 'session.turn_ended':
      return d.superseded !== true && s.state !== 'pending_handling'
        ? { kind: 'wake', reason: reason('pending_handling', turnResult(d.result), 'pending_handling') }
        : null;
    case 'session.progress':
      return typeof d.status === 'string' && WAKING_PROGRESS.has(d.status)
        ? { kind: 'wake', reason: reason(`progress_${d.status}`, text(d.message)) }
        : null;
    // Wakes also when queued behind another request (no state change); appended with the state change, it is
    // the same reason (same trigger), restated with the state entered.
    case 'session.permission_requested':
      return { kind: 'wake', reason: reason('pending_authorization', text(d.tool)) };
    case 'session.blocked':
      return { kind: 'wake', reason: reason('notify_blocked', text(d.reason)) };
    case 'session.asked_human':
      return { kind: 'wake', reason: reason('ask_human', text(d.question)) };
    case 'session.exited':
      return { kind: 'exit', session_id: s.id, reason: reason('worker_exited', text(d.reason), 'exited') };
    default:
      return null;
  }
}
