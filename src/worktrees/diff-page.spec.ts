import { FilePatch, PatchLine } from './git-parse';
import { MAX_LINE_CHARS, collectPage, decodeCursor, encodeCursor, patchSlice } from './diff-page';

const lines = (n: number, prefix = 'l'): PatchLine[] => Array.from({ length: n }, (_, i) => ({ kind: 'add', text: `${prefix}${i}`, old_line: null, new_line: i + 1 }));
const text = (n: number, prefix: string): FilePatch => ({ binary: false, lines: lines(n, prefix) });

describe('diff pages', () => {
  it('given a cursor, when encoded and read back, then it is the same; anything else is no cursor', () => {
    expect(decodeCursor(encodeCursor({ file: 3, line: 120 }))).toEqual({ file: 3, line: 120 });
    expect(decodeCursor('3')).toBeNull();
    expect(decodeCursor('-1.0')).toBeNull();
    expect(decodeCursor('1.2.3')).toBeNull();
  });

  it('given a binary file, then its slice names it with no lines', () => {
    expect(patchSlice('logo.png', { binary: true, lines: [] }, 0, 10)).toEqual({ page: { path: 'logo.png', binary: true, from_line: 0, lines: [], complete: true }, used: 1 });
  });

  it('given a line longer than the limit, then it is cut and marked', () => {
    const long: FilePatch = { binary: false, lines: [{ kind: 'add', text: 'x'.repeat(MAX_LINE_CHARS + 5), old_line: null, new_line: 1 }] };
    const { page } = patchSlice('f', long, 0, 10);
    expect(page.lines[0].text).toHaveLength(MAX_LINE_CHARS);
    expect(page.lines[0].cut).toBe(true);
  });

  it('given files of 3, 5 and 2 lines and pages of 4 lines, when paged to the end, then every line comes once, in order, and files cut mid-way go on', async () => {
    const patches: Record<string, FilePatch> = { a: text(3, 'a'), b: text(5, 'b'), c: text(2, 'c') };
    const loaded: string[] = [];
    const load = async (p: string) => {
      loaded.push(p);
      return patches[p];
    };
    const seen: string[] = [];
    const pages: Array<Array<[string, number, boolean]>> = [];
    let cursor: string | null = '0.0';
    while (cursor !== null) {
      const page = await collectPage(['a', 'b', 'c'], decodeCursor(cursor) ?? { file: 0, line: 0 }, 4, load);
      pages.push(page.patches.map((p) => [p.path, p.from_line, p.complete]));
      for (const p of page.patches) seen.push(...p.lines.map((l) => l.text));
      cursor = page.next_cursor;
    }
    expect(seen).toEqual([...lines(3, 'a'), ...lines(5, 'b'), ...lines(2, 'c')].map((l) => l.text));
    expect(pages).toEqual([
      [
        ['a', 0, true],
        ['b', 0, false],
      ],
      [['b', 1, true]],
      [['c', 0, true]],
    ]);
    // Files past the page's budget are not loaded for it.
    expect(loaded).toEqual(['a', 'b', 'b', 'c']);
  });
});
