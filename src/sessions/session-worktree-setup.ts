import { realpath } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { DomainError } from '../common/domain-error';
import { Limiter } from '../common/limiter';
import { WorktreeGit } from '../worktrees/worktree-git.port';
import { isInside, repositoryFolder } from '../worktrees/worktree-names';
import { WorktreeRefusal, worktreeRefusal } from '../worktrees/worktree.errors';
import { SessionActor } from './session.actor';
import { WorktreeFact } from './session.decider';
import { ProcessRunner } from './runtimes/process-runner';

/** What a create asks of isolation (the request's fields and its profile's worktree settings). */
export interface IsolationAsk {
  isolation: 'none' | 'worktree';
  /** The request's cwd when it is a directory (else the decider refuses the cwd first). */
  dir: string | null;
  base_ref?: string;
  branch?: string;
  worktree?: string;
  title: string;
  setup: string | null;
  copy: readonly string[];
}

/** A worktree to add for a create, its facts judged: added in the creation's turn, once the alias is known. */
export interface WorktreeRequest {
  repo: string;
  subdir: string;
  folder: string;
  base_ref: string;
  base_sha: string;
  base_branch: string | null;
  reuse: { worktree: string; branch: string } | { branch: string } | null;
  title: string;
  setup: string | null;
  copy: string[];
}

export interface IsolationPlan {
  /** Without isolation: the checkout the cwd is in (null outside git, or when git is unusable). */
  work_tree: string | null;
  /** With isolation: the worktree to add, or why none can be; null without isolation or without a directory. */
  request: WorktreeRequest | { refusal: WorktreeRefusal } | null;
}

const refused = (code: WorktreeRefusal['code'], message: string, details?: Record<string, unknown>): IsolationPlan => ({ work_tree: null, request: { refusal: worktreeRefusal(code, message, details) } });

/**
 * Worktree isolation at a session's creation: the facts the session decider takes (is the cwd in a git checkout, does
 * the base exist, what is reused), the worktree added in the creation's turn (and taken back when the create is
 * refused), and its preparation before the worker starts: files checked out, untracked files copied in, the profile's
 * setup command run with the worker's environment, its output in the session's log.
 */
export class SessionWorktreeSetup {
  /**
   * Checkouts at once: each writes the whole tree, so many at once on few cores only thrash (20 at once on 2 cores took
   * longer in all than one after another, and every session waited for the last: npm run bench:worktrees).
   */
  private readonly checkouts: Limiter;

  constructor(
    private readonly git: WorktreeGit,
    /** Where worktrees go (BRAINSTEM_WORKTREES_DIR). */
    private readonly root: string,
    private readonly runner: ProcessRunner,
    checkoutsAtOnce: number,
  ) {
    this.checkouts = new Limiter(Math.max(1, checkoutsAtOnce));
  }

  async plan(ask: IsolationAsk): Promise<IsolationPlan> {
    if (ask.isolation === 'none') {
      return { work_tree: ask.dir !== null && this.git.problem() === null ? await this.git.workTreeOf(ask.dir) : null, request: null };
    }
    if (ask.dir === null) return { work_tree: null, request: null };
    const problem = this.git.problem();
    if (problem !== null) return refused('git_unavailable', `isolation "worktree" needs git: ${problem}`);
    const checkout = await this.git.checkoutOf(ask.dir);
    if (!checkout) return refused('not_a_git_repository', `cwd: ${ask.dir} is not in a git repository, so it cannot have a worktree (use isolation "none")`, { cwd: ask.dir });
    const repo = checkout.toplevel;
    if (isInside(this.root, repo)) {
      return refused('worktrees_dir_in_repository', `the worktrees folder ${this.root} is inside the repository ${repo}: set BRAINSTEM_WORKTREES_DIR to a folder outside it`, { dir: this.root });
    }
    const base_ref = ask.base_ref ?? checkout.head_branch ?? 'HEAD';
    const base_sha = await this.git.resolveCommit(repo, base_ref);
    if (base_sha === null) return refused('unknown_ref', `base_ref: ${JSON.stringify(base_ref)} names no commit in ${repo}`, { ref: base_ref });
    const asBranch = base_ref.startsWith('refs/heads/') ? base_ref.slice('refs/heads/'.length) : base_ref;
    const base_branch = ask.base_ref === undefined ? checkout.head_branch : (await this.git.branchExists(repo, asBranch)) ? asBranch : null;
    const reuse = await this.reuse(repo, ask);
    if (reuse !== null && 'refusal' in reuse) return { work_tree: null, request: reuse };
    const subdir = relative(repo, await realpath(ask.dir));
    return {
      work_tree: null,
      request: { repo, subdir, folder: this.folderOf(repo), base_ref, base_sha, base_branch, reuse, title: ask.title, setup: ask.setup, copy: [...ask.copy] },
    };
  }

