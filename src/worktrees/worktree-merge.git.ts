import { join } from 'node:path';
import { GitCli } from './git-cli';
import { parseMergeTree } from './git-parse';
import { MovingStep, baseTarget, dirtyOverlap, mergeMessage, mergeStep } from './merge-plan';
import { MergeCheck, MergeOutcome, MergeRequest, WorktreeGit } from './worktree-git.port';
import { WorktreeRefusal, worktreeRefusal } from './worktree.errors';

/** Who commits a merge commit or a rebased commit when the repository names no one (user.name, user.email). */
const FALLBACK_IDENTITY = { name: 'Brainstem', email: 'brainstem@localhost' };

const refused = (refusal: WorktreeRefusal): MergeOutcome => ({ ok: false, refusal });

/**
 * What a merge is refused for before anything is tried, from the refs alone: the worktree's uncommitted changes, a base
 * or a branch gone, nothing to merge (ahead 0), no fast-forward for `ff`. Else the step and the two tips it starts from.
 */
async function mergePlan(git: GitCli, worktrees: Pick<WorktreeGit, 'status'>, r: MergeCheck): Promise<{ refusal: WorktreeRefusal } | { step: MovingStep; baseTip: string; head: string }> {
  const { repo, branch, base_branch: base } = r;
  if (r.folder) {
    const dirty = await worktrees.status(r.path);
    if (dirty.length > 0) {
      const files = dirty.map((d) => d.path);
      return { refusal: worktreeRefusal('worktree_dirty', `the worktree ${r.path} has uncommitted changes that a merge would leave behind (${files.slice(0, 20).join(', ')}): commit them first`, { files }) };
    }
  }
  const rev = (ref: string) => revision(git, repo, ref);
  const baseTip = await rev(`refs/heads/${base}`);
  if (baseTip === null) return { refusal: worktreeRefusal('no_base_branch', `the base branch ${base} no longer exists: use branch-only to keep the work on ${branch}`, { base }) };
  const head = await rev(`refs/heads/${branch}`);
  if (head === null) return { refusal: worktreeRefusal('worktree_missing', `the branch ${branch} no longer exists`, { branch }) };
  const ancestor = async (a: string, b: string) => (await git.run(['merge-base', '--is-ancestor', a, b], { cwd: repo, ok: [1] })).code === 0;
  const step = mergeStep(r.strategy, { headInBase: await ancestor(head, baseTip), baseInHead: await ancestor(baseTip, head) }, { branch, base });
  return typeof step === 'string' ? { step, baseTip, head } : step;
}

/** Why a merge would be refused before anything is tried (mergePlan), or null: asked before a merge is requested. */
export async function mergeRefusal(git: GitCli, worktrees: Pick<WorktreeGit, 'status'>, r: MergeCheck): Promise<WorktreeRefusal | null> {
  const plan = await mergePlan(git, worktrees, r);
  return 'refusal' in plan ? plan.refusal : null;
}

async function revision(git: GitCli, repo: string, ref: string): Promise<string | null> {
  const out = await git.spawn(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: repo });
  return out.code === 0 ? out.stdout.trim() : null;
}

/**
 * Brings a session's branch into its base branch (merge-plan.ts decides each step). Nothing is ever left half-merged:
 * the merge is tried without any checkout (`git merge-tree --write-tree`) and a rebase in a temporary worktree, so a
 * conflict leaves no MERGE_HEAD, no rebase in progress and every checkout as it was; the base then moves by a
 * fast-forward, which git either makes whole or refuses before touching a file.
 */
