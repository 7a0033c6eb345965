import { DomainError } from './domain-error';
import { DEFAULT_PAGE_LIMIT, decodeCursor, encodeCursor, pageOf } from './page';

const items = (...ns: number[]) => ns.map((n) => ({ n }));
const byN = (i: { n: number }) => i.n;

function pages(list: Array<{ n: number }>, order: 'ascending' | 'descending', limit: number): number[][] {
  const out: number[][] = [];
  let cursor: string | undefined;
  do {
    const page = pageOf(list, byN, 'things', order, { limit, cursor });
    out.push(page.items.map(byN));
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}

describe('paged lists', () => {
  it('given unsorted items, when paged with the cursors returned, then every item comes once, in order, and the last page says so', () => {
    const list = items(5, 1, 4, 2, 3);
    expect(pages(list, 'ascending', 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(pages(list, 'descending', 2)).toEqual([[5, 4], [3, 2], [1]]);
    expect(pageOf(list, byN, 'things', 'ascending', { limit: 5 }).next_cursor).toBeNull();
  });

  it('given the item a cursor names has left meanwhile and others came, then the next page starts right after it', () => {
    const first = pageOf(items(1, 2, 3, 4), byN, 'things', 'ascending', { limit: 2 });
    expect(first.items.map(byN)).toEqual([1, 2]);
    const next = pageOf(items(3, 4, 6), byN, 'things', 'ascending', { limit: 2, cursor: first.next_cursor ?? undefined });
    expect(next.items.map(byN)).toEqual([3, 4]);
  });

  it('without a limit, answers the default page size', () => {
    const many = items(...Array.from({ length: DEFAULT_PAGE_LIMIT + 1 }, (_, i) => i + 1));
    const page = pageOf(many, byN, 'things', 'ascending');
    expect(page.items).toHaveLength(DEFAULT_PAGE_LIMIT);
    expect(page.next_cursor).not.toBeNull();
  });

  it('round-trips a cursor, and refuses one from another list, one altered, or text that is no cursor, naming cursor', () => {
    expect(decodeCursor('things', encodeCursor('things', 42))).toBe(42);
    const refused = (cursor: string) => {
      try {
        decodeCursor('things', cursor);
      } catch (e) {
        return e instanceof DomainError && e.code === 'invalid_input' && e.message.startsWith('cursor: ');
      }
      return false;
    };
    expect(refused(encodeCursor('rounds', 42))).toBe(true);
    expect(refused(Buffer.from('things:-1').toString('base64url'))).toBe(true);
    expect(refused(Buffer.from('things:007').toString('base64url'))).toBe(true);
    expect(refused(Buffer.from('things:1e3').toString('base64url'))).toBe(true);
    expect(refused(`${encodeCursor('things', 42)}==`)).toBe(true);
    expect(refused('garbage')).toBe(true);
    expect(refused('')).toBe(true);
  });
});
