import { DiffLine, MAX_EDITS, lineDiff, sideBySide, splitLines } from './line-diff';

const render = (lines: DiffLine[]): string[] => lines.map((l) => `${l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}${l.text}`);
const diff = (before: string | null, after: string, maxEdits?: number): string[] => render(lineDiff(before, after, maxEdits));

describe('lineDiff', () => {
  it('Given no file yet, When diffed, Then every new line is added', () => {
    expect(diff(null, 'a\nb\n')).toEqual(['+a', '+b']);
  });

  it('Given equal texts, When diffed, Then every line is the same', () => {
    expect(diff('a\nb\n', 'a\nb\n')).toEqual([' a', ' b']);
  });

  it('Given texts that differ only by the final newline, When diffed, Then every line is the same', () => {
    expect(diff('a\nb', 'a\nb\n')).toEqual([' a', ' b']);
  });

  it('Given a changed line between kept ones, When diffed, Then the old line is removed and the new one added in place', () => {
    expect(diff('{\n  "model": "opus"\n}\n', '{\n  "model": "sonnet",\n  "x": 1\n}\n')).toEqual(['{', '-  "model": "opus"', '+  "model": "sonnet",', '+  "x": 1', '}'].map((l) => (l.startsWith('-') || l.startsWith('+') ? l : ` ${l}`)));
  });

  it('Given lines moved apart, When diffed, Then the common subsequence is kept and only the rest changes', () => {
    expect(diff('a\nb\nc\nd\n', 'a\nc\nx\nd\n')).toEqual([' a', '-b', ' c', '+x', ' d']);
  });

  it('Given a file emptied, When diffed, Then every line is removed', () => {
    expect(diff('a\nb', '')).toEqual(['-a', '-b']);
  });

  it('Given kept, removed and added lines, When diffed, Then each carries its line number before and after', () => {
    expect(lineDiff('a\nb\nc\n', 'a\nx\ny\nc\n').map((l) => [l.kind, l.oldLine, l.newLine])).toEqual([
      ['same', 1, 1],
      ['del', 2, null],
      ['add', null, 2],
      ['add', null, 3],
      ['same', 3, 4],
    ]);
  });

  it('Given middles that differ by more edits than the bound, When diffed, Then the middle is all removed then all added, and the shared ends are kept', () => {
    // Within the bound this is a fine diff (every other line kept); past it, coarse.
    expect(diff('head\na\n1\nb\n2\ntail', 'head\nx\n1\ny\n2\ntail')).toEqual([' head', '-a', '+x', ' 1', '-b', '+y', ' 2', ' tail']);
    expect(diff('head\na\n1\nb\n2\ntail', 'head\nx\n1\ny\n2\ntail', 3)).toEqual([' head', '-a', '-1', '-b', '+x', '+1', '+y', ' 2', ' tail']);
  });

  it('Given large texts rewritten whole, When diffed with the default bound, Then the answer comes coarse, numbered to the end', () => {
    const n = MAX_EDITS;
    const before = ['head', ...Array.from({ length: n }, (_, i) => `old ${i}`), 'tail'].join('\n');
    const after = ['head', ...Array.from({ length: n }, (_, i) => `new ${i}`), 'tail'].join('\n');
    const lines = lineDiff(before, after);
    expect(lines).toHaveLength(2 + 2 * n);
    expect(lines[0]).toEqual({ kind: 'same', text: 'head', oldLine: 1, newLine: 1 });
    expect(lines[1]).toEqual({ kind: 'del', text: 'old 0', oldLine: 2, newLine: null });
    expect(lines[n + 1]).toEqual({ kind: 'add', text: 'new 0', oldLine: null, newLine: 2 });
    expect(lines[lines.length - 1]).toEqual({ kind: 'same', text: 'tail', oldLine: n + 2, newLine: n + 2 });
  });
});

describe('sideBySide', () => {
  it('Given a diff, When laid side by side, Then kept lines face themselves and removed lines face the lines added in their place', () => {
    const rows = sideBySide(lineDiff('a\nb\nc\nd\n', 'a\nx\ny\nd\ne\n'));
    expect(rows.map((r) => [r.left ? `${r.left.oldLine} ${r.left.text}` : null, r.right ? `${r.right.newLine} ${r.right.text}` : null])).toEqual([
      ['1 a', '1 a'],
      ['2 b', '2 x'],
      ['3 c', '3 y'],
      ['4 d', '4 d'],
      [null, '5 e'],
    ]);
  });

  it('Given more lines removed than added, When laid side by side, Then the extra removed lines face nothing', () => {
    const rows = sideBySide(lineDiff('a\nb\nc\n', 'x\n'));
    expect(rows.map((r) => [r.left?.text ?? null, r.right?.text ?? null])).toEqual([
      ['a', 'x'],
      ['b', null],
      ['c', null],
    ]);
  });
});

describe('splitLines', () => {
  it('Given a final newline or none, When split, Then both give the same lines', () => {
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\nb')).toEqual(['a', 'b']);
    expect(splitLines('')).toEqual([]);
  });
});
