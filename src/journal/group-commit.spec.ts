import { EventJournal } from './event-journal';
import { AppendResult } from './journal.port';
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

/** Holds each write until it is let go, failing it if told to; counts the writes it was given. */
class HeldStorage extends MemoryStorage {
  readonly syncedCommits = true;
  batches: number[] = [];
  private held: Array<() => void> = [];
  failNext = false;
  override async commit(batch: CommitBatch): Promise<void> {
    this.batches.push(batch.events.length);
    const fail = this.failNext;
    this.failNext = false;
    await new Promise<void>((resolve) => this.held.push(resolve));
    if (fail) throw new Error('disk full');
    return super.commit(batch);
  }
  /** Lets the oldest write finish, once it has been given. */
  async release(): Promise<void> {
    await passesUntil(() => this.held.length > 0);
    (this.held.shift() as () => void)();
  }
  /** Waits for the journal to have given it `n` writes in all. */
  given(n: number): Promise<void> {
    return passesUntil(() => this.batches.length >= n);
  }
}

/** Lets the event loop turn until the condition holds (a few passes: nothing here waits on a clock). */
async function passesUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setImmediate(r));
  if (!condition()) throw new Error('not reached within 100 passes of the event loop');
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

  it('given a storage with synced commits, when 64 appends are already queued, then the group is taken without gathering for another pass; with 63 it gathers', async () => {
    const batchesOf = async (queued: number) => {
      const storage = new SyncedCountingStorage();
      const journal = await EventJournal.open(storage);
      const late = new Promise<unknown>((resolve) => setImmediate(() => resolve(journal.append('late', [{ type: 't.e' }]))));
      await Promise.all([late, ...Array.from({ length: queued }, (_, i) => journal.append(`s${i}`, [{ type: 't.e' }]))]);
      await journal.close();
      return storage.batches;
    };
    expect(await batchesOf(64)).toEqual([64, 1]);
    expect(await batchesOf(63)).toEqual([64]);
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

  describe('appends arriving while a group is written', () => {
    it('given a group being written, when appends arrive meanwhile, then they are written as the next group the moment it is durable, before its appenders are answered, in order, and the chain verifies', async () => {
      const storage = new HeldStorage();
      const journal = await EventJournal.open(storage);
      // Streams whose versions the journal knows (a stream it must look up waits for a group taken afresh).
      await Promise.all([journal.append('a', [{ type: 't.e', data: { i: -1 } }]), ...['s0', 's1', 's2'].map((s) => journal.append(s, [{ type: 't.start' }])), storage.release()]);
      storage.batches = [];
      const first = journal.append('a', [{ type: 't.e', data: { i: 0 } }]);
      await storage.given(1);
      const rest = Array.from({ length: 10 }, (_, i) => journal.append(`s${i % 3}`, [{ type: 't.e', data: { i: i + 1 } }]));
      await new Promise((r) => setImmediate(r));
      // Only one write at a time: the next waits for the first to be durable.
      expect(storage.batches).toEqual([1]);
      let writtenWhenAnswered: number[] = [];
      const answered = first.then((r) => {
        writtenWhenAnswered = [...storage.batches];
        return r;
      });
      await storage.release();
      expect((await answered).events[0].seq).toBe(5);
      expect(writtenWhenAnswered).toEqual([1, 10]);
      await storage.release();
      const results = await Promise.all(rest);
      expect(results.map((r) => r.events[0].seq)).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
      expect(results.map((r) => r.version)).toEqual([2, 2, 2, 3, 3, 3, 4, 4, 4, 5]);
      const stored = await journal.readAll(4, 100);
      expect(stored.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(stored.slice(1)).toEqual(results.map((r) => r.events[0]));
      expect(await journal.verify()).toMatchObject({ ok: true, head_seq: 15, checked: 15 });
      await journal.close();
    });

    it('given appends with expected versions arriving while a group is written, then each is checked against the versions that group leaves', async () => {
      const storage = new HeldStorage();
      const journal = await EventJournal.open(storage);
      await Promise.all([journal.append('y', [{ type: 't.e' }]), storage.release()]);
      const first = journal.append('x', [{ type: 't.e' }], { expectedVersion: 'no_stream' });
      await storage.given(2);
      const outcomes = Promise.allSettled([
        first,
        journal.append('x', [{ type: 't.e' }], { expectedVersion: 1 }),
        journal.append('x', [{ type: 't.e' }], { expectedVersion: 'no_stream' }),
        journal.append('y', [{ type: 't.e' }], { expectedVersion: 1 }),
      ]);
      await new Promise((r) => setImmediate(r));
      await storage.release();
      await storage.release();
      const settled = await outcomes;
      expect(settled.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect((settled[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'journal_conflict', actual: 2 });
      expect(storage.batches).toEqual([1, 1, 2]);
      expect(await journal.verify()).toMatchObject({ ok: true, head_seq: 4 });
      await journal.close();
    });

    it('given the group being written fails, then the appends chained after it meanwhile are chained again after the head, their expected versions checked again, and written', async () => {
      const storage = new HeldStorage();
      const journal = await EventJournal.open(storage);
      await Promise.all([journal.append('x', [{ type: 't.e' }]), storage.release()]);
      storage.failNext = true;
      const failing = journal.append('x', [{ type: 't.e', data: { n: 'lost' } }], { expectedVersion: 1 });
      await storage.given(2);
      // Chained after the failing group, each would be decided the other way.
      const settled = Promise.allSettled([
        journal.append('x', [{ type: 't.e', data: { n: 'after' } }], { expectedVersion: 2 }),
        journal.append('x', [{ type: 't.e', data: { n: 'in place' } }], { expectedVersion: 1 }),
      ]);
      await new Promise((r) => setImmediate(r));
      await storage.release();
      await expect(failing).rejects.toThrow('disk full');
      await storage.release();
      const outcomes = await settled;
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
      expect((outcomes[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'journal_conflict', actual: 1 });
      expect((outcomes[1] as PromiseFulfilledResult<AppendResult>).value.events[0]).toMatchObject({ seq: 2, version: 2, data: { n: 'in place' } });
      expect(storage.batches).toEqual([1, 1, 1]);
      expect((await journal.readStream('x')).map((e) => e.data)).toEqual([null, { n: 'in place' }]);
      expect(await journal.verify()).toMatchObject({ ok: true, head_seq: 2, checked: 2 });
      await journal.close();
    });
  });
});