  /** An existing worktree named by path, or an existing branch (with the worktree it is checked out in, if any). */
  private async reuse(repo: string, ask: IsolationAsk): Promise<WorktreeRequest['reuse'] | { refusal: WorktreeRefusal }> {
    if (ask.worktree !== undefined) {
      const real = isAbsolute(ask.worktree) ? await realpath(ask.worktree).catch(() => null) : null;
      const entry = real === null || real === repo ? undefined : (await this.git.worktrees(repo)).find((w) => w.path === real);
      if (!entry) return { refusal: worktreeRefusal('path_outside_tree', `worktree: ${ask.worktree} is not a worktree of the repository ${repo}`, { worktree: ask.worktree }) };
      if (entry.branch === null) return { refusal: worktreeRefusal('invalid_ref', `worktree: ${ask.worktree} has no branch checked out (its HEAD is detached)`, { worktree: ask.worktree }) };
      return { worktree: entry.path, branch: entry.branch };
    }
    if (ask.branch === undefined) return null;
    const problem = await this.git.branchNameProblem(repo, ask.branch);
    if (problem !== null) return { refusal: worktreeRefusal('invalid_ref', `branch: ${problem}`, { ref: ask.branch }) };
    if (!(await this.git.branchExists(repo, ask.branch))) return { refusal: worktreeRefusal('unknown_ref', `branch: ${JSON.stringify(ask.branch)} is not a branch of ${repo}`, { ref: ask.branch }) };
    const holder = (await this.git.worktrees(repo)).find((w) => w.branch === ask.branch);
    if (holder?.path === repo) {
      return { refusal: worktreeRefusal('branch_checked_out', `branch: ${ask.branch} is checked out in the main checkout ${repo}; a branch is in one worktree at a time`, { ref: ask.branch }) };
    }
    return holder ? { worktree: holder.path, branch: ask.branch } : { branch: ask.branch };
  }

  /** The repository's folder under the worktrees root (its worktrees, and the temporary one a rebase runs in). */
  folderOf(repo: string): string {
    return repositoryFolder(this.root, repo);
  }

  /** Adds the worktree (files not checked out yet: prepare does, off the creation's turn); a git failure is the create's refusal. */
  async add(request: WorktreeRequest, alias: string): Promise<WorktreeFact> {
    const { repo, subdir, base_ref, base_sha, base_branch, setup, copy } = request;
    const facts = { repo, subdir, base_ref, base_sha, base_branch };
    if (request.reuse && 'worktree' in request.reuse) return { ...facts, path: request.reuse.worktree, branch: request.reuse.branch, reused: 'worktree', setup: null, copy: [] };
    try {
      const at = { repo, folder: request.folder, alias, title: request.title };
      const added = await this.git.addWorktree(request.reuse ? { ...at, branch: request.reuse.branch } : { ...at, base_sha });
      return { ...facts, ...added, reused: request.reuse ? 'branch' : 'none', setup, copy };
    } catch (e) {
      if (e instanceof DomainError) return { refusal: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } };
      throw e;
    }
  }

  /** A create refused after its worktree was added: what Brainstem added is taken back (a reused branch is kept). */
  async undo(fact: WorktreeFact): Promise<void> {
    if ('refusal' in fact || fact.reused === 'worktree') return;
    await this.git.remove({ repo: fact.repo, path: fact.path, branch: fact.branch, branch_delete: fact.reused === 'none' ? 'force' : 'keep', force: true });
  }

  /**
   * Checks the worktree's files out, copies the untracked files named, then runs the setup command in the worker's
   * folder with the worker's environment; everything it prints goes to the session's log. The reason it failed, or null.
   */
  async prepare(actor: SessionActor, env: Record<string, string>, log: (text: string) => void, output: (chunk: Buffer) => void): Promise<string | null> {
    const w = actor.context.worktree;
    if (!w) return null;
    try {
      const { copied, missing } = await this.checkouts.run(() => this.git.prepare({ repo: w.repo, path: w.path, copy: w.copy }));
      log(`brainstem: worktree ${w.path} on branch ${w.branch} (from ${w.base_ref} ${w.base_sha.slice(0, 12)})`);
      if (copied.length) log(`brainstem: copied into the worktree: ${copied.join(', ')}`);
      if (missing.length) log(`brainstem: not in the checkout, not copied: ${missing.join(', ')}`);
    } catch (e) {
      return `the worktree's files could not be checked out: ${(e as Error).message}`;
    }
    if (!w.setup) return null;
    // A stop while the files were checked out ended the session: nothing more runs for it.
    if (!actor.live) return 'the session was stopped while its worktree was prepared';
    log(`brainstem: running the setup command: ${w.setup}`);
    const code = await this.runSetup(w.setup, actor.context.cwd, env, output);
    if (code.code === 0) return null;
    return `the setup command ${JSON.stringify(w.setup)} ${code.code === null ? `was killed (${code.signal ?? code.error ?? 'no exit code'})` : `exited with code ${code.code}`}`;
  }

  private runSetup(command: string, cwd: string, env: Record<string, string>, output: (chunk: Buffer) => void): Promise<{ code: number | null; signal: string | null; error: string | null }> {
    // The profile's setup is a shell command by design (`npm ci && cp x y`), like a hook's; it is the profile's, never a request's.
    const child = this.runner.spawn({ command: '/bin/sh', args: ['-c', command], cwd, env });
    child.stdin.end();
    child.stdout.on('data', output);
    child.stderr.on('data', output);
    return new Promise((resolve) => child.onExit((code, signal, error) => resolve({ code, signal, error: error?.message ?? null })));
  }
}
