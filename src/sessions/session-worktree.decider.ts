import { Refusal } from '../journal/command-handler';
import { MergeStep, MergeStrategy } from '../worktrees/merge-plan';
import { WorktreeRefusal } from '../worktrees/worktree.errors';
import { SessionEvent } from './session.events';
import { SessionSnapshot, accepts, stateOf } from './session.machine';
import { WorktreeOp } from './session-worktree';

/**
 * The rules on a session's worktree, pure, as session.decider.ts's decide() hands them over: its preparation, the
 * operations a user or the brain asks for (merge, branch-only, discard), what the owner node reports they gave, and
 * cleanup. An operation is journaled as requested, then performed by the node that owns the session (its worktree is on
 * that node's disk), which journals the outcome.
 */

/** What the owner's git gave for an operation. */
export type WorktreeOpOutcome =
  | { ok: true; merged: { strategy: MergeStrategy; step: MergeStep; into: string; commit: string; checkout_updated: boolean } }
  | { ok: true; removed: { branch_kept: boolean } }
  | { ok: false; refusal: WorktreeRefusal };

export type WorktreeCommand =
  /** The worktree's files, copies and setup command done (`ok`), or why not: then the session fails. */
  | { type: 'record_worktree_prepared'; at: number; ok: boolean; reason: string | null }
  | { type: 'request_worktree_op'; at: number; op_id: string; op: WorktreeOp; strategy: MergeStrategy | null; force: boolean }
  | { type: 'record_worktree_op'; at: number; op_id: string; outcome: WorktreeOpOutcome }
  | { type: 'record_worktree_cleanup'; at: number; outcome: { removed: true; branch_kept: boolean } | { blocked: string[] } }
  | { type: 'record_worktree_missing'; at: number };

const WORKTREE_COMMANDS: ReadonlySet<string> = new Set<WorktreeCommand['type']>([
  'record_worktree_prepared',
  'request_worktree_op',
  'record_worktree_op',
  'record_worktree_cleanup',
  'record_worktree_missing',
]);

export function isWorktreeCommand(c: { type: string }): c is WorktreeCommand {
  return WORKTREE_COMMANDS.has(c.type);
}

type Decision = { events: SessionEvent[] } | { error: Refusal };

const refuse = (code: Refusal['code'], message: string, details?: Record<string, unknown>): Decision => ({ error: details ? { code, message, details } : { code, message } });

/** Facts the state takes are journaled; one it does not (an exit after the exit) is left out. */
const facts = (state: SessionSnapshot, ...events: SessionEvent[]): Decision => ({ events: events.filter((e) => accepts(state, e)) });

export function decideWorktree(command: WorktreeCommand, state: SessionSnapshot | null): Decision {
  if (state === null) return refuse('not_found', `no coding session to take ${command.type}`);
  const { at } = command;
  const c = state.context;
  const w = c.worktree;
  switch (command.type) {
    case 'record_worktree_prepared':
      if (!w || w.state !== 'preparing') return { events: [] };
      if (command.ok) return facts(state, { type: 'session.worktree_prepared', at, ok: true, reason: null });
      return facts(state, { type: 'session.worktree_prepared', at, ok: false, reason: command.reason }, { type: 'session.exited', at, code: null, signal: null, reason: 'setup_failed' });
    case 'request_worktree_op': {
      if (!w) return refuse('no_worktree', `session ${c.alias} has no worktree: it was started without isolation "worktree"`);
      if (w.state === 'removed') return refuse('worktree_removed', `the worktree of ${c.alias} was removed (${w.removed?.reason ?? 'removed'})`, { branch: w.branch });
      if (w.pending_op) return refuse('worktree_busy', `a ${w.pending_op.op} of ${c.alias}'s worktree is under way (${w.pending_op.op_id}): wait for it`, { op_id: w.pending_op.op_id });
      if (w.state === 'preparing') return refuse('worktree_not_ready', `the worktree of ${c.alias} is still being prepared`);
      if (command.op === 'merge' && w.base_branch === null) {
        return refuse('no_base_branch', `${c.alias} was based on ${w.base_ref}, which is not a branch: keep its branch ${w.branch} (branch-only) and merge it yourself`, { base_ref: w.base_ref });
      }
      if (command.op !== 'merge' && stateOf(state) !== 'exited') {
        return refuse('session_live', `session ${c.alias} is ${stateOf(state)}: its worker still works in the worktree; stop it first`, { state: stateOf(state) });
      }
      return facts(state, { type: 'session.worktree_op_requested', at, op_id: command.op_id, op: command.op, strategy: command.strategy, force: command.force });
    }
    case 'record_worktree_op': {
      const op = w?.pending_op;
      if (!w || !op || op.op_id !== command.op_id) return { events: [] };
      const o = command.outcome;
      if (!o.ok) {
        return facts(state, { type: 'session.worktree_op_failed', at, op_id: op.op_id, code: o.refusal.code, message: o.refusal.message, details: o.refusal.details ?? null });
      }
      if ('merged' in o) return facts(state, { type: 'session.worktree_merged', at, op_id: op.op_id, ...o.merged });
      return facts(state, { type: 'session.worktree_removed', at, op_id: op.op_id, reason: op.op === 'discard' ? 'discarded' : 'branch_only', branch_kept: o.removed.branch_kept });
    }
    case 'record_worktree_cleanup': {
      if (!w || w.state === 'removed') return { events: [] };
      const o = command.outcome;
      if ('removed' in o) return facts(state, { type: 'session.worktree_removed', at, op_id: null, reason: 'cleanup', branch_kept: o.branch_kept });
      const same = w.cleanup_blocked !== null && w.cleanup_blocked.join('\0') === o.blocked.join('\0');
      return same ? { events: [] } : facts(state, { type: 'session.worktree_cleanup_blocked', at, files: o.blocked });
    }
    case 'record_worktree_missing':
      return w && w.state !== 'missing' && w.state !== 'removed' ? facts(state, { type: 'session.worktree_missing', at }) : { events: [] };
  }
}
