import { StatusEntry, WorktreeEntry } from './git-parse';
import { WorktreeRefusal, worktreeRefusal } from './worktree.errors';

/**
 * How a session's branch is brought back into its base branch, pure: which step a strategy takes given how the two
 * relate, whether the main checkout's own changes are in the way, and where the base branch is updated. The git
 * commands that carry the plan out are the adapter's (worktree-git.ts).
 */

export type MergeStrategy = 'ff' | 'merge' | 'rebase';
export const MERGE_STRATEGIES: readonly MergeStrategy[] = ['ff', 'merge', 'rebase'];

/** `up_to_date` only in journals of versions that recorded a merge with nothing to merge as merged. */
export type MergeStep = 'up_to_date' | 'fast_forward' | 'merge_commit' | 'rebase';

/** A merge that would move the base: what mergeStep answers when it is not refused. */
export type MovingStep = Exclude<MergeStep, 'up_to_date'>;

/** A branch its base holds already (ahead 0): the merge is refused, naming both, so that no one is told it merged. */
export function nothingToMerge(names: { branch: string; base: string }): WorktreeRefusal {
  return worktreeRefusal('nothing_to_merge', `${names.branch} has no commit that ${names.base} does not have (ahead 0): nothing to merge, nothing was changed`, {
    branch: names.branch,
    base: names.base,
    ahead: 0,
  });
}

/**
 * The step: none when the base already holds the branch (ahead 0: nothing to merge, refused so that no one is told a
 * merge happened); `ff` only fast-forwards; `merge` always records a merge commit (the branch's history stays visible
 * as one); `rebase` replays the branch's commits on the base, which is a fast-forward when the branch is on top of it already.
 */
export function mergeStep(strategy: MergeStrategy, relation: { headInBase: boolean; baseInHead: boolean }, names: { branch: string; base: string }): MovingStep | { refusal: WorktreeRefusal } {
  if (relation.headInBase) return { refusal: nothingToMerge(names) };
  switch (strategy) {
    case 'ff':
      return relation.baseInHead
        ? 'fast_forward'
        : {
            refusal: worktreeRefusal(
              'not_fast_forward',
              `${names.base} has commits ${names.branch} does not have, so it cannot be fast-forwarded: merge with strategy merge or rebase`,
              { branch: names.branch, base: names.base },
            ),
          };
    case 'merge':
      return 'merge_commit';
    case 'rebase':
      return relation.baseInHead ? 'fast_forward' : 'rebase';
  }
}

/**
 * The main checkout's uncommitted changes (untracked files included) that the merge would touch: a path it changes
 * that is dirty there, by either name of a rename. Changes elsewhere are left alone and do not stop the merge.
 */
export function dirtyOverlap(dirty: readonly StatusEntry[], touched: readonly string[]): string[] {
  const changed = new Set(touched);
  const hit = new Set<string>();
  for (const d of dirty) {
    for (const p of [d.path, d.from]) if (p !== null && changed.has(p)) hit.add(p);
    // A dirty folder (an untracked directory is listed by name when not expanded) holds whatever the merge puts under it.
    if (d.path.endsWith('/')) for (const t of changed) if (t.startsWith(d.path)) hit.add(t);
  }
  return [...hit].sort();
}

export type BaseTarget = { kind: 'checkout'; path: string } | { kind: 'ref' };

/**
 * Where the base branch moves: in the main checkout (the checkout the session was started from) when it is checked
 * out there, its files following; as the ref alone when no worktree has it; refused when another worktree has it
 * checked out, since moving it there would leave that worktree's files behind its branch.
 */
export function baseTarget(worktrees: readonly WorktreeEntry[], base: string, checkout: string): BaseTarget | { refusal: WorktreeRefusal } {
  const holder = worktrees.find((w) => w.branch === base);
  if (!holder) return { kind: 'ref' };
  if (holder.path === checkout) return { kind: 'checkout', path: holder.path };
  return {
    refusal: worktreeRefusal('base_checked_out_elsewhere', `${base} is checked out in ${holder.path}, not the main checkout: merge there, or check out another branch in it`, {
      base,
      path: holder.path,
    }),
  };
}

/** The merge commit's message: the branch and the session, never a title (which the branch holds only as a slug). */
export function mergeMessage(branch: string, base: string, alias: string): string {
  return `Merge branch '${branch}' into ${base}\n\nBrainstem session ${alias}.`;
}
