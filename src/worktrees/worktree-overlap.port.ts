import { MergePrediction } from './worktree-overlap';

/** A worktree session the overlaps look at: where its worktree is, and what it branched from. */
export interface OverlapSession {
  session_id: string;
  alias: string;
  branch: string;
  /** The worktree's folder. */
  path: string;
  /** The checkout the session was started from (its repository's main checkout). */
  repo: string;
  base_branch: string | null;
  base_sha: string;
  created_at: number;
}

/** A session's work as it is now, committed or not, captured without touching its worktree or its index. */
export interface WorktreeSnapshot {
  /** A commit object on the worktree's HEAD holding its files as they are; no ref names it. */
  commit: string;
  tree: string;
  /** Where the session's branch left its base: the merge base of its HEAD and its base branch (else its base commit). */
  merge_base: string;
  /** The base branch's tip now, or null without one (a tag, a commit) or when it is gone. */
  base_tip: string | null;
  /** Paths changed from the merge base to the snapshot, sorted; a rename is its two paths. */
  files: string[];
}

/** Git as the overlaps use it (the adapter is worktree-overlap.git.ts). */
export interface OverlapGit {
  snapshot(session: Pick<OverlapSession, 'path' | 'base_branch' | 'base_sha'>): Promise<WorktreeSnapshot>;
  /** Whether merging the two commits (in the repository `repo`) would conflict, and where: nothing is written but objects. */
  predictMerge(repo: string, a: string, b: string): Promise<MergePrediction>;
  /** Whether the folder is there (a worktree deleted by hand is not looked at). */
  exists(path: string): Promise<boolean>;
}
