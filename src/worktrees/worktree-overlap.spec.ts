import {
  BaseWork,
  MergePrediction,
  OverlapCache,
  PairOverlap,
  SessionWork,
  baseOverlaps,
  clean,
  mayConflict,
  pairOverlaps,
  parseMergeTreeNames,
  sharedFiles,
  suggestMergeOrder,
} from './worktree-overlap';

const work = (session_id: string, tree: string, files: string[]): SessionWork => ({ session_id, tree, files });
const conflicting = (...paths: string[]): MergePrediction => ({ conflict: true, conflicting_paths: paths });
const pair = (a: string, b: string, conflict: boolean): PairOverlap => ({ a, b, files: [], conflict, conflicting_paths: conflict ? ['f'] : [] });

/** A merge probe that answers from a table by session ids and counts what it was asked. */
function probe(answers: Record<string, MergePrediction> = {}) {
  const asked: string[] = [];
  const merge = async (a: SessionWork, b: SessionWork) => {
    asked.push(`${a.session_id}+${b.session_id}`);
    return answers[`${a.session_id}+${b.session_id}`] ?? clean();
  };
  return { asked, merge };
}

describe('worktree overlaps', () => {
  describe('which files two sessions share, and whether they may conflict at all', () => {
    it('given two lists of paths, then the shared ones, sorted, each once', () => {
      expect(sharedFiles(['b', 'a', 'c', 'a'], ['c', 'a', 'z'])).toEqual(['a', 'c']);
      expect(sharedFiles(['a'], [])).toEqual([]);
    });

    it('given a path both changed, then they may conflict; given different files, then not', () => {
      expect(mayConflict(['src/a.ts', 'README.md'], ['README.md'])).toBe(true);
      expect(mayConflict(['src/a.ts'], ['src/b.ts'])).toBe(false);
      expect(mayConflict([], ['src/b.ts'])).toBe(false);
    });

    it('given a file on one side where the other has a folder, then they may conflict (a file/directory conflict)', () => {
      expect(mayConflict(['docs'], ['docs/guide/a.md'])).toBe(true);
      expect(mayConflict(['docs/guide/a.md'], ['docs/guide'])).toBe(true);
      // A shared prefix of a name is no folder.
      expect(mayConflict(['doc'], ['docs/a.md'])).toBe(false);
    });
  });

  describe("git merge-tree's answer, read", () => {
    it('given exit 0, then clean whatever it printed', () => {
      expect(parseMergeTreeNames('87eba89f08b1932930a41f6604080c5240dbd683\0', 0)).toEqual({ conflict: false, conflicting_paths: [] });
    });

    it('given exit 1 with NUL-separated paths after the tree, then a conflict on those paths, sorted, each once', () => {
      expect(parseMergeTreeNames('87eba89f\0src/z.ts\0a b.txt\0src/z.ts\0', 1)).toEqual({ conflict: true, conflicting_paths: ['a b.txt', 'src/z.ts'] });
    });

    it('given messages after an empty field, then they are not read as paths; given no path at all, then still a conflict', () => {
      expect(parseMergeTreeNames('t\0f\0\x001\0f\0CONFLICT (contents)\0CONFLICT (content): Merge conflict in f\n\0', 1)).toEqual(conflicting('f'));
      expect(parseMergeTreeNames('t\0', 1)).toEqual(conflicting());
    });
  });

  describe('the cache of predictions', () => {
    it('given a pair asked twice, in either order, then it is computed once', async () => {
      const cache = new OverlapCache(10);
      let computed = 0;
      const compute = async () => {
        computed++;
        return conflicting('f');
      };
      expect(await cache.predict('t1', 't2', compute)).toEqual(conflicting('f'));
      expect(await cache.predict('t2', 't1', compute)).toEqual(conflicting('f'));
      expect(computed).toBe(1);
    });

    it('given a computation that fails, then it is forgotten and computed again next time', async () => {
      const cache = new OverlapCache(10);
      await expect(cache.predict('a', 'b', () => Promise.reject(new Error('git died')))).rejects.toThrow('git died');
      expect(cache.size).toBe(0);
      expect(await cache.predict('a', 'b', async () => clean())).toEqual(clean());
    });

    it('given more pairs than it keeps, then the least recently used is dropped first', async () => {
      const cache = new OverlapCache(2);
      let computed = 0;
      const compute = async () => {
        computed++;
        return clean();
      };
      await cache.predict('a', 'b', compute);
      await cache.predict('c', 'd', compute);
      await cache.predict('a', 'b', compute);
      await cache.predict('e', 'f', compute);
      expect([cache.size, computed]).toEqual([2, 3]);
      await cache.predict('a', 'b', compute);
      expect(computed).toBe(3);
      await cache.predict('c', 'd', compute);
      expect(computed).toBe(4);
    });
  });

  describe('the pairwise matrix', () => {
    it('given three sessions, then each pair once in their order, with the files both changed; git is asked only of a pair that may conflict', async () => {
      const sessions = [work('a', 'ta', ['f', 'g']), work('b', 'tb', ['f']), work('c', 'tc', ['h'])];
      const git = probe({ 'a+b': conflicting('f') });
      const pairs = await pairOverlaps(sessions, new OverlapCache(10), git.merge);
      expect(pairs).toEqual([
        { a: 'a', b: 'b', files: ['f'], conflict: true, conflicting_paths: ['f'] },
        { a: 'a', b: 'c', files: [], conflict: false, conflicting_paths: [] },
        { a: 'b', b: 'c', files: [], conflict: false, conflicting_paths: [] },
      ]);
      expect(git.asked).toEqual(['a+b']);
    });

    it('given the same trees asked again, then git is not asked again; given one tree changed, then only its pairs are', async () => {
      const cache = new OverlapCache(10);
      const git = probe();
      await pairOverlaps([work('a', 'ta', ['f']), work('b', 'tb', ['f']), work('c', 'tc', ['f'])], cache, git.merge);
      expect(git.asked).toEqual(['a+b', 'a+c', 'b+c']);
      await pairOverlaps([work('a', 'ta', ['f']), work('b', 'tb', ['f']), work('c', 'tc', ['f'])], cache, git.merge);
      expect(git.asked).toHaveLength(3);
      await pairOverlaps([work('a', 'ta', ['f']), work('b', 'tb2', ['f']), work('c', 'tc', ['f'])], cache, git.merge);
      expect(git.asked.slice(3)).toEqual(['a+b', 'b+c']);
    });
  });

  describe('each session against its base as it is now', () => {
    const based = (session_id: string, over: Partial<BaseWork>): BaseWork => ({ session_id, tree: `t${session_id}`, files: ['f'], base_branch: 'main', base_tip: 'm2', merge_base: 'm1', ...over });

    it('given a base that moved, then git is asked; given one that did not, no base branch, or no change, then it is clean unasked', async () => {
      const asked: string[] = [];
      const merge = async (s: BaseWork, tip: string) => {
        asked.push(`${s.session_id}@${tip}`);
        return conflicting('f');
      };
      const sessions = [based('a', {}), based('b', { base_tip: 'm1' }), based('c', { base_branch: null, base_tip: null }), based('d', { files: [] })];
      expect(await baseOverlaps(sessions, new OverlapCache(10), merge)).toEqual([
        { session_id: 'a', base_branch: 'main', conflict: true, conflicting_paths: ['f'] },
        { session_id: 'b', base_branch: 'main', conflict: false, conflicting_paths: [] },
        { session_id: 'd', base_branch: 'main', conflict: false, conflicting_paths: [] },
      ]);
      expect(asked).toEqual(['a@m2']);
    });
  });

  describe('suggestMergeOrder', () => {
    const aged = (...ids: string[]) => ids.map((session_id, i) => ({ session_id, created_at: 1000 + i }));

    it('given two sessions that conflict, then the older is merged first and the younger comes after, naming it', () => {
      expect(suggestMergeOrder(aged('old', 'young'), { pairs: [pair('old', 'young', true)], base: [] })).toEqual([
        { session_id: 'old', clean: true, conflicts_with: [], base_conflicts: [] },
        { session_id: 'young', clean: false, conflicts_with: ['old'], base_conflicts: [] },
      ]);
    });

    it('given no conflict, then oldest first, whatever order they come in', () => {
      const sessions = [{ session_id: 'c', created_at: 3 }, { session_id: 'a', created_at: 1 }, { session_id: 'b', created_at: 1 }];
      expect(suggestMergeOrder(sessions, { pairs: [], base: [] }).map((s) => s.session_id)).toEqual(['a', 'b', 'c']);
    });

    it('given the oldest conflicts with two that do not conflict with each other, then those two merge first: more sessions merge cleanly', () => {
      const order = suggestMergeOrder(aged('a', 'b', 'c'), { pairs: [pair('a', 'b', true), pair('a', 'c', true), pair('b', 'c', false)], base: [] });
      expect(order.map((s) => [s.session_id, s.clean, s.conflicts_with])).toEqual([
        ['b', true, []],
        ['c', true, []],
        ['a', false, ['b', 'c']],
      ]);
    });

    it('given a session that conflicts with its base as it is now, then it comes after the clean ones, with the paths', () => {
      const order = suggestMergeOrder(aged('a', 'b'), { pairs: [pair('a', 'b', false)], base: [{ session_id: 'a', base_branch: 'main', conflict: true, conflicting_paths: ['x.ts'] }] });
      expect(order).toEqual([
        { session_id: 'b', clean: true, conflicts_with: [], base_conflicts: [] },
        { session_id: 'a', clean: false, conflicts_with: [], base_conflicts: ['x.ts'] },
      ]);
    });

    it('given a chain a–b–c of conflicts, then a and c merge cleanly and b follows them', () => {
      const order = suggestMergeOrder(aged('a', 'b', 'c'), { pairs: [pair('a', 'b', true), pair('b', 'c', true), pair('a', 'c', false)], base: [] });
      expect(order.map((s) => `${s.session_id}:${s.clean}`)).toEqual(['a:true', 'c:true', 'b:false']);
    });
  });
});
