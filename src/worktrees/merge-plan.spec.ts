import { WorktreeEntry } from './git-parse';
import { baseTarget, dirtyOverlap, mergeMessage, mergeStep } from './merge-plan';

const names = { branch: 'brainstem/w1-x', base: 'main' };

describe('merge plans', () => {
  describe('mergeStep', () => {
    it('given the base holds the branch already (ahead 0), then every strategy is refused as nothing to merge, naming both', () => {
      for (const s of ['ff', 'merge', 'rebase'] as const) {
        expect(mergeStep(s, { headInBase: true, baseInHead: true }, names)).toEqual({
          refusal: {
            code: 'nothing_to_merge',
            message: 'brainstem/w1-x has no commit that main does not have (ahead 0): nothing to merge, nothing was changed',
            details: { ...names, ahead: 0 },
          },
        });
      }
    });

    it('given the branch is on top of the base, then ff and rebase fast-forward, merge records a merge commit', () => {
      const r = { headInBase: false, baseInHead: true };
      expect([mergeStep('ff', r, names), mergeStep('rebase', r, names), mergeStep('merge', r, names)]).toEqual(['fast_forward', 'fast_forward', 'merge_commit']);
    });

    it('given the base moved on, then ff is refused naming both; merge and rebase go ahead', () => {
      const r = { headInBase: false, baseInHead: false };
      expect(mergeStep('ff', r, names)).toEqual({
        refusal: {
          code: 'not_fast_forward',
          message: 'main has commits brainstem/w1-x does not have, so it cannot be fast-forwarded: merge with strategy merge or rebase',
          details: names,
        },
      });
      expect([mergeStep('merge', r, names), mergeStep('rebase', r, names)]).toEqual(['merge_commit', 'rebase']);
    });
  });

  it('given dirty files in the main checkout, then only those the merge touches are in the way, by either name of a rename', () => {
    const dirty = [
      { path: 'a.ts', from: null, index: ' ', worktree: 'M' },
      { path: 'b.ts', from: 'old-b.ts', index: 'R', worktree: ' ' },
      { path: 'notes.txt', from: null, index: '?', worktree: '?' },
      { path: 'build/', from: null, index: '?', worktree: '?' },
    ];
    expect(dirtyOverlap(dirty, ['old-b.ts', 'c.ts', 'build/out.js', 'a.ts'])).toEqual(['a.ts', 'build/out.js', 'old-b.ts']);
    expect(dirtyOverlap(dirty, ['c.ts'])).toEqual([]);
  });

  describe('baseTarget', () => {
    const wt = (path: string, branch: string | null): WorktreeEntry => ({ path, head: 'x', branch, bare: false, prunable: false });

    it('given the base checked out in the main checkout, then it moves there', () => {
      expect(baseTarget([wt('/src/app', 'main'), wt('/wt/w1', 'brainstem/w1-x')], 'main', '/src/app')).toEqual({ kind: 'checkout', path: '/src/app' });
    });

    it('given no worktree has the base, then only its ref moves', () => {
      expect(baseTarget([wt('/src/app', 'dev'), wt('/wt/w1', 'brainstem/w1-x')], 'main', '/src/app')).toEqual({ kind: 'ref' });
    });

    it('given another worktree has the base, then it is refused naming that worktree', () => {
      const r = baseTarget([wt('/src/app', 'dev'), wt('/elsewhere', 'main')], 'main', '/src/app');
      expect(r).toMatchObject({ refusal: { code: 'base_checked_out_elsewhere', details: { base: 'main', path: '/elsewhere' } } });
    });
  });

  it('names the branch, the base and the session in a merge commit', () => {
    expect(mergeMessage('brainstem/w2-y', 'main', 'w2')).toBe("Merge branch 'brainstem/w2-y' into main\n\nBrainstem session w2.");
  });
});
