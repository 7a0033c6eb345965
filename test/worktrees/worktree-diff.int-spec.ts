import { GitCli, GitResult, GitRunOptions } from '../../src/worktrees/git-cli';
import { PatchLine } from '../../src/worktrees/git-parse';
import { diffWorktree } from '../../src/worktrees/worktree-diff.git';
import { GitRepo, gitRepo } from '../support/git-repo';

const hunk = (text: string): PatchLine => ({ kind: 'hunk', text, old_line: null, new_line: null });
const same = (text: string, old_line: number, new_line: number): PatchLine => ({ kind: 'same', text, old_line, new_line });
const add = (text: string, new_line: number): PatchLine => ({ kind: 'add', text, old_line: null, new_line });
const del = (text: string, old_line: number): PatchLine => ({ kind: 'del', text, old_line, new_line: null });

/** The real git CLI, noting each command it runs (its first arguments), to count the processes a diff takes. */
class CountedGit extends GitCli {
  readonly commands: string[] = [];

  override spawn(args: readonly string[], options: GitRunOptions): Promise<GitResult> {
    this.commands.push(args.slice(0, 2).join(' '));
    return super.spawn(args, options);
  }
}

/** Every file's whole patch, as git gives it for this repository (written out by hand, not read from the code). */
const PATCH: Record<string, { binary: boolean; lines: PatchLine[] }> = {
  'a.txt': { binary: false, lines: [hunk('@@ -1,3 +1,3 @@'), same('1', 1, 1), del('2', 2), add('two', 2), same('3', 3, 3)] },
  'bin.dat': { binary: true, lines: [] },
  'del.txt': { binary: false, lines: [hunk('@@ -1 +0,0 @@'), del('gone', 1)] },
  'keep.txt': { binary: false, lines: [hunk('@@ -1 +1,2 @@'), same('k', 1, 1), add('k2', 2)] },
  'ren-new.txt': { binary: false, lines: [hunk('@@ -6,3 +6,4 @@'), same('6', 6, 6), same('7', 7, 7), same('8', 8, 8), add('9', 9)] },
  'staged.txt': { binary: false, lines: [hunk('@@ -0,0 +1,2 @@'), add('s1', 1), add('s2', 2)] },
  'zz/untracked.txt': { binary: false, lines: [hunk('@@ -0,0 +1,3 @@'), add('u1', 1), add('u2', 2), add('u3', 3)] },
};

/** The part of `path`'s patch a page holds: lines [from, to). */
const part = (path: string, from: number, to: number) => {
  const p = PATCH[path];
  const lines = p.lines.slice(from, to);
  return { path, binary: p.binary, from_line: p.binary ? 0 : from, lines, complete: p.binary || from + lines.length >= p.lines.length };
};

/**
 * diffWorktree on a real repository holding every kind of change at once: committed (modified, renamed, deleted,
 * binary), staged, unstaged and untracked; its base moved on since. Pages are compared whole with what git's patches
 * are, written out here, so a faster diff has to answer exactly what the sequential one did.
 */
