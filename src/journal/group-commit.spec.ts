import { EventJournal } from './event-journal';
import { CommitBatch } from './journal.storage';
import { MemoryStorage } from './memory.storage';

/** Counts storage commits (each one an fsync on a durable storage). */
class CountingStorage extends MemoryStorage {
  batches: number[] = [];
  override async commit(batch: CommitBatch): Promise<void> {
    this.batches.push(batch.events.length);
    await new Promise((r) => setImmediate(r));
    return super.commit(batch);
  }
}

/** A counting storage whose commits would be synced writes: the journal gathers appends for them. */
class SyncedCountingStorage extends CountingStorage {
  readonly syncedCommits = true;
}

/** Stores a group at once, and acknowledges it only when the gate opens. */
class GatedStorage extends MemoryStorage {
  gate: Promise<void> | null = null;
  override async commit(batch: CommitBatch): Promise<void> {
    await super.commit(batch);
    if (this.gate) await this.gate;
  }
}

describe('group commit', () => {
  it('given 64 concurrent appenders, when they append at once, then one batch carries them all', async () => {
    const storage = new CountingStorage();
    const journal = await EventJournal.open(storage);
    await Promise.all(Array.from({ length: 64 }, (_, i) => journal.append(`s${i}`, [{ type: 't.e' }])));
    expect(storage.batches).toEqual([64]);
    await journal.close();
  });

  it('given a storage with synced commits, when appends come in the same pass of the event loop as the first (requests read together), then one batch carries them all; without synced commits the first goes alone', async () => {
    const batchesOf = async (storage: CountingStorage) => {
      const journal = await EventJournal.open(storage);
      const first = journal.append('a', [{ type: 't.e' }]);
      const rest = new Promise<unknown>((resolve) => setImmediate(() => resolve(Promise.all(Array.from({ length: 5 }, () => journal.append('b', [{ type: 't.e' }]))))));
      await Promise.all([first, rest]);
      await journal.close();
      return storage.batches;
    };
    expect(await batchesOf(new SyncedCountingStorage())).toEqual([6]);
    expect(await batchesOf(new CountingStorage())).toEqual([1, 5]);
  });

  it('given a batch in flight, appends arriving meanwhile share the next one', async () => {
    const storage = new CountingStorage();
    const journal = await EventJournal.open(storage);
    const first = journal.append('a', [{ type: 't.e' }]);
    await new Promise((r) => setImmediate(r));
    const rest = Array.from({ length: 10 }, () => journal.append('b', [{ type: 't.e' }]));
    await Promise.all([first, ...rest]);
    expect(storage.batches).toEqual([1, 10]);
    expect(journal.head().seq).toBe(11);
    await journal.close();
  });

  it('given a conflicting append inside a group, only that append fails', async () => {
    const storage = new CountingStorage();
    const journal = await EventJournal.open(storage);
    const results = await Promise.allSettled([
      journal.append('x', [{ type: 't.e' }], { expectedVersion: 'no_stream' }),
      journal.append('x', [{ type: 't.e' }], { expectedVersion: 'no_stream' }),
      journal.append('y', [{ type: 't.e' }]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(storage.batches).toEqual([2]);
    await journal.close();
  });

  it('given a group stored but not yet acknowledged, when verify runs, then it verifies up to the acknowledged head and finds nothing wrong', async () => {
    const storage = new GatedStorage();
    const journal = await EventJournal.open(storage);
    await journal.append('a', [{ type: 't.e' }]);
    let open!: () => void;
    storage.gate = new Promise((resolve) => (open = resolve));
    const pending = journal.append('a', [{ type: 't.e' }, { type: 't.e' }]);
    await new Promise((r) => setImmediate(r));
    expect(await storage.lastSeq()).toBe(3);
    expect(await journal.verify()).toMatchObject({ ok: true, head_seq: 1, checked: 1 });
    open();
    await pending;
    expect(await journal.verify()).toMatchObject({ ok: true, head_seq: 3, checked: 3 });
    await journal.close();
  });
});
