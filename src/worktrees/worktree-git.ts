import { constants } from 'node:fs';
import { access, cp, lstat, mkdir, readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { relativePathProblem } from '../common/relative-path';
import { GitCli } from './git-cli';
import { WorktreeDiff } from './diff-page';
import { StatusEntry, WorktreeEntry, parseStatus, parseWorktreeList } from './git-parse';
import { gitVersionProblem } from './git-version';
import { Checkout, DiffRequest, MergeCheck, MergeOutcome, MergeRequest, RemoveOutcome, RemoveRequest, WorktreeGit } from './worktree-git.port';
import { diffWorktree } from './worktree-diff.git';
import { mergeBranch, mergeRefusal } from './worktree-merge.git';
import { isInside, worktreeName } from './worktree-names';
import { withoutSandboxMounts } from './sandbox-mounts';
import { WorktreeRefusal, worktreeRefusal } from './worktree.errors';

const exists = (path: string): Promise<boolean> =>
  access(path, constants.F_OK).then(
    () => true,
    () => false,
  );

/** The worktree port on Debian's git CLI (see GitCli for how it is run). */
export class CliWorktreeGit implements WorktreeGit {
  private found: { version: string | null; problem: string | null } = { version: null, problem: 'git was not checked yet' };

  constructor(private readonly git: GitCli) {}

  /** Reads git's version (at start): isolation is refused, naming why, when it is missing or too old. */
  async check(): Promise<string | null> {
    const version = await this.git.version();
    this.found = { version: version?.trim() ?? null, problem: gitVersionProblem(version) };
    return this.found.problem;
  }

  problem(): string | null {
    return this.found.problem;
  }

  version(): string | null {
    return this.found.version;
  }

  async workTreeOf(dir: string): Promise<string | null> {
    const top = await this.git.spawn(['rev-parse', '--show-toplevel'], { cwd: dir });
    return top.code !== 0 || top.stdout.trim() === '' ? null : realpath(top.stdout.trim());
  }

  async checkoutOf(dir: string): Promise<Checkout | null> {
    const toplevel = await this.workTreeOf(dir);
    if (toplevel === null) return null;
    const branch = await this.git.spawn(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: toplevel });
    const sha = await this.git.spawn(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: toplevel });
    return { toplevel, head_branch: branch.code === 0 ? branch.stdout.trim() : null, head_sha: sha.code === 0 ? sha.stdout.trim() : null };
  }

  async resolveCommit(repo: string, ref: string): Promise<string | null> {
    // --end-of-options: whatever the ref is, git reads it as a revision, never as an option.
    const r = await this.git.spawn(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { cwd: repo });
    return r.code === 0 ? r.stdout.trim() : null;
  }

  async branchNameProblem(repo: string, name: string): Promise<string | null> {
    const r = await this.git.spawn(['check-ref-format', '--branch', name], { cwd: repo });
    // --branch expands @{-1} and the like: only a name that stays as written is one.
    if (r.code !== 0 || r.stdout.trim() !== name) return `${JSON.stringify(name)} is not a valid branch name`;
    return null;
  }

  async branchExists(repo: string, name: string): Promise<boolean> {
    const r = await this.git.spawn(['show-ref', '--verify', '--quiet', `refs/heads/${name}`], { cwd: repo });
    return r.code === 0;
  }

  async worktrees(repo: string): Promise<WorktreeEntry[]> {
    return parseWorktreeList((await this.git.run(['worktree', 'list', '--porcelain', '-z'], { cwd: repo })).stdout);
  }

  async addWorktree(request: { repo: string; folder: string; alias: string; title: string } & ({ base_sha: string } | { branch: string })): Promise<{ path: string; branch: string }> {
    const { repo } = request;
    const reuse = 'branch' in request;
    const branches = new Set((await this.git.run(['for-each-ref', '--format=%(refname:short)', 'refs/heads/'], { cwd: repo })).stdout.split('\n'));
    const registered = new Set((await this.worktrees(repo)).map((w) => w.path));
    const onDisk = new Set((await readdir(request.folder).catch(() => [] as string[])).map((n) => join(request.folder, n)));
    const name = worktreeName({
      alias: request.alias,
      title: request.title,
      folder: request.folder,
      branchTaken: (b) => !reuse && branches.has(b),
      pathTaken: (p) => registered.has(p) || onDisk.has(p),
    });
    await mkdir(request.folder, { recursive: true });
    if (reuse) {
      await this.git.run(['worktree', 'add', '--no-checkout', '--end-of-options', name.path, request.branch], { cwd: repo });
      return { path: name.path, branch: request.branch };
    }
    await this.git.run(['worktree', 'add', '--no-checkout', '-b', name.branch, '--end-of-options', name.path, request.base_sha], { cwd: repo });
    return name;
  }

  async prepare(worktree: { repo: string; path: string; copy: readonly string[] }): Promise<{ copied: string[]; missing: string[] }> {
    await this.git.run(['reset', '--hard', '--quiet', 'HEAD'], { cwd: worktree.path });
    const copied: string[] = [];
    const missing: string[] = [];
    const root = await realpath(worktree.repo);
    for (const rel of worktree.copy) {
      if (relativePathProblem(rel) !== null) continue;
      const from = join(root, rel);
      const to = join(worktree.path, rel);
      // A symlink along the way could lead out of the checkout: only what really is inside it is copied.
      const real = await realpath(from).catch(() => null);
      if (real === null || !isInside(real, root)) {
        missing.push(rel);
        continue;
      }
      // What the branch has (a tracked file) is the worktree's own: never overwritten.
      if (await exists(to)) continue;
      await mkdir(dirname(to), { recursive: true });
      const isDir = (await stat(real)).isDirectory();
      await cp(real, to, { recursive: isDir, errorOnExist: true, force: false });
      copied.push(rel);
    }
    return { copied, missing };
  }

  async status(dir: string): Promise<StatusEntry[]> {
    return withoutSandboxMounts(dir, parseStatus((await this.git.run(['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd: dir })).stdout));
  }

  async exists(path: string): Promise<boolean> {
    return lstat(path).then(
      (s) => s.isDirectory(),
      () => false,
    );
  }

  async remove(request: RemoveRequest): Promise<RemoveOutcome> {
    const folder = await this.exists(request.path);
    if (folder && !request.force) {
      const dirty = await this.status(request.path);
      if (dirty.length > 0) {
        const files = dirty.map((d) => d.path);
        return {
          ok: false,
          refusal: worktreeRefusal('worktree_dirty', `the worktree ${request.path} has uncommitted changes (${files.slice(0, 20).join(', ')}): commit them, or confirm with force to lose them`, { files }),
        };
      }
    }
    if (folder) await this.git.run(['worktree', 'remove', ...(request.force ? ['--force', '--force'] : []), '--end-of-options', request.path], { cwd: request.repo });
    await this.prune(request.repo);
    if (request.branch_delete === 'keep' || !(await this.branchExists(request.repo, request.branch))) return { ok: true, branch_kept: request.branch_delete === 'keep' };
    const deleted = await this.git.spawn(['branch', request.branch_delete === 'force' ? '-D' : '-d', '--end-of-options', request.branch], { cwd: request.repo });
    return { ok: true, branch_kept: deleted.code !== 0 };
  }

  async prune(repo: string): Promise<void> {
    await this.git.run(['worktree', 'prune'], { cwd: repo });
  }

  merge(request: MergeRequest): Promise<MergeOutcome> {
    return mergeBranch(this.git, this, request);
  }

  mergeRefusal(request: MergeCheck): Promise<WorktreeRefusal | null> {
    return mergeRefusal(this.git, this, request);
  }

  diff(request: DiffRequest): Promise<WorktreeDiff> {
    return diffWorktree(this.git, request);
  }
}