describe('a worktree diff read with the real git CLI', () => {
  let repo: GitRepo;
  let git: CountedGit;
  let base: string;
  let work: string;

  beforeAll(() => {
    repo = gitRepo({
      'a.txt': '1\n2\n3\n',
      'ren-old.txt': '1\n2\n3\n4\n5\n6\n7\n8\n',
      'del.txt': 'gone\n',
      'keep.txt': 'k\n',
      'other.txt': 'o\n',
    });
    repo.write('bin.dat', Buffer.from([0, 1, 2]));
    base = repo.commitAll('binary');
    repo.git('checkout', '-q', '-b', 'work');
    repo.write('a.txt', '1\ntwo\n3\n');
    repo.git('mv', 'ren-old.txt', 'ren-new.txt');
    repo.write('ren-new.txt', '1\n2\n3\n4\n5\n6\n7\n8\n9\n');
    repo.git('rm', '-q', 'del.txt');
    repo.write('bin.dat', Buffer.from([0, 1, 3]));
    work = repo.commitAll('work one');
    repo.git('checkout', '-q', 'main');
    repo.write('other.txt', 'o2\n');
    repo.commitAll('main moves');
    repo.git('checkout', '-q', 'work');
    repo.write('staged.txt', 's1\ns2\n');
    repo.git('add', 'staged.txt');
    repo.write('keep.txt', 'k\nk2\n');
    repo.write('zz/untracked.txt', 'u1\nu2\nu3\n');
  });
  afterAll(() => repo.remove());
  beforeEach(() => (git = new CountedGit(process.env)));

  const diff = (cursor: { file: number; line: number }, limit: number, file: string | null = null) =>
    diffWorktree(git, { path: repo.path, branch: 'work', base_ref: 'main', base_branch: 'main', base_sha: base, file, cursor, limit });

  const FILES = [
    { path: 'a.txt', old_path: null, change: 'modified', additions: 1, deletions: 1, binary: false, uncommitted: false },
    { path: 'bin.dat', old_path: null, change: 'modified', additions: null, deletions: null, binary: true, uncommitted: false },
    { path: 'del.txt', old_path: null, change: 'deleted', additions: 0, deletions: 1, binary: false, uncommitted: false },
    { path: 'keep.txt', old_path: null, change: 'modified', additions: 1, deletions: 0, binary: false, uncommitted: true },
    { path: 'ren-new.txt', old_path: 'ren-old.txt', change: 'renamed', additions: 1, deletions: 0, binary: false, uncommitted: false },
    { path: 'staged.txt', old_path: null, change: 'added', additions: 2, deletions: 0, binary: false, uncommitted: true },
    { path: 'zz/untracked.txt', old_path: null, change: 'added', additions: 3, deletions: 0, binary: false, uncommitted: true },
  ];

  it('given committed, staged, unstaged and untracked changes, then the whole diff lists each file once with its counts, and every patch in one page', async () => {
    const d = await diff({ file: 0, line: 0 }, 1000);
    expect(d).toEqual({
      branch: 'work',
      base_ref: 'main',
      base_branch: 'main',
      merge_base: base,
      head: work,
      ahead: 1,
      behind: 1,
      commits: [{ sha: work, subject: 'work one', author: 'Spec', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }],
      commits_total: 1,
      files: FILES,
      files_total: 7,
      patches: FILES.map((f) => part(f.path, 0, 1000)),
      next_cursor: null,
    });
    // The tracked files' patches in one git diff; the untracked file's alone (and once more, to count its lines).
    expect(git.commands.filter((c) => c.startsWith('diff '))).toEqual(['diff --no-ext-diff', 'diff --no-index', 'diff --no-color', 'diff --no-index']);
  });

  it('given pages of 10 lines, then a file is cut mid-way and goes on from the cursor in the next page, to the end', async () => {
    const first = await diff({ file: 0, line: 0 }, 10);
    expect(first.patches).toEqual([part('a.txt', 0, 5), part('bin.dat', 0, 0), part('del.txt', 0, 2), part('keep.txt', 0, 2)]);
    expect(first.next_cursor).toBe('3.2');
    const second = await diff({ file: 3, line: 2 }, 10);
    expect(second.patches).toEqual([part('keep.txt', 2, 3), part('ren-new.txt', 0, 5), part('staged.txt', 0, 3), part('zz/untracked.txt', 0, 1)]);
    expect(second.next_cursor).toBe('6.1');
    const third = await diff({ file: 6, line: 1 }, 10);
    expect(third.patches).toEqual([part('zz/untracked.txt', 1, 4)]);
    expect(third.next_cursor).toBeNull();
    expect(third.files).toEqual(FILES);
  });

  it('given a page that ends where a file does, then the next cursor is the next file from its start', async () => {
    const d = await diff({ file: 0, line: 0 }, 8);
    expect(d.patches).toEqual([part('a.txt', 0, 5), part('bin.dat', 0, 0), part('del.txt', 0, 2)]);
    expect(d.next_cursor).toBe('3.0');
  });

  it('given a file filter, then the page holds that file only (a renamed one with its whole patch), the list every file; an unchanged file has none', async () => {
    const renamed = await diff({ file: 0, line: 0 }, 1000, 'ren-new.txt');
    expect(renamed.patches).toEqual([part('ren-new.txt', 0, 5)]);
    expect(renamed.next_cursor).toBeNull();
    expect(renamed.files).toEqual(FILES);
    const cut = await diff({ file: 0, line: 2 }, 2, 'zz/untracked.txt');
    expect(cut.patches).toEqual([part('zz/untracked.txt', 2, 4)]);
    expect(cut.next_cursor).toBeNull();
    const unchanged = await diff({ file: 0, line: 0 }, 1000, 'other.txt');
    expect(unchanged.patches).toEqual([]);
    expect(unchanged.next_cursor).toBeNull();
  });
});

