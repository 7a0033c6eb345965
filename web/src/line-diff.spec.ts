import { lineDiff, splitLines } from './line-diff';

const render = (text: string | null, next: string): string[] => lineDiff(text, next).map((l) => `${l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}${l.text}`);

describe('lineDiff', () => {
  it('Given no file yet, When diffed, Then every new line is added', () => {
    expect(render(null, 'a\nb\n')).toEqual(['+a', '+b']);
  });

  it('Given equal texts, When diffed, Then every line is the same', () => {
    expect(render('a\nb\n', 'a\nb\n')).toEqual([' a', ' b']);
  });

  it('Given a changed line between kept ones, When diffed, Then the old line is removed and the new one added in place', () => {
    expect(render('{\n  "model": "opus"\n}\n', '{\n  "model": "sonnet",\n  "x": 1\n}\n')).toEqual(['{', '-  "model": "opus"', '+  "model": "sonnet",', '+  "x": 1', '}'].map((l) => (l.startsWith('-') || l.startsWith('+') ? l : ` ${l}`)));
  });

  it('Given lines moved apart, When diffed, Then the common subsequence is kept and only the rest changes', () => {
    expect(render('a\nb\nc\nd\n', 'a\nc\nx\nd\n')).toEqual([' a', '-b', ' c', '+x', ' d']);
  });

  it('Given a file emptied, When diffed, Then every line is removed', () => {
    expect(render('a\nb', '')).toEqual(['-a', '-b']);
  });

  it('Given texts too large for the table, When diffed, Then the middle is all removed then all added, and the ends are kept', () => {
    const before = ['head', ...Array.from({ length: 2100 }, (_, i) => `old ${i}`), 'tail'].join('\n');
    const after = ['head', ...Array.from({ length: 2100 }, (_, i) => `new ${i}`), 'tail'].join('\n');
    const diff = lineDiff(before, after);
    expect(diff[0]).toEqual({ kind: 'same', text: 'head' });
    expect(diff[1]).toEqual({ kind: 'del', text: 'old 0' });
    expect(diff[2101]).toEqual({ kind: 'add', text: 'new 0' });
    expect(diff[diff.length - 1]).toEqual({ kind: 'same', text: 'tail' });
    expect(diff).toHaveLength(2 + 2 * 2100);
  });
});

describe('splitLines', () => {
  it('Given a final newline or none, When split, Then both give the same lines', () => {
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\nb')).toEqual(['a', 'b']);
    expect(splitLines('')).toEqual([]);
  });
});
