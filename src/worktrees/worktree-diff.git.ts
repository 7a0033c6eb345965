import { GitCli } from './git-cli';
import { DiffFile, MAX_COMMITS, MAX_FILES, WorktreeDiff, collectPage, reachable } from './diff-page';
import { PageFile, patchLoader } from './diff-patches.git';
import { ChangedFile, LOG_FORMAT, parseDiffRawNumstat, parseLeftRight, parseLog, parseStatus } from './git-parse';
import { DiffRequest } from './worktree-git.port';
import { withoutSandboxMounts } from './sandbox-mounts';

/** Untracked files counted line by line at most (one git process each); more are listed with no counts. */
const MAX_UNTRACKED_COUNTED = 200;
/** A page's patches read at once (one git process each), ahead of the one being paged. */
const PATCHES_AT_ONCE = 4;

/**
 * A worktree's diff, live: what its files are now (committed or not, untracked files included) against where its
 * branch left the base branch (their merge base, so what the base gained since, another session's merge say, is not
 * shown as this session's), its commits, and how far ahead and behind the base it is. One page of patches.
 */
export async function diffWorktree(git: GitCli, r: DiffRequest): Promise<WorktreeDiff> {
  const cwd = r.path;
  // The reads that do not wait on each other run at once; each answer is awaited in the order they were once run in
  // one by one, so the error reported, when several fail, is still the first's.
  const headRead = quiet(git.run(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd }));
  const baseRefRead = quiet(
    r.base_branch === null
      ? Promise.resolve(r.base_sha)
      : git.spawn(['show-ref', '--verify', '--quiet', `refs/heads/${r.base_branch}`], { cwd }).then((s) => (s.code === 0 ? `refs/heads/${r.base_branch}` : r.base_sha)),
  );
  const statusRead = quiet(git.run(['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd }));
  const mergeBaseRead = quiet(baseRefRead.then(async (baseRef) => (await git.run(['merge-base', baseRef, 'HEAD'], { cwd, ok: [1] })).stdout.trim() || r.base_sha));
  const leftRightRead = quiet(baseRefRead.then((baseRef) => git.run(['rev-list', '--left-right', '--count', `${baseRef}...HEAD`], { cwd })));
  const logRead = quiet(mergeBaseRead.then((mergeBase) => git.run(['log', LOG_FORMAT, '-n', String(MAX_COMMITS), `${mergeBase}..HEAD`], { cwd })));
  const trackedRead = quiet(mergeBaseRead.then((mergeBase) => git.run(['diff', '--no-ext-diff', '-M', '--raw', '--numstat', '-z', mergeBase], { cwd })));
  const head = (await headRead).stdout.trim();
  const mergeBase = await mergeBaseRead;
  const { behind, ahead } = parseLeftRight((await leftRightRead).stdout);
  const commits = parseLog((await logRead).stdout);
  const files = await changedFiles(git, cwd, (await trackedRead).stdout, (await statusRead).stdout);
  const paths = r.file === null ? files.map((f) => f.path) : files.some((f) => f.path === r.file) ? [r.file] : [];
  const byPath = new Map(files.map((f) => [f.path, f]));
  const file = (path: string) => byPath.get(path) as PageFile;
  const minLines = (path: string) => minPatchLines(file(path));
  const load = patchLoader(git, cwd, mergeBase, reachable(paths, r.cursor, r.limit, minLines).map(file));
  const page = await collectPage(paths, r.cursor, r.limit, (path) => load(file(path)), { concurrency: PATCHES_AT_ONCE, minLines });
  return {
    branch: r.branch,
    base_ref: r.base_ref,
    base_branch: r.base_branch,
    merge_base: mergeBase,
    head,
    ahead,
    behind,
    commits,
    commits_total: ahead,
    files: files.slice(0, MAX_FILES).map(({ untracked: _u, ...f }) => f),
    files_total: files.length,
    ...page,
  };
}

/** A read started ahead of its turn: if it fails while an earlier one is awaited, it is reported in its own turn. */
function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

/**
 * The lines a file's patch has at least, from its counts: each line added or removed, and a hunk header when there is
 * one; a binary file, or one not counted, takes one line of the page.
 */
function minPatchLines(file: DiffFile): number {
  const changed = (file.additions ?? 0) + (file.deletions ?? 0);
  return changed === 0 ? 1 : changed + 1;
}

/** Tracked files changed since the merge base (committed, staged or not), then untracked ones, as added; by path. */
async function changedFiles(git: GitCli, cwd: string, rawNumstat: string, statusZ: string): Promise<PageFile[]> {
  const status = await withoutSandboxMounts(cwd, parseStatus(statusZ));
  const dirty = new Set(status.flatMap((s) => [s.path, ...(s.from ? [s.from] : [])]));
  const tracked: PageFile[] = parseDiffRawNumstat(rawNumstat).map((f) => ({ ...f, uncommitted: dirty.has(f.path) }));
  const untrackedPaths = status.filter((s) => s.index === '?').map((s) => s.path);
  const untracked = await Promise.all(untrackedPaths.map((path, i) => untrackedFile(git, cwd, path, i < MAX_UNTRACKED_COUNTED)));
  return [...tracked, ...untracked].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

async function untrackedFile(git: GitCli, cwd: string, path: string, count: boolean): Promise<DiffFile & { untracked: true }> {
  const file: ChangedFile = { path, old_path: null, change: 'added', additions: null, deletions: null, binary: false };
  if (count) {
    // --no-index answers 1 when the files differ, which they do.
    const r = await git.run(['diff', '--no-index', '--no-ext-diff', '--numstat', '--', '/dev/null', path], { cwd, ok: [1] });
    const [added, deleted] = r.stdout.split('\t');
    file.binary = added === '-';
    file.additions = added === '-' || added === undefined ? null : Number(added);
    file.deletions = deleted === '-' || deleted === undefined ? null : Number(deleted);
  }
  return { ...file, uncommitted: true, untracked: true };
}