describe('a worktree diff whose page asked alone would pair files differently', () => {
  let repo: GitRepo;
  afterAll(() => repo.remove());

  it('given a deleted and an added file git would take for a rename asked together but not in the whole diff, then each patch is read alone, as listed', async () => {
    repo = gitRepo({ 'a1.txt': 'a\nb\nc\nd\n', 'z1.txt': 'w\nx\ny\nz\n' });
    const base = repo.git('rev-parse', 'HEAD').trim();
    // One candidate pair at most: the whole diff (two deleted, two added) looks for no renames; a1 and a2 alone would.
    repo.git('config', 'diff.renameLimit', '1');
    repo.git('checkout', '-q', '-b', 'work');
    repo.git('rm', '-q', 'a1.txt', 'z1.txt');
    repo.write('a2.txt', 'a\nb\nc\nD\n');
    repo.write('z2.txt', 'w\nx\ny\nZ\n');
    repo.commitAll('renamed, as git cannot tell');
    const git = new CountedGit(process.env);
    const d = await diffWorktree(git, { path: repo.path, branch: 'work', base_ref: 'main', base_branch: 'main', base_sha: base, file: null, cursor: { file: 0, line: 0 }, limit: 10 });
    expect(d.files.map((f) => [f.path, f.change, f.old_path])).toEqual([
      ['a1.txt', 'deleted', null],
      ['a2.txt', 'added', null],
      ['z1.txt', 'deleted', null],
      ['z2.txt', 'added', null],
    ]);
    expect(d.patches).toEqual([
      { path: 'a1.txt', binary: false, from_line: 0, lines: [hunk('@@ -1,4 +0,0 @@'), del('a', 1), del('b', 2), del('c', 3), del('d', 4)], complete: true },
      { path: 'a2.txt', binary: false, from_line: 0, lines: [hunk('@@ -0,0 +1,4 @@'), add('a', 1), add('b', 2), add('c', 3), add('D', 4)], complete: true },
    ]);
    expect(d.next_cursor).toBe('2.0');
    // Tried together (that diff pairs them as a rename), then each alone.
    expect(git.commands.filter((c) => c.startsWith('diff ')).sort()).toEqual(['diff --no-color', 'diff --no-color', 'diff --no-color', 'diff --no-ext-diff']);
  });
});

describe('a worktree diff of files whose names read as pathspecs', () => {
  let repo: GitRepo;
  afterAll(() => repo.remove());

  it('given files named "*" and ":(exclude)a.txt" beside a.txt, then each patch is its own file, whether read together or alone', async () => {
    // A worker names its files: as pathspecs, "*" would match every file and ":(exclude)a.txt" none of them.
    repo = gitRepo({ '*': 'star\n', ':(exclude)a.txt': 'ex\n', 'a.txt': 'a\n' });
    const base = repo.git('rev-parse', 'HEAD').trim();
    repo.git('checkout', '-q', '-b', 'work');
    repo.write('*', 'star2\n');
    repo.write(':(exclude)a.txt', 'ex2\n');
    repo.write('a.txt', 'a2\n');
    const ask = (file: string | null) =>
      diffWorktree(new GitCli(process.env), { path: repo.path, branch: 'work', base_ref: 'main', base_branch: 'main', base_sha: base, file, cursor: { file: 0, line: 0 }, limit: 100 });
    const expected = (path: string, was: string, now: string) => ({ path, binary: false, from_line: 0, lines: [hunk('@@ -1 +1 @@'), del(was, 1), add(now, 1)], complete: true });
    expect((await ask(null)).patches).toEqual([expected('*', 'star', 'star2'), expected(':(exclude)a.txt', 'ex', 'ex2'), expected('a.txt', 'a', 'a2')]);
    expect((await ask('*')).patches).toEqual([expected('*', 'star', 'star2')]);
    expect((await ask(':(exclude)a.txt')).patches).toEqual([expected(':(exclude)a.txt', 'ex', 'ex2')]);
  });
});
