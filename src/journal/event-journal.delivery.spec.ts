import { EventJournal } from './event-journal';
import { JournalEvent } from './journal.port';
import { MemoryStorage } from './memory.storage';

describe('what an appender and the subscribers are handed', () => {
  it('is the data as stored and as replay reads it, not the caller object changed after append()', async () => {
    // Given a journal, a subscriber, and data with what JSON does not keep as it is (undefined, a Date, -0, key order)
    const journal = await EventJournal.open(new MemoryStorage());
    const published: JournalEvent[] = [];
    journal.committed$.subscribe((e) => published.push(e));
    const data: Record<string, unknown> = { z: 1, a: { list: [1, 'two'], gone: undefined }, at: new Date(0), zero: -0 };
    let applied: unknown;
    // When the caller changes its object after append() returned, while the group is not written yet
    const written = journal.append('stream-a', [{ type: 'thing.happened', data }], { apply: (r) => (applied = r.events[0].data) });
    (data.a as { list: unknown[] }).list.push('three');
    data.z = 2;
    await written;
    // Then the apply step and the subscriber got what replay reads: the data as it was when appended, canonical
    const [stored] = await journal.readAll();
    const asStored = { a: { list: [1, 'two'] }, at: '1970-01-01T00:00:00.000Z', z: 1, zero: 0 };
    expect(stored.data).toEqual(asStored);
    expect(applied).toEqual(stored.data);
    expect(published[0].data).toEqual(stored.data);
    expect(Object.keys(applied as object)).toEqual(['a', 'at', 'z', 'zero']);
    expect(Object.is((applied as { zero: number }).zero, 0)).toBe(true);
    // And not the caller's object, which the caller may change again
    expect(applied).not.toBe(data);
    await journal.close();
  });
});
