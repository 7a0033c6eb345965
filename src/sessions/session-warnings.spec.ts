import { WorkTreeMember, workTreeWarnings } from './session-warnings';

const member = (id: string, live: boolean, work_tree: string | null): WorkTreeMember => ({ id, live, context: { alias: id.replace('s', 'w'), work_tree } });

describe('warnings of sessions sharing a work tree', () => {
  const sessions = [
    member('s1', true, '/src/app'),
    member('s2', true, '/src/app'),
    member('s3', false, '/src/app'),
    member('s4', true, '/wt/app-1/w4-x'),
    member('s5', true, null),
    member('s6', true, null),
  ];

  it('given two live sessions in one checkout, when either status is built, then it is warned naming the other; an exited one and one in its own worktree are not named', () => {
    expect(workTreeWarnings(sessions[0], sessions)).toEqual([
      {
        code: 'shared_work_tree',
        message: 'w2 also works in the git work tree /src/app: they can overwrite each other\'s changes; start sessions with isolation "worktree" to keep them apart',
        sessions: ['w2'],
        work_tree: '/src/app',
      },
    ]);
    expect(workTreeWarnings(sessions[1], sessions)[0].sessions).toEqual(['w1']);
  });

  it('given an exited session, one alone in its worktree and two outside any git work tree, when their statuses are built, then none is warned', () => {
    for (const s of sessions.slice(2)) expect(workTreeWarnings(s, sessions)).toEqual([]);
  });

  it('given three in one work tree, when the second status is built, then it names the two others in the order given', () => {
    const three = ['s1', 's2', 's3'].map((id) => member(id, true, '/r'));
    expect(workTreeWarnings(three[1], three)[0]).toMatchObject({ sessions: ['w1', 'w3'], message: expect.stringMatching(/^w1, w3 also work in/) });
  });

  it('given sessions of other trees among those passed, when a status is built, then only its own tree counts', () => {
    const mixed = [member('s1', true, '/a'), member('s2', true, '/b'), member('s3', true, '/a')];
    expect(workTreeWarnings(mixed[0], mixed)[0].sessions).toEqual(['w3']);
    expect(workTreeWarnings(mixed[1], mixed)).toEqual([]);
  });
});
