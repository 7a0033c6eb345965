import { sharedWorkTreeWarnings } from './session-warnings';

describe('warnings of sessions sharing a work tree', () => {
  it('given two live sessions in one checkout, then both are warned, each naming the other; an exited one and one in its own worktree are not', () => {
    const warnings = sharedWorkTreeWarnings([
      { id: 'a', alias: 'w1', live: true, work_tree: '/src/app' },
      { id: 'b', alias: 'w2', live: true, work_tree: '/src/app' },
      { id: 'c', alias: 'w3', live: false, work_tree: '/src/app' },
      { id: 'd', alias: 'w4', live: true, work_tree: '/wt/app-1/w4-x' },
      { id: 'e', alias: 'w5', live: true, work_tree: null },
      { id: 'f', alias: 'w6', live: true, work_tree: null },
    ]);
    expect([...warnings.keys()]).toEqual(['a', 'b']);
    expect(warnings.get('a')).toEqual([
      {
        code: 'shared_work_tree',
        message: 'w2 also works in the git work tree /src/app: they can overwrite each other\'s changes; start sessions with isolation "worktree" to keep them apart',
        sessions: ['w2'],
        work_tree: '/src/app',
      },
    ]);
    expect(warnings.get('b')?.[0].sessions).toEqual(['w1']);
  });

  it('given three in one work tree, then each names the two others', () => {
    const warnings = sharedWorkTreeWarnings(['w1', 'w2', 'w3'].map((alias) => ({ id: alias, alias, live: true, work_tree: '/r' })));
    expect(warnings.get('w2')?.[0]).toMatchObject({ sessions: ['w1', 'w3'], message: expect.stringMatching(/^w1, w3 also work in/) });
  });
});
