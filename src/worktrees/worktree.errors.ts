declare module '../common/domain-error' {
  interface DomainErrorStatus {
    not_a_git_repository: 400;
    unknown_ref: 400;
    invalid_ref: 400;
    path_outside_tree: 400;
    worktrees_dir_in_repository: 400;
    no_worktree_sessions: 404;
    no_worktree: 409;
    worktree_not_ready: 409;
    worktree_busy: 409;
    worktree_removed: 409;
    worktree_missing: 409;
    worktree_dirty: 409;
    session_live: 409;
    merge_conflict: 409;
    main_checkout_dirty: 409;
    not_fast_forward: 409;
    nothing_to_merge: 409;
    no_base_branch: 409;
    base_checked_out_elsewhere: 409;
    branch_checked_out: 409;
    worktree_op_interrupted: 409;
    git_failed: 500;
    git_unavailable: 503;
    worktree_op_timeout: 504;
  }
}

/**
 * Worktree isolation's error codes and their statuses. 400: a create whose isolation cannot be set up from what it
 * names (not a git repository, a ref that does not exist or is malformed, a path leading out of the tree, a worktrees
 * folder inside the repository). 404: no live worktree session of a repository on this node (its overlaps). 409: the
 * worktree's state or the repository's refuses the operation (none, not ready, another operation running, removed,
 * deleted by hand, uncommitted changes, the session still live, a conflict, the main checkout's changes in the way, no
 * fast-forward, nothing to merge, no base branch, the base or the branch checked out elsewhere, an operation a restart
 * cut short). 500: git failed unexpectedly (its message is given). 503: no usable git. 504: the owner node did not
 * perform an operation in time.
 */
export const WORKTREE_ERRORS = {
  not_a_git_repository: 400,
  unknown_ref: 400,
  invalid_ref: 400,
  path_outside_tree: 400,
  worktrees_dir_in_repository: 400,
  no_worktree_sessions: 404,
  no_worktree: 409,
  worktree_not_ready: 409,
  worktree_busy: 409,
  worktree_removed: 409,
  worktree_missing: 409,
  worktree_dirty: 409,
  session_live: 409,
  merge_conflict: 409,
  main_checkout_dirty: 409,
  not_fast_forward: 409,
  nothing_to_merge: 409,
  no_base_branch: 409,
  base_checked_out_elsewhere: 409,
  branch_checked_out: 409,
  worktree_op_interrupted: 409,
  git_failed: 500,
  git_unavailable: 503,
  worktree_op_timeout: 504,
} as const;

export type WorktreeErrorCode = keyof typeof WORKTREE_ERRORS;

/** Why a worktree operation or a create with isolation is refused: a code of the table above, and what to do instead. */
export interface WorktreeRefusal {
  code: WorktreeErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export function worktreeRefusal(code: WorktreeErrorCode, message: string, details?: Record<string, unknown>): WorktreeRefusal {
  return details === undefined ? { code, message } : { code, message, details };
}
