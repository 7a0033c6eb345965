import { GitCli } from './git-cli';
import { DiffFile, MAX_COMMITS, MAX_FILES, WorktreeDiff, collectPage } from './diff-page';
import { ChangedFile, FilePatch, LOG_FORMAT, parseDiffFiles, parseLeftRight, parseLog, parsePatch, parseStatus } from './git-parse';
import { DiffRequest } from './worktree-git.port';

/** A patch is read up to this many bytes: past it, the file's page says it was cut. */
const MAX_PATCH_BYTES = 8 * 1024 * 1024;
/** Untracked files counted line by line at most (one git process each); more are listed with no counts. */
const MAX_UNTRACKED_COUNTED = 200;

/**
 * A worktree's diff, live: what its files are now (committed or not, untracked files included) against where its
 * branch left the base branch (their merge base, so what the base gained since, another session's merge say, is not
 * shown as this session's), its commits, and how far ahead and behind the base it is. One page of patches.
 */
export async function diffWorktree(git: GitCli, r: DiffRequest): Promise<WorktreeDiff> {
  const cwd = r.path;
  const head = (await git.run(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd })).stdout.trim();
  const baseRef = r.base_branch !== null && (await git.spawn(['show-ref', '--verify', '--quiet', `refs/heads/${r.base_branch}`], { cwd })).code === 0 ? `refs/heads/${r.base_branch}` : r.base_sha;
  const mergeBase = (await git.run(['merge-base', baseRef, 'HEAD'], { cwd, ok: [1] })).stdout.trim() || r.base_sha;
  const { behind, ahead } = parseLeftRight((await git.run(['rev-list', '--left-right', '--count', `${baseRef}...HEAD`], { cwd })).stdout);
  const commits = parseLog((await git.run(['log', LOG_FORMAT, '-n', String(MAX_COMMITS), `${mergeBase}..HEAD`], { cwd })).stdout);
  const files = await changedFiles(git, cwd, mergeBase);
  const paths = r.file === null ? files.map((f) => f.path) : files.some((f) => f.path === r.file) ? [r.file] : [];
  const byPath = new Map(files.map((f) => [f.path, f]));
  const page = await collectPage(paths, r.cursor, r.limit, (path) => patchOf(git, cwd, mergeBase, byPath.get(path) as DiffFile & { untracked?: boolean }));
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

/** Tracked files changed since the merge base (committed, staged or not), then untracked ones, as added; by path. */
async function changedFiles(git: GitCli, cwd: string, mergeBase: string): Promise<Array<DiffFile & { untracked?: boolean }>> {
  const nameStatus = (await git.run(['diff', '--no-ext-diff', '-M', '--name-status', '-z', mergeBase], { cwd })).stdout;
  const numstat = (await git.run(['diff', '--no-ext-diff', '-M', '--numstat', '-z', mergeBase], { cwd })).stdout;
  const status = parseStatus((await git.run(['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd })).stdout);
  const dirty = new Set(status.flatMap((s) => [s.path, ...(s.from ? [s.from] : [])]));
  const tracked: Array<DiffFile & { untracked?: boolean }> = parseDiffFiles(nameStatus, numstat).map((f) => ({ ...f, uncommitted: dirty.has(f.path) }));
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

async function patchOf(git: GitCli, cwd: string, mergeBase: string, file: DiffFile & { untracked?: boolean }): Promise<FilePatch> {
  const args = file.untracked
    ? ['diff', '--no-index', '--no-color', '--no-ext-diff', '--', '/dev/null', file.path]
    : ['diff', '--no-color', '--no-ext-diff', '-M', mergeBase, '--', ...(file.old_path ? [file.old_path] : []), file.path];
  const r = await git.run(args, { cwd, ok: [1], maxBytes: MAX_PATCH_BYTES });
  const patch = parsePatch(r.stdout);
  if (!r.truncated) return patch;
  return { ...patch, lines: [...patch.lines.slice(0, -1), { kind: 'hunk', text: `[patch cut: it is over ${MAX_PATCH_BYTES / 1024 / 1024} MiB]`, old_line: null, new_line: null }] };
}
