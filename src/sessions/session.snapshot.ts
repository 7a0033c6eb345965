import { emptyTotals } from '../usage/usage.model';
import { SessionState } from './session.events';
import { copyContext } from './session.context';
import { SessionContext, SessionSnapshot, sessionMachine, stateOf } from './session.machine';

/** A session's state as journal snapshots keep it, and back; fields added since read as their defaults. */

/** The persisted form of a snapshot (journal snapshots): plain JSON. */
export interface StoredSession {
  value: SessionState;
  context: SessionContext;
}

/** `env` holds the values kept outside the journal; snapshots written before that carry their own. */
export function restoreSession(stored: StoredSession, env: Record<string, string> | null = null): SessionSnapshot {
  // Snapshots written before permissions queued have no queue.
  const queued_permissions = stored.context.queued_permissions ?? [];
  // Nor a turn's result, nor a hold, nor a worktree.
  const last_result = stored.context.last_result ?? null;
  const held = stored.context.held ?? null;
  const worktree = stored.context.worktree ?? null;
  // Nor when what it waits on last changed: from the state's start, as it was then.
  const waiting_since = stored.context.waiting_since ?? stored.context.state_since;
  // Nor loops, usage, a budget or a rate limit.
  const loop = stored.context.loop ?? null;
  const loop_cooldowns = stored.context.loop_cooldowns ?? {};
  const usage = stored.context.usage ?? emptyTotals();
  const budget = stored.context.budget ?? null;
  const rate_limit = stored.context.rate_limit ?? null;
  return sessionMachine.resolveState({
    value: stored.value,
    context: copyContext({ ...stored.context, queued_permissions, last_result, held, worktree, waiting_since, loop, loop_cooldowns, usage, budget, rate_limit, env: env ?? stored.context.env }),
  });
}

/** Snapshots are journal storage too, so they leave out the env values, as `session.created` does. */
export function storeSession(snapshot: SessionSnapshot): StoredSession {
  return { value: stateOf(snapshot), context: { ...snapshot.context, env: {} } };
}
