import { DomainError } from './domain-error';

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

export type PageOrder = 'ascending' | 'descending';

export interface PageRequest {
  limit?: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  /** Where the next page starts; null on the last page. */
  next_cursor: string | null;
}

/**
 * A cursor names its list and the ordinal of the last item it returned (a number that orders the list and is never
 * reused: an alias number, a journal seq). So a page starts right after that item even once the item has left memory.
 * Opaque to clients: base64url, so it travels in a query string unescaped.
 */
export function encodeCursor(list: string, ordinal: number): string {
  return Buffer.from(`${list}:${ordinal}`, 'utf8').toString('base64url');
}

const NOT_A_CURSOR = (list: string) => new DomainError('invalid_input', `cursor: not a cursor of this list (${list}); pass next_cursor as it was returned`);

export function decodeCursor(list: string, cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const prefix = `${list}:`;
  const digits = text.startsWith(prefix) ? text.slice(prefix.length) : '';
  // Buffer.from skips what is not base64url: only a cursor that re-encodes to itself is one we wrote.
  if (!/^\d{1,15}$/.test(digits) || encodeCursor(list, Number(digits)) !== cursor) throw NOT_A_CURSOR(list);
  return Number(digits);
}

/**
 * One page of `items` in the order of `ordinal`: at most `limit`, starting after the cursor's item. Items need not come
 * sorted. Items added while a client pages come later in ascending order (newer ordinals) and earlier in descending.
 */
export function pageOf<T>(items: Iterable<T>, ordinal: (item: T) => number, list: string, order: PageOrder, req: PageRequest = {}): Page<T> {
  const limit = req.limit ?? DEFAULT_PAGE_LIMIT;
  const after = req.cursor === undefined ? null : decodeCursor(list, req.cursor);
  const sign = order === 'ascending' ? 1 : -1;
  const keyed: Array<[number, T]> = [];
  for (const item of items) {
    const n = ordinal(item);
    if (after === null || (n - after) * sign > 0) keyed.push([n, item]);
  }
  keyed.sort((a, b) => (a[0] - b[0]) * sign);
  const taken = keyed.slice(0, limit);
  const more = keyed.length > limit;
  return { items: taken.map(([, item]) => item), next_cursor: more ? encodeCursor(list, taken[taken.length - 1][0]) : null };
}
