import { OverlapFact, OverlapState, evolveOverlaps, overlapFacts } from './overlap-facts';

const REPO = '/repo';
const fold = (facts: OverlapFact[], state: OverlapState = new Map()): OverlapState => facts.reduce(evolveOverlaps, state);
const pair = (a: string, b: string, files: string[], conflicting_paths: string[] = []) => ({ a, b, files, conflict: conflicting_paths.length > 0, conflicting_paths });

describe('overlap facts', () => {
  it('Given pairs that overlap, one of them conflicting, and a session against its moved base, When first looked at, Then each is one fact; pairs sharing nothing none', () => {
    const facts = overlapFacts(new Map(), REPO, {
      pairs: [pair('cs_a', 'cs_b', ['shared.txt'], ['shared.txt']), pair('cs_a', 'cs_c', ['shared.txt']), pair('cs_b', 'cs_d', [])],
      base: [{ session_id: 'cs_c', base_branch: 'main', conflict: true, conflicting_paths: ['README.md'] }],
    });
    expect(facts).toEqual([
      { type: 'worktree.conflict_predicted', data: { repo: REPO, session_id: 'cs_a', b: 'cs_b', files: ['shared.txt'], conflicting_paths: ['shared.txt'] } },
      { type: 'worktree.overlap', data: { repo: REPO, session_id: 'cs_a', b: 'cs_c', files: ['shared.txt'] } },
      { type: 'worktree.conflict_predicted', data: { repo: REPO, session_id: 'cs_c', b: 'base', files: ['README.md'], conflicting_paths: ['README.md'] } },
    ]);
  });

  it('Given the journaled standing, When the answers are the same, Then nothing is journaled; When one changes or goes, Then only that is', () => {
    const report = { pairs: [pair('cs_a', 'cs_b', ['x.ts'], ['x.ts']), pair('cs_a', 'cs_c', ['y.ts'])], base: [] };
    const state = fold(overlapFacts(new Map(), REPO, report));
    expect(overlapFacts(state, REPO, report)).toEqual([]);
    // The conflict resolved into a clean overlap; the other pair no longer shares a file.
    const next = overlapFacts(state, REPO, { pairs: [pair('cs_a', 'cs_b', ['x.ts']), pair('cs_a', 'cs_c', [])], base: [] });
    expect(next).toEqual([
      { type: 'worktree.overlap', data: { repo: REPO, session_id: 'cs_a', b: 'cs_b', files: ['x.ts'] } },
      { type: 'worktree.overlap_cleared', data: { repo: REPO, session_id: 'cs_a', b: 'cs_c' } },
    ]);
    expect([...fold(next, state).values()]).toEqual([{ repo: REPO, session_id: 'cs_a', b: 'cs_b', conflict: false, files: ['x.ts'], conflicting_paths: [] }]);
  });

  it('Given a repository with no live worktree session left, Then its pairs are cleared and another repository\'s are not', () => {
    const state = fold([
      { type: 'worktree.overlap', data: { repo: REPO, session_id: 'cs_a', b: 'cs_b', files: ['x'] } },
      { type: 'worktree.overlap', data: { repo: '/other', session_id: 'cs_x', b: 'cs_y', files: ['x'] } },
    ]);
    expect(overlapFacts(state, REPO, null)).toEqual([{ type: 'worktree.overlap_cleared', data: { repo: REPO, session_id: 'cs_a', b: 'cs_b' } }]);
  });
});
