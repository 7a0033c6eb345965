import { LOG_FORMAT, parseDiffRawNumstat, parseRawPatches, parseLeftRight, parseLog, parseMergeTree, parsePatch, parseStatus, parseWorktreeList } from './git-parse';

describe("git's outputs, read", () => {
  it('given worktree list --porcelain -z, then each worktree with its head and branch; the detached and the gone ones marked', () => {
    const z = 'worktree /src/app\0HEAD aaa\0branch refs/heads/main\0\0worktree /wt/w1-x\0HEAD bbb\0branch refs/heads/brainstem/w1-x\0\0worktree /wt/gone\0HEAD ccc\0detached\0prunable gitdir file points to non-existent location\0\0';
    expect(parseWorktreeList(z)).toEqual([
      { path: '/src/app', head: 'aaa', branch: 'main', bare: false, prunable: false },
      { path: '/wt/w1-x', head: 'bbb', branch: 'brainstem/w1-x', bare: false, prunable: false },
      { path: '/wt/gone', head: 'ccc', branch: null, bare: false, prunable: true },
    ]);
  });

  it('given status --porcelain -z with a rename (new path, then old), then each entry has its letters and origin', () => {
    expect(parseStatus(' M f\0R  h\0g\0?? new file\0')).toEqual([
      { path: 'f', from: null, index: ' ', worktree: 'M' },
      { path: 'h', from: 'g', index: 'R', worktree: ' ' },
      { path: 'new file', from: null, index: '?', worktree: '?' },
    ]);
  });

  it('given raw and numstat of one diff, then files sorted by path with counts; a binary file has none; a rename names its origin', () => {
    const raw =
      ':100644 100644 1111111 0000000 M\0src/a.ts\0' +
      ':100644 100644 2222222 3333333 R086\0old.txt\0new.txt\0' +
      ':000000 100644 0000000 4444444 A\0logo.png\0' +
      ':100644 000000 5555555 0000000 D\0gone\0';
    const numstat = '3\t1\tsrc/a.ts\0' + '2\t2\t\0old.txt\0new.txt\0' + '-\t-\tlogo.png\0' + '0\t4\tgone\0';
    expect(parseDiffRawNumstat(raw + numstat)).toEqual([
      { path: 'gone', old_path: null, change: 'deleted', additions: 0, deletions: 4, binary: false },
      { path: 'logo.png', old_path: null, change: 'added', additions: null, deletions: null, binary: true },
      { path: 'new.txt', old_path: 'old.txt', change: 'renamed', additions: 2, deletions: 2, binary: false },
      { path: 'src/a.ts', old_path: null, change: 'modified', additions: 3, deletions: 1, binary: false },
    ]);
  });

  it('given paths that look like records (a colon first, a tab, digits) and a type change, then each is read as the path it is', () => {
    const raw = ':100644 100644 1111111 2222222 M\0:x\0' + ':100644 120000 3333333 4444444 T\0a\tb\0' + ':100644 100644 5555555 6666666 R100\0' + '1\t2\t\0:y\0';
    const numstat = '1\t0\t:x\0' + '1\t1\ta\tb\0' + '0\t0\t\0' + '1\t2\t\0:y\0';
    expect(parseDiffRawNumstat(raw + numstat)).toEqual([
      { path: ':x', old_path: null, change: 'modified', additions: 1, deletions: 0, binary: false },
      { path: ':y', old_path: '1\t2\t', change: 'renamed', additions: 0, deletions: 0, binary: false },
      { path: 'a\tb', old_path: null, change: 'type_changed', additions: 1, deletions: 1, binary: false },
    ]);
  });

  it('given raw records and patches of one diff, then each pair, and each patch from its diff --git line; a line of a hunk that reads like one does not split', () => {
    const raw = ':100644 100644 1111111 2222222 M\0bin.dat\0' + ':100644 100644 3333333 4444444 R087\0old.txt\0new.txt\0' + ':100644 100644 5555555 6666666 M\0a.txt\0';
    const bin = 'diff --git a/bin.dat b/bin.dat\nindex 1111111..2222222 100644\nBinary files a/bin.dat and b/bin.dat differ\n';
    const renamed = 'diff --git a/old.txt b/new.txt\nsimilarity index 87%\nrename from old.txt\nrename to new.txt\n--- a/old.txt\n+++ b/new.txt\n@@ -1 +1,2 @@\n x\n+diff --git a/x b/x\n';
    const text = 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-1\n+2\n\\ No newline at end of file\n';
    expect(parseRawPatches(raw + '\0' + bin + renamed + text)).toEqual({
      pairs: [
        { path: 'bin.dat', old_path: null },
        { path: 'new.txt', old_path: 'old.txt' },
        { path: 'a.txt', old_path: null },
      ],
      patches: [bin, renamed, text],
    });
    expect(parseRawPatches('')).toEqual({ pairs: [], patches: [] });
  });

  it("given one file's patch, then its hunks' lines numbered before and after, headers and no-newline notes left out", () => {
    const patch = [
      'diff --git a/f b/f',
      'index 1..2 100644',
      '--- a/f',
      '+++ b/f',
      '@@ -1,3 +1,3 @@ top',
      ' one',
      '-two',
      '+TWO',
      ' three',
      '\\ No newline at end of file',
      '@@ -10 +10,2 @@',
      ' ten',
      '+eleven',
      '',
    ].join('\n');
    expect(parsePatch(patch)).toEqual({
      binary: false,
      lines: [
        { kind: 'hunk', text: '@@ -1,3 +1,3 @@ top', old_line: null, new_line: null },
        { kind: 'same', text: 'one', old_line: 1, new_line: 1 },
        { kind: 'del', text: 'two', old_line: 2, new_line: null },
        { kind: 'add', text: 'TWO', old_line: null, new_line: 2 },
        { kind: 'same', text: 'three', old_line: 3, new_line: 3 },
        { kind: 'hunk', text: '@@ -10 +10,2 @@', old_line: null, new_line: null },
        { kind: 'same', text: 'ten', old_line: 10, new_line: 10 },
        { kind: 'add', text: 'eleven', old_line: null, new_line: 11 },
      ],
    });
  });

  it('given a binary file\'s patch, then it is named binary, with no lines', () => {
    expect(parsePatch('diff --git a/b b/b\nnew file mode 100644\nindex 0..1\nBinary files /dev/null and b/b differ\n')).toEqual({ binary: true, lines: [] });
  });

  it('given a clean merge-tree, then its tree; given conflicts, then each path once, classified by its CONFLICT message', () => {
    expect(parseMergeTree('abc\0', 0)).toEqual({ clean: true, tree: 'abc' });
    const z =
      'def\0f\0g\0\0' +
      '1\0f\0Auto-merging\0Auto-merging f\n\0' +
      '1\0f\0CONFLICT (contents)\0CONFLICT (content): Merge conflict in f\n\0' +
      '1\0g\0CONFLICT (modify/delete)\0CONFLICT (modify/delete): g deleted in a and modified in b.\n\0';
    expect(parseMergeTree(z, 1)).toEqual({
      clean: false,
      tree: 'def',
      conflicts: [
        { path: 'f', kind: 'content' },
        { path: 'g', kind: 'modify_delete' },
      ],
    });
  });

  it('given log output in LOG_FORMAT, then each commit; given a left-right count, then behind and ahead', () => {
    expect(LOG_FORMAT).toContain('%x1e');
    expect(parseLog('a1\x1ffix: it\x1fAnn\x1f2026-01-02T03:04:05+00:00\x1e\nb2\x1fsecond\x1fBob\x1f2026-01-03T00:00:00+00:00\x1e\n')).toEqual([
      { sha: 'a1', subject: 'fix: it', author: 'Ann', at: '2026-01-02T03:04:05+00:00' },
      { sha: 'b2', subject: 'second', author: 'Bob', at: '2026-01-03T00:00:00+00:00' },
    ]);
    expect(parseLeftRight('2\t5\n')).toEqual({ behind: 2, ahead: 5 });
  });
});
