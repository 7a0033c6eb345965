/**
 * Which git Brainstem runs, pure. Merges are tried without touching a checkout by `git merge-tree --write-tree`, which
 * git 2.38 brought: older gits are refused (isolation answers git_unavailable). Debian bookworm ships 2.39.
 */
export const MIN_GIT_VERSION: readonly [number, number, number] = [2, 38, 0];
export const TESTED_GIT_VERSION = '2.39.5';

/** `git version 2.39.5` (or `2.39.5.windows.1`, `2.45.0-rc1`) as numbers; null for anything else. */
export function parseGitVersion(output: string): [number, number, number] | null {
  const m = /^git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(output.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : null;
}

/** Null when this git will do, else why not. */
export function gitVersionProblem(output: string | null): string | null {
  if (output === null) return 'git is not installed (no git on PATH)';
  const v = parseGitVersion(output);
  if (!v) return `cannot read git's version from ${JSON.stringify(output.trim().slice(0, 100))}`;
  for (let i = 0; i < 3; i++) {
    if (v[i] > MIN_GIT_VERSION[i]) return null;
    if (v[i] < MIN_GIT_VERSION[i]) return `git ${v.join('.')} is too old: worktree isolation needs git ${MIN_GIT_VERSION.join('.')} or later (merge-tree --write-tree)`;
  }
  return null;
}
