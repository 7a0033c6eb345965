import { DiffCursor, WorktreeDiff } from './diff-page';
import { StatusEntry, WorktreeEntry } from './git-parse';
import { MergeStrategy, MovingStep } from './merge-plan';
import { WorktreeRefusal } from './worktree.errors';

/** The checkout a directory is in: its top folder, and what its HEAD is. */
export interface Checkout {
  toplevel: string;
  /** The branch checked out there; null when HEAD is detached. */
  head_branch: string | null;
  head_sha: string | null;
}

/** Where a session's branch lives: the checkout it came from, its branch, and its worktree's folder. */
export interface WorktreeRef {
  /** The checkout the session was started from (`git -C` of every command on the repository). */
  repo: string;
  branch: string;
  path: string;
}

/** What a merge is judged on before it is tried: the refs, the strategy, and whether the worktree's folder is there. */
export interface MergeCheck extends WorktreeRef {
  base_branch: string;
  strategy: MergeStrategy;
  /** Whether the worktree's folder is still there (its uncommitted changes are checked then). */
  folder: boolean;
}

export interface MergeRequest extends MergeCheck {
  /** The session's alias, for the merge commit's message. */
  alias: string;
  /** Names the temporary worktree a rebase is replayed in. */
  op_id: string;
  /** Where that temporary worktree goes: the repository's folder under the worktrees root. */
  scratch: string;
}

export type MergeOutcome = { ok: true; step: MovingStep; commit: string; into: string; checkout_updated: boolean } | { ok: false; refusal: WorktreeRefusal };

export interface RemoveRequest extends WorktreeRef {
  /** Also delete the branch: `merged` only if its commits are in another branch (git branch -d), `force` whatever it holds. */
  branch_delete: 'keep' | 'merged' | 'force';
  /** Remove the folder even with uncommitted changes (the user confirmed). */
  force: boolean;
}

export type RemoveOutcome = { ok: true; branch_kept: boolean } | { ok: false; refusal: WorktreeRefusal };

export interface DiffRequest {
  path: string;
  branch: string;
  base_ref: string;
  base_branch: string | null;
  base_sha: string;
  /** Only this file's patch (a path relative to the tree, checked by the caller). */
  file: string | null;
  cursor: DiffCursor;
  limit: number;
}

/**
 * Git as worktree isolation uses it: the facts a create needs (which checkout a folder is in, whether a ref exists),
 * the worktree's life (added, checked out, copied into, removed), its diff, and a merge back. The adapter runs the git
 * CLI (worktree-git.ts); the rules it follows are the pure modules' (worktree-names, merge-plan, diff-page).
 */
export interface WorktreeGit {
  /** Reads git's version (at start): why it cannot be used, or null. */
  check(): Promise<string | null>;
  /** Why git cannot be used (missing, too old), or null; as found at start. */
  problem(): string | null;
  /** The version found at start (`git version 2.39.5`), or null. */
  version(): string | null;
  checkoutOf(dir: string): Promise<Checkout | null>;
  /** The top folder of the checkout a directory is in (one git call, for every create), or null outside git. */
  workTreeOf(dir: string): Promise<string | null>;
  /** The commit a ref (a branch, tag, sha, HEAD~1) names, or null when it names none. */
  resolveCommit(repo: string, ref: string): Promise<string | null>;
  /** Null when `name` is a valid branch name as written; else why not. */
  branchNameProblem(repo: string, name: string): Promise<string | null>;
  branchExists(repo: string, name: string): Promise<boolean>;
  worktrees(repo: string): Promise<WorktreeEntry[]>;
  /**
   * Adds a worktree, without checking its files out (prepare() does, off the creation path): on a new branch
   * `brainstem/<alias>-<slug>` from `base_sha` (numbered when the name is taken), or on an existing branch.
   */
  addWorktree(request: { repo: string; folder: string; alias: string; title: string } & ({ base_sha: string } | { branch: string })): Promise<{ path: string; branch: string }>;
  /** Checks the worktree's files out, then copies in the untracked files named (relative to the checkout) that exist there. */
  prepare(worktree: { repo: string; path: string; copy: readonly string[] }): Promise<{ copied: string[]; missing: string[] }>;
  /** Uncommitted changes in a folder (untracked files included). */
  status(dir: string): Promise<StatusEntry[]>;
  exists(path: string): Promise<boolean>;
  remove(request: RemoveRequest): Promise<RemoveOutcome>;
  prune(repo: string): Promise<void>;
  merge(request: MergeRequest): Promise<MergeOutcome>;
  /** Why that merge would be refused before anything is tried (nothing to merge, no fast-forward, …), or null. */
  mergeRefusal(request: MergeCheck): Promise<WorktreeRefusal | null>;
  diff(request: DiffRequest): Promise<WorktreeDiff>;
}

export const WORKTREE_GIT = Symbol('WorktreeGit');
