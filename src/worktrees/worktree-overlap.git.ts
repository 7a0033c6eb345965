import { copyFile, lstat, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SRT_MOUNT_NAMES } from '../sandbox/sandbox-launch';
import { GitCli } from './git-cli';
import { MergePrediction, parseMergeTreeNames } from './worktree-overlap';
import { OverlapGit, OverlapSession, WorktreeSnapshot } from './worktree-overlap.port';

/**
 * Who makes a snapshot commit, and when: fixed, so the same tree on the same HEAD is the same commit object (asking
 * again writes nothing new), and a repository without user.name can still make one.
 */
const SNAPSHOT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Brainstem',
  GIT_AUTHOR_EMAIL: 'brainstem@localhost',
  GIT_AUTHOR_DATE: '946684800 +0000',
  GIT_COMMITTER_NAME: 'Brainstem',
  GIT_COMMITTER_EMAIL: 'brainstem@localhost',
  GIT_COMMITTER_DATE: '946684800 +0000',
};

const isEmptyFile = (path: string): Promise<boolean> =>
  stat(path).then(
    (st) => st.isFile() && st.size === 0,
    () => false,
  );

/** The overlaps' git on Debian's git CLI (see GitCli for how it is run). */
export class CliOverlapGit implements OverlapGit {
  constructor(private readonly git: GitCli) {}

  /**
   * The worktree's files as they are now in a commit object, committed or not, untracked files included (ignored ones
   * not): `git add -A` into a copy of its index, `write-tree`, `commit-tree` on HEAD. The worktree's files, its index
   * and every ref stay as they were; only objects are written. Then where its branch left the base, and what changed
   * since.
   */
  async snapshot(s: Pick<OverlapSession, 'path' | 'base_branch' | 'base_sha'>): Promise<WorktreeSnapshot> {
    const cwd = s.path;
    const [indexPath, head] = (await this.git.run(['rev-parse', '--git-path', 'index', 'HEAD'], { cwd })).stdout.trim().split('\n');
    const baseTip = s.base_branch === null ? null : await this.tip(cwd, s.base_branch);
    const scratch = await mkdtemp(join(tmpdir(), 'brainstem-snapshot-'));
    let tree: string;
    try {
      const env = { GIT_INDEX_FILE: join(scratch, 'index') };
      // A worktree never checked out has no index yet: add -A then starts from an empty one.
      await copyFile(resolve(cwd, indexPath), env.GIT_INDEX_FILE).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'ENOENT') throw e;
      });
      // --ignore-errors: a file that cannot be read is left out (git exits 1), not the whole snapshot.
      await this.git.run(['add', '-A', '--ignore-errors'], { cwd, env, ok: [1] });
      await this.dropSandboxMounts(cwd, env);
      tree = (await this.git.run(['write-tree'], { cwd, env })).stdout.trim();
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    const commit = (await this.git.run(['commit-tree', '--no-gpg-sign', tree, '-p', head, '-m', 'brainstem overlap snapshot'], { cwd, env: SNAPSHOT_IDENTITY })).stdout.trim();
    const baseRef = baseTip ?? s.base_sha;
    const merge_base = (await this.git.run(['merge-base', baseRef, head], { cwd, ok: [1] })).stdout.trim() || s.base_sha;
    const files = (await this.git.run(['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', merge_base, commit], { cwd })).stdout.split('\0').filter(Boolean);
    return { commit, tree, merge_base, base_tip: baseTip, files: files.sort() };
  }

  async predictMerge(repo: string, a: string, b: string): Promise<MergePrediction> {
    const r = await this.git.run(['merge-tree', '--write-tree', '-z', '--name-only', '--no-messages', a, b], { cwd: repo, ok: [1] });
    return parseMergeTreeNames(r.stdout, r.code);
  }

  exists(path: string): Promise<boolean> {
    return lstat(path).then(
      (st) => st.isDirectory(),
      () => false,
    );
  }

  private async tip(cwd: string, branch: string): Promise<string | null> {
    const r = await this.git.spawn(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { cwd });
    return r.code === 0 ? r.stdout.trim() : null;
  }

  /**
   * The empty files srt puts where a protected name was missing, while a sandboxed worker runs, are not its work (as
   * in its diff, sandbox-mounts.ts): taken out of the snapshot again when the worktree's own index does not track them.
   */
  private async dropSandboxMounts(cwd: string, env: Record<string, string>): Promise<void> {
    const empty = await Promise.all(SRT_MOUNT_NAMES.map((name) => isEmptyFile(join(cwd, name))));
    const candidates = SRT_MOUNT_NAMES.filter((_, i) => empty[i]);
    if (candidates.length === 0) return;
    const tracked = new Set((await this.git.run(['ls-files', '-z', '--', ...candidates], { cwd })).stdout.split('\0'));
    const mounts = candidates.filter((name) => !tracked.has(name));
    if (mounts.length > 0) await this.git.run(['update-index', '--force-remove', '--', ...mounts], { cwd, env });
  }
}
