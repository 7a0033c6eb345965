import { gitVersionProblem, parseGitVersion } from './git-version';

describe('the git version', () => {
  it.each([
    ['git version 2.39.5\n', [2, 39, 5]],
    ['git version 2.45.0-rc1', [2, 45, 0]],
    ['git version 2.38', [2, 38, 0]],
    ['git version 2.39.5.windows.1', [2, 39, 5]],
    ['not git', null],
  ])('given %j, then it reads %j', (output, version) => {
    expect(parseGitVersion(output)).toEqual(version);
  });

  it('given 2.38 or later, then it will do; older, missing or unreadable, then the problem says why', () => {
    expect(gitVersionProblem('git version 2.39.5')).toBeNull();
    expect(gitVersionProblem('git version 2.38.0')).toBeNull();
    expect(gitVersionProblem('git version 3.0.0')).toBeNull();
    expect(gitVersionProblem('git version 2.37.9')).toBe('git 2.37.9 is too old: worktree isolation needs git 2.38.0 or later (merge-tree --write-tree)');
    expect(gitVersionProblem(null)).toBe('git is not installed (no git on PATH)');
    expect(gitVersionProblem('hello')).toBe('cannot read git\'s version from "hello"');
  });
});
