import { createHash } from 'node:crypto';
import { posix } from 'node:path';

/**
 * How Brainstem names what it creates in a repository, pure: the branch `brainstem/<alias>-<slug>` and the worktree
 * folder of the same name. User text (a session's title) only ever becomes a slug of [a-z0-9-], so no title can make a
 * ref name, a path or a git option; the alias is Brainstem's own (`w12`).
 */

/** What every slug matches: lowercase letters and digits, single dashes between. */
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** What an alias matches; anything else is refused before it reaches a branch name. */
const ALIAS_PATTERN = /^w[1-9][0-9]{0,14}$/;
export const MAX_SLUG_LENGTH = 40;
export const BRANCH_PREFIX = 'brainstem/';
/** A name tried with more numbers than this means the repository is full of them: refused rather than searched on. */
const MAX_NUMBER = 1000;

/** A title as a slug: accents dropped, anything but letters and digits a dash; `session` when nothing is left. */
export function slugOf(title: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, MAX_SLUG_LENGTH)
    .replace(/-+$/, '');
  return slug === '' ? 'session' : slug;
}

/**
 * The folder under the worktrees root that holds one repository's worktrees: its name and a hash of its path, so two
 * repositories of one name never share a folder.
 */
export function repositoryFolder(root: string, repository: string): string {
  const hash = createHash('sha256').update(repository).digest('hex').slice(0, 8);
  return posix.join(root, `${slugOf(posix.basename(repository))}-${hash}`);
}

export interface WorktreeName {
  branch: string;
  path: string;
}

/**
 * The session's branch and folder: `brainstem/<alias>-<slug>` and `<repository folder>/<alias>-<slug>`. A branch or
 * folder of that name that exists already is not an error: the name gets a number (`-2`, `-3`, …) until both are free.
 */
export function worktreeName(input: { alias: string; title: string; folder: string; branchTaken: (name: string) => boolean; pathTaken: (path: string) => boolean }): WorktreeName {
  if (!ALIAS_PATTERN.test(input.alias)) throw new Error(`not an alias: ${JSON.stringify(input.alias)}`);
  const base = `${input.alias}-${slugOf(input.title)}`;
  for (let n = 1; n <= MAX_NUMBER; n++) {
    const name = n === 1 ? base : `${base}-${n}`;
    const candidate = { branch: `${BRANCH_PREFIX}${name}`, path: posix.join(input.folder, name) };
    if (!input.branchTaken(candidate.branch) && !input.pathTaken(candidate.path)) return candidate;
  }
  throw new Error(`no free name for ${base} after ${MAX_NUMBER} tries`);
}

/** Whether `path` is `dir` or inside it (both absolute and normalised). */
export function isInside(path: string, dir: string): boolean {
  const rel = posix.relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !posix.isAbsolute(rel));
}

/**
 * A ref as a user may give it, before git judges it (`check-ref-format`, `rev-parse --verify`): never an option (no
 * leading `-`), no space or control character, at most 200 characters.
 */
export const REF_INPUT_PATTERN = /^(?!-)[^\s\x00-\x1f\x7f]{1,200}$/;
