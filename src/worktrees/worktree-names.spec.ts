import { REF_INPUT_PATTERN, SLUG_PATTERN, isInside, repositoryFolder, slugOf, worktreeName } from './worktree-names';

describe('worktree names', () => {
  describe('slugOf', () => {
    it.each([
      ['Fix the tests', 'fix-the-tests'],
      ['  Ünïcödé — titles!  ', 'unicode-titles'],
      ['$(rm -rf ~); `x` --force', 'rm-rf-x-force'],
      ['../../etc/passwd', 'etc-passwd'],
      ['', 'session'],
      ['!!!', 'session'],
      ['a'.repeat(60), 'a'.repeat(40)],
      [`${'b'.repeat(39)}-tail`, 'b'.repeat(39)],
    ])('given the title %j, then the slug is %j and matches the strict pattern', (title, slug) => {
      expect(slugOf(title)).toBe(slug);
      expect(slugOf(title)).toMatch(SLUG_PATTERN);
    });
  });

  describe('worktreeName', () => {
    const folder = '/data/worktrees/app-12345678';

    it('given nothing of that name, then the branch is brainstem/<alias>-<slug> and the folder has the same name', () => {
      expect(worktreeName({ alias: 'w3', title: 'Fix tests', folder, branchTaken: () => false, pathTaken: () => false })).toEqual({
        branch: 'brainstem/w3-fix-tests',
        path: '/data/worktrees/app-12345678/w3-fix-tests',
      });
    });

    it('given the branch exists (and then the folder of the next name), when named, then the name gets the first free number', () => {
      const branches = new Set(['brainstem/w3-fix-tests']);
      const paths = new Set([`${folder}/w3-fix-tests-2`]);
      const name = worktreeName({ alias: 'w3', title: 'Fix tests', folder, branchTaken: (b) => branches.has(b), pathTaken: (p) => paths.has(p) });
      expect(name).toEqual({ branch: 'brainstem/w3-fix-tests-3', path: `${folder}/w3-fix-tests-3` });
    });

    it('given something that is not an alias, then it is refused before it can reach a branch name', () => {
      expect(() => worktreeName({ alias: 'w1; rm', title: 'x', folder, branchTaken: () => false, pathTaken: () => false })).toThrow('not an alias');
    });
  });

  it('given two repositories of one name, then their folders differ; one repository always gets the same folder', () => {
    const a = repositoryFolder('/wt', '/src/a/app');
    expect(a).toMatch(/^\/wt\/app-[0-9a-f]{8}$/);
    expect(repositoryFolder('/wt', '/src/b/app')).not.toBe(a);
    expect(repositoryFolder('/wt', '/src/a/app')).toBe(a);
  });

  it('tells whether a path is inside a folder', () => {
    expect(isInside('/a/b/c', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/bc', '/a/b')).toBe(false);
    expect(isInside('/a', '/a/b')).toBe(false);
  });

  it.each([
    ['main', true],
    ['release/1.2', true],
    ['a1b2c3d', true],
    ['-x', false],
    ['--upload-pack=evil', false],
    ['has space', false],
    ['HEAD~1', true],
    ['tab\there', false],
    ['', false],
  ])('given the ref %j as input, then it is taken: %s', (ref, ok) => {
    expect(REF_INPUT_PATTERN.test(ref)).toBe(ok);
  });
});
