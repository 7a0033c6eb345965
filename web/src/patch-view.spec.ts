import { hunkRows, hunksOf, sharingWorkTree } from './patch-view';

describe("a session's patch as the page shows it", () => {
  const lines = [
    { kind: 'hunk' as const, text: '@@ -1,3 +1,3 @@', old_line: null, new_line: null },
    { kind: 'same' as const, text: 'one', old_line: 1, new_line: 1 },
    { kind: 'del' as const, text: 'two', old_line: 2, new_line: null },
    { kind: 'add' as const, text: 'TWO', old_line: null, new_line: 2 },
    { kind: 'hunk' as const, text: '@@ -9 +9,2 @@', old_line: null, new_line: null },
    { kind: 'add' as const, text: 'ten', old_line: null, new_line: 10 },
  ];

  it('given a patch, then its hunks with their headers and numbered lines', () => {
    const hunks = hunksOf(lines);
    expect(hunks.map((h) => [h.header, h.lines.map((l) => `${l.kind}:${l.text}:${l.oldLine}:${l.newLine}`)])).toEqual([
      ['@@ -1,3 +1,3 @@', ['same:one:1:1', 'del:two:2:null', 'add:TWO:null:2']],
      ['@@ -9 +9,2 @@', ['add:ten:null:10']],
    ]);
  });

  it('given a page that starts inside a hunk, then its first lines have no header', () => {
    expect(hunksOf(lines.slice(2))[0].header).toBeNull();
  });

  it('given a hunk, then side by side the removed line faces the one added in its place', () => {
    const rows = hunkRows(hunksOf(lines)[0]);
    expect(rows.map((r) => [r.left?.text ?? null, r.right?.text ?? null])).toEqual([
      ['one', 'one'],
      ['two', 'TWO'],
    ]);
  });

  it('names the other live sessions in the same work tree, none for an exited one or one outside git', () => {
    const all = [
      { id: 'a', alias: 'w1', state: 'working', work_tree: '/r' },
      { id: 'b', alias: 'w2', state: 'pending_handling', work_tree: '/r' },
      { id: 'c', alias: 'w3', state: 'exited', work_tree: '/r' },
      { id: 'd', alias: 'w4', state: 'working', work_tree: '/wt/w4' },
    ];
    expect(sharingWorkTree(all[0], all)).toEqual(['w2']);
    expect(sharingWorkTree(all[2], all)).toEqual([]);
    expect(sharingWorkTree(all[3], all)).toEqual([]);
    expect(sharingWorkTree({ id: 'e', state: 'working', work_tree: null }, all)).toEqual([]);
  });
});
