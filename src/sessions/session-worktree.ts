import { MergeStep, MergeStrategy } from '../worktrees/merge-plan';
import { WorktreeErrorCode } from '../worktrees/worktree.errors';

/**
 * A session's git worktree (isolation `worktree`) as its stream records it, pure: the facts journaled on stream
 * `session-<id>` from its creation to its removal, and the fold that gives its state. The session machine takes every
 * one of them in every state (a merge usually comes after the worker exited), through foldWorktree.
 */

export type WorktreeOp = 'merge' | 'branch_only' | 'discard';
export const WORKTREE_OPS: readonly WorktreeOp[] = ['merge', 'branch_only', 'discard'];

/**
 * What was reused: nothing (a new branch and worktree), an existing branch (in a new worktree), or an existing worktree.
 * What Brainstem did not create it does not delete: a discard keeps a reused branch.
 */
export type WorktreeReuse = 'none' | 'branch' | 'worktree';

export interface WorktreeCreatedData {
  at: number;
  /** The worktree's folder. */
  path: string;
  branch: string;
  /** The base as asked (`main`, a tag, a sha), or the branch (else `HEAD`) the checkout had when none was. */
  base_ref: string;
  base_sha: string;
  /** The branch merges go into: base_ref when it is a branch; null when it is a tag or a commit. */
  base_branch: string | null;
  /** The checkout the session was started from: where merges land. */
  repo: string;
  reused: WorktreeReuse;
  /** The profile's setup command, run once before the worker starts. */
  setup: string | null;
  /** Untracked files copied in from the checkout. */
  copy: string[];
}

export type WorktreeRemoval = 'branch_only' | 'discarded' | 'cleanup';

export interface WorktreeEventData {
  'session.worktree_created': WorktreeCreatedData;
  /** The worktree's files checked out, the untracked ones copied in, the setup command run: ready, or why not. */
  'session.worktree_prepared': { at: number; ok: boolean; reason: string | null };
  'session.worktree_op_requested': { at: number; op_id: string; op: WorktreeOp; strategy: MergeStrategy | null; force: boolean };
  'session.worktree_merged': { at: number; op_id: string; strategy: MergeStrategy; step: MergeStep; into: string; commit: string; checkout_updated: boolean };
  'session.worktree_removed': { at: number; op_id: string | null; reason: WorktreeRemoval; branch_kept: boolean };
  'session.worktree_op_failed': { at: number; op_id: string; code: WorktreeErrorCode; message: string; details: Record<string, unknown> | null };
  /** Cleanup found uncommitted changes and left the worktree: they are never removed unasked. */
  'session.worktree_cleanup_blocked': { at: number; files: string[] };
  /** The folder was deleted by hand: reported, and git's record of it pruned. */
  'session.worktree_missing': { at: number };
}

export type WorktreeEventType = keyof WorktreeEventData;
export type WorktreeEvent = { [K in WorktreeEventType]: { type: K } & WorktreeEventData[K] }[WorktreeEventType];

export const WORKTREE_EVENT_TYPES: readonly WorktreeEventType[] = [
  'session.worktree_created',
  'session.worktree_prepared',
  'session.worktree_op_requested',
  'session.worktree_merged',
  'session.worktree_removed',
  'session.worktree_op_failed',
  'session.worktree_cleanup_blocked',
  'session.worktree_missing',
];

/** preparing: files not checked out yet; ready; failed: preparing it failed; missing: its folder was deleted by hand; removed. */
export type WorktreeState = 'preparing' | 'ready' | 'failed' | 'missing' | 'removed';

export interface PendingWorktreeOp {
  op_id: string;
  op: WorktreeOp;
  strategy: MergeStrategy | null;
  force: boolean;
  at: number;
}

export type WorktreeOpResult =
  | { op_id: string; op: WorktreeOp; ok: true; at: number; commit: string | null; into: string | null }
  | { op_id: string; op: WorktreeOp; ok: false; at: number; code: WorktreeErrorCode; message: string; details: Record<string, unknown> | null };

export interface SessionWorktree extends Omit<WorktreeCreatedData, 'at'> {
  state: WorktreeState;
  created_at: number;
  prepare_failure: string | null;
  pending_op: PendingWorktreeOp | null;
  last_op: WorktreeOpResult | null;
  merged: { strategy: MergeStrategy; into: string; commit: string; at: number } | null;
  removed: { reason: WorktreeRemoval; branch_kept: boolean; at: number } | null;
  cleanup_blocked: string[] | null;
}

export function isWorktreeEvent(e: { type: string }): e is WorktreeEvent {
  return (WORKTREE_EVENT_TYPES as readonly string[]).includes(e.type);
}

/** The worktree after one of its events. */
export function foldWorktree(w: SessionWorktree | null, e: WorktreeEvent): SessionWorktree | null {
  if (e.type === 'session.worktree_created') {
    const { at, type: _type, ...created } = e;
    return {
      ...created,
      state: created.reused === 'worktree' ? 'ready' : 'preparing',
      created_at: at,
      prepare_failure: null,
      pending_op: null,
      last_op: null,
      merged: null,
      removed: null,
      cleanup_blocked: null,
    };
  }
  if (w === null) return null;
  const ended = (op_id: string | null) => (w.pending_op?.op_id === op_id ? null : w.pending_op);
  switch (e.type) {
    case 'session.worktree_prepared':
      return { ...w, state: e.ok ? 'ready' : 'failed', prepare_failure: e.reason };
    case 'session.worktree_op_requested':
      return { ...w, pending_op: { op_id: e.op_id, op: e.op, strategy: e.strategy, force: e.force, at: e.at } };
    case 'session.worktree_merged':
      return {
        ...w,
        pending_op: ended(e.op_id),
        last_op: { op_id: e.op_id, op: 'merge', ok: true, at: e.at, commit: e.commit, into: e.into },
        merged: { strategy: e.strategy, into: e.into, commit: e.commit, at: e.at },
      };
    case 'session.worktree_removed': {
      const op = w.pending_op?.op_id === e.op_id ? w.pending_op : null;
      const last_op: WorktreeOpResult | null = op ? { op_id: op.op_id, op: op.op, ok: true, at: e.at, commit: null, into: null } : w.last_op;
      return { ...w, state: 'removed', pending_op: ended(e.op_id), last_op, removed: { reason: e.reason, branch_kept: e.branch_kept, at: e.at }, cleanup_blocked: null };
    }
    case 'session.worktree_op_failed': {
      const op: WorktreeOp = w.pending_op?.op_id === e.op_id ? w.pending_op.op : 'merge';
      return { ...w, pending_op: ended(e.op_id), last_op: { op_id: e.op_id, op, ok: false, at: e.at, code: e.code, message: e.message, details: e.details } };
    }
    case 'session.worktree_cleanup_blocked':
      return { ...w, cleanup_blocked: e.files };
    case 'session.worktree_missing':
      return { ...w, state: 'missing' };
  }
}
