import { normalRelativePath, relativePathProblem } from './relative-path';

describe('relative paths inside a tree', () => {
  it.each([
    ['.env', null],
    ['config/local.json', null],
    ['./a//b/', null],
    ['', 'must not be empty'],
    ['/etc/passwd', 'must be relative to the tree, not absolute'],
    ['../outside', 'must stay inside the tree (no .. part)'],
    ['a/../../b', 'must stay inside the tree (no .. part)'],
    ['a\\b', 'must use / between its parts'],
    ['a\0b', 'must not contain NUL'],
    ['./', 'must name something inside the tree'],
  ])('given %j, then the problem is %j', (path, problem) => {
    expect(relativePathProblem(path)).toBe(problem);
  });

  it('given a path with empty and . parts, when normalised, then only its names are left', () => {
    expect(normalRelativePath('./a//b/./c/')).toBe('a/b/c');
  });
});