export async function mergeBranch(git: GitCli, worktrees: Pick<WorktreeGit, 'status' | 'worktrees'>, r: MergeRequest): Promise<MergeOutcome> {
  const { repo, branch, base_branch: base } = r;
  const plan = await mergePlan(git, worktrees, r);
  if ('refusal' in plan) return refused(plan.refusal);
  const { step, baseTip, head } = plan;

  const identity = await identityEnv(git, repo);
  let target = head;
  if (step === 'merge_commit' || step === 'rebase') {
    const merged = await git.run(['merge-tree', '--write-tree', '-z', '--name-only', baseTip, head], { cwd: repo, ok: [1] });
    const result = parseMergeTree(merged.stdout, merged.code);
    if (!result.clean) return refused(conflict(branch, base, result.conflicts.map((c) => c.path), result.conflicts));
    if (step === 'merge_commit') {
      const message = mergeMessage(branch, base, r.alias);
      target = (await git.run(['commit-tree', result.tree, '-p', baseTip, '-p', head, '-m', message], { cwd: repo, env: identity })).stdout.trim();
    } else {
      const rebased = await rebaseInTemporaryWorktree(git, r, head, baseTip, identity);
      if ('conflicts' in rebased) return refused(conflict(branch, base, rebased.conflicts));
      target = rebased.commit;
    }
  }

  const where = baseTarget(await worktrees.worktrees(repo), base, repo);
  if ('refusal' in where) return refused(where.refusal);
  const touched = (await git.run(['diff', '--name-only', '-z', '--no-renames', baseTip, target], { cwd: repo })).stdout.split('\0').filter(Boolean);
  if (where.kind === 'ref') {
    // Compare-and-swap: the base moves only if it is still where the merge was decided.
    const moved = await git.spawn(['update-ref', '-m', `brainstem: ${r.strategy} ${branch}`, `refs/heads/${base}`, target, baseTip], { cwd: repo });
    if (moved.code !== 0) return refused(worktreeRefusal('not_fast_forward', `${base} moved while ${branch} was merged: try again`, { base }));
    return { ok: true, step, commit: target, into: base, checkout_updated: false };
  }
  const inTheWay = dirtyOverlap(await worktrees.status(where.path), touched);
  if (inTheWay.length > 0) {
    return refused(
      worktreeRefusal('main_checkout_dirty', `the main checkout ${where.path} has uncommitted changes to files the merge would change (${inTheWay.slice(0, 20).join(', ')}): commit or stash them first`, {
        files: inTheWay,
      }),
    );
  }
  if ((await revision(git, repo, 'HEAD')) !== baseTip) return refused(worktreeRefusal('not_fast_forward', `${base} moved in ${where.path} while ${branch} was merged: try again`, { base }));
  const ff = await git.spawn(['merge', '--ff-only', '--no-autostash', '--quiet', target], { cwd: where.path, env: identity });
  if (ff.code !== 0) {
    return refused(worktreeRefusal('main_checkout_dirty', `git refused to update ${where.path}, which is left as it was: ${ff.stderr.trim().split('\n').slice(0, 6).join(' ')}`, { files: touched }));
  }
  return { ok: true, step, commit: target, into: base, checkout_updated: true };
}

function conflict(branch: string, base: string, files: string[], conflicts?: unknown): WorktreeRefusal {
  return worktreeRefusal('merge_conflict', `${branch} conflicts with ${base} in ${files.length} file(s): ${files.slice(0, 20).join(', ')}; nothing was merged`, {
    files,
    ...(conflicts ? { conflicts } : {}),
  });
}

/** The repository's committer if it names one, else Brainstem (git refuses to commit with no identity). */
async function identityEnv(git: GitCli, repo: string): Promise<Record<string, string>> {
  const known = await git.spawn(['var', 'GIT_COMMITTER_IDENT'], { cwd: repo });
  if (known.code === 0) return {};
  const { name, email } = FALLBACK_IDENTITY;
  return { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
}

/**
 * The branch's commits replayed on the base in a worktree of their own (detached, in the repository's folder), which is
 * removed whatever happens: a conflict aborts the rebase there, and no other checkout ever sees it.
 */
async function rebaseInTemporaryWorktree(git: GitCli, r: MergeRequest, head: string, onto: string, identity: Record<string, string>): Promise<{ commit: string } | { conflicts: string[] }> {
  const tmp = join(r.scratch, `.rebase-${r.op_id}`);
  await git.run(['worktree', 'add', '--detach', '--quiet', '--end-of-options', tmp, head], { cwd: r.repo });
  try {
    const rebased = await git.run(['rebase', '--no-autostash', '--no-verify', '--quiet', onto], { cwd: tmp, env: identity, ok: [1] });
    if (rebased.code === 0) return { commit: (await git.run(['rev-parse', 'HEAD'], { cwd: tmp })).stdout.trim() };
    const files = (await git.run(['diff', '--name-only', '-z', '--diff-filter=U'], { cwd: tmp })).stdout.split('\0').filter(Boolean);
    await git.spawn(['rebase', '--abort'], { cwd: tmp });
    return { conflicts: files };
  } finally {
    await git.spawn(['worktree', 'remove', '--force', '--force', '--end-of-options', tmp], { cwd: r.repo });
    await git.spawn(['worktree', 'prune'], { cwd: r.repo });
  }
}
