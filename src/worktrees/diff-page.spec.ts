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

  it("given a lookahead of 3 with each file's size, when a page is read, then the next files load while the first does, none the page cannot reach", async () => {
    const patches: Record<string, FilePatch> = { a: text(3, 'a'), b: text(5, 'b'), c: text(2, 'c'), d: text(4, 'd') };
    const sizes = (p: string) => patches[p].lines.length;
    const started: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const load = async (p: string) => {
      started.push(p);
      await gate;
      return patches[p];
    };
    const reading = collectPage(['a', 'b', 'c', 'd'], { file: 0, line: 0 }, 4, load, { concurrency: 3, minLines: sizes });
    await Promise.resolve();
    // a (3 lines) cannot fill 4: b is loaded with it; a and b (8) can, so c is not.
    expect(started).toEqual(['a', 'b']);
    release();
    const page = await reading;
    expect(page.patches.map((p) => [p.path, p.from_line, p.lines.length, p.complete])).toEqual([
      ['a', 0, 3, true],
      ['b', 0, 1, false],
    ]);
    expect(page.next_cursor).toBe('1.1');
    expect(started).toEqual(['a', 'b']);
  });

  it('given a lookahead whose sizes are too high or too low, then every page is the one read one file at a time', async () => {
    const patches: Record<string, FilePatch> = { a: text(3, 'a'), b: { binary: true, lines: [] }, c: text(5, 'c'), d: text(2, 'd'), e: text(1, 'e') };
    const paths = Object.keys(patches);
    const load = async (p: string) => patches[p];
    for (const minLines of [() => 1, () => 100, (p: string) => patches[p].lines.length]) {
      for (const [cursor, limit] of [
        [{ file: 0, line: 0 }, 4],
        [{ file: 2, line: 3 }, 3],
        [{ file: 0, line: 1 }, 1000],
        [{ file: 4, line: 0 }, 1],
      ] as const) {
        const oneByOne = await collectPage(paths, cursor, limit, load);
        expect(await collectPage(paths, cursor, limit, load, { concurrency: 4, minLines })).toEqual(oneByOne);
      }
    }
  });

  it('given a file loaded ahead that fails, then the page fails only if it reaches that file', async () => {
    const patches: Record<string, FilePatch> = { a: text(3, 'a'), b: text(3, 'b') };
    const load = async (p: string) => {
      if (p === 'b') throw new Error('b is gone');
      return patches[p];
    };
    const lookahead = { concurrency: 2, minLines: () => 1 };
    expect((await collectPage(['a', 'b'], { file: 0, line: 0 }, 3, load, lookahead)).next_cursor).toBe('1.0');
    await expect(collectPage(['a', 'b'], { file: 0, line: 0 }, 4, load, lookahead)).rejects.toThrow('b is gone');
  });
});
