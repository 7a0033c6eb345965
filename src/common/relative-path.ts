/**
 * Why a path a user or a profile names inside a tree (a file of a diff, an untracked file to copy into a worktree)
 * cannot be used, or null: it must be relative, `/`-separated, and stay inside the tree (no `..` segment), so joining it
 * to the tree's root never leads out of it. Pure.
 */
export function relativePathProblem(path: string): string | null {
  if (path === '') return 'must not be empty';
  if (path.includes('\0')) return 'must not contain NUL';
  if (path.length > 4096) return 'must be at most 4096 characters';
  if (path.startsWith('/')) return 'must be relative to the tree, not absolute';
  if (path.includes('\\')) return 'must use / between its parts';
  const parts = path.split('/');
  if (parts.some((p) => p === '..')) return 'must stay inside the tree (no .. part)';
  if (parts.every((p) => p === '' || p === '.')) return 'must name something inside the tree';
  return null;
}

/** The path with empty and `.` parts dropped (`./a//b/` is `a/b`); only for a path relativePathProblem accepts. */
export function normalRelativePath(path: string): string {
  return path
    .split('/')
    .filter((p) => p !== '' && p !== '.')
    .join('/');
}
