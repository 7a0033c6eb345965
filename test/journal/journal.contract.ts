import { firstValueFrom, take, toArray } from 'rxjs';
import { GENESIS_HASH, chainHash } from '../../src/journal/canonical-json';
import { EventJournal, VERSION_CACHE_STREAMS } from '../../src/journal/event-journal';
import { JournalConflictError, JournalError, JournalEvent } from '../../src/journal/journal.port';

export interface JournalHarness {
  /** Opens (or reopens) the same underlying store. */
  open(options?: { now?: () => number; checkpointEvery?: number }): Promise<EventJournal>;
  cleanup(): Promise<void>;
}

const ev = (type: string, data: unknown = {}) => ({ type, data });

/** The contract every journal adapter passes. */
export function journalContract(name: string, makeHarness: () => Promise<JournalHarness>): void {
  describe(`journal contract: ${name}`, () => {
    let harness: JournalHarness;
    let journal: EventJournal;
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    const now = () => clock;

    beforeEach(async () => {
      harness = await makeHarness();
      journal = await harness.open({ now, checkpointEvery: 50 });
    });
    afterEach(async () => {
      await journal.close();
      await harness.cleanup();
    });

    describe('given an empty journal', () => {
      it('has the genesis head and reads nothing', async () => {
        expect(journal.head()).toEqual({ seq: 0, hash: GENESIS_HASH });
        expect(await journal.readAll()).toEqual([]);
        expect(await journal.readStream('nobody')).toEqual([]);
        expect(await journal.streamVersion('nobody')).toBe(0);
        expect(await journal.loadSnapshot('nobody')).toBeNull();
        expect(await journal.verify()).toEqual({ ok: true, head_seq: 0, head_hash: GENESIS_HASH, checked: 0 });
      });
    });

    describe('when events are appended', () => {
      it('stores the envelope with gapless seq, per-stream version and a hash chain', async () => {
        await journal.append('a', [ev('x.one', { n: 1 })], { expectedVersion: 'no_stream' });
        clock += 1000;
        const { version, events } = await journal.append('b', [ev('x.two', { z: 1, a: [1, 'two'] }), { type: 'x.three' }], {
          expectedVersion: 'no_stream',
        });
        expect(version).toBe(2);
        const all = await journal.readAll();
        expect(all.map((e) => [e.seq, e.stream, e.version, e.type])).toEqual([
          [1, 'a', 1, 'x.one'],
          [2, 'b', 1, 'x.two'],
          [3, 'b', 2, 'x.three'],
        ]);
        expect(all.slice(1)).toEqual(events);
        expect(all[0]).toMatchObject({
          at: '2026-01-01T00:00:00.000Z',
          data: { n: 1 },
          meta: { actor: 'system', correlation_id: null, causation_seq: null },
        });
        expect(all[2].data).toBeNull();
        let prev = GENESIS_HASH;
        for (const e of all) {
          const { hash, ...rest } = e;
          expect(hash).toBe(chainHash(prev, canonical(rest)));
          prev = hash;
        }
        expect(journal.head()).toEqual({ seq: 3, hash: prev });
      });

      it('reads ranges and honours limits', async () => {
        for (let i = 0; i < 10; i++) await journal.append(i % 2 ? 'odd' : 'even', [ev('n.added', { i })]);
        expect((await journal.readAll(0, 3)).map((e) => e.seq)).toEqual([1, 2, 3]);
        expect((await journal.readAll(8)).map((e) => e.seq)).toEqual([9, 10]);
        expect(await journal.readAll(10)).toEqual([]);
        expect(await journal.readAll(50)).toEqual([]);
        expect(await journal.readAll(0, 0)).toEqual([]);
        expect((await journal.readStream('odd')).map((e) => e.version)).toEqual([1, 2, 3, 4, 5]);
        expect((await journal.readStream('odd', 4)).map((e) => e.data)).toEqual([{ i: 7 }, { i: 9 }]);
        expect((await journal.readStream('odd', 2, 2)).map((e) => e.version)).toEqual([2, 3]);
        expect(await journal.readStream('odd', 6)).toEqual([]);
        expect(await journal.readStream('odd', 1, 0)).toEqual([]);
        expect(await journal.readStream('unknown', 1)).toEqual([]);
      });

      it('rejects the whole batch when one event is malformed, writing nothing', async () => {
        await journal.append('s', [ev('ok.event')]);
        const head = journal.head();
        await expect(journal.append('s', [ev('fine'), ev('bad', { n: NaN })])).rejects.toMatchObject({ code: 'journal_invalid_event' });
        await expect(journal.append('s', [ev('fine'), { type: 'Bad Type' }])).rejects.toBeInstanceOf(JournalError);
        await expect(journal.append('../x', [ev('fine')])).rejects.toMatchObject({ code: 'journal_invalid_event' });
        await expect(journal.append('s', [])).rejects.toMatchObject({ code: 'journal_invalid_event' });
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        await expect(journal.append('s', [ev('fine', cyclic)])).rejects.toMatchObject({ code: 'journal_invalid_event' });
        expect(journal.head()).toEqual(head);
        expect(await journal.streamVersion('s')).toBe(1);
      });

      it('writes a multi-event append as one atomic, contiguous batch even when interleaved', async () => {
        const results = await Promise.all(
          Array.from({ length: 64 }, (_, i) => journal.append(`s${i % 4}`, [ev('a.one', { i }), ev('a.two', { i })])),
        );
        const all = await journal.readAll(0, 1000);
        expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 128 }, (_, i) => i + 1));
        for (const r of results) {
          expect(r.events[1].seq).toBe(r.events[0].seq + 1);
          // Each append learns the version its own last event gave the stream, though the group held more.
          expect(r.version).toBe(r.events[1].version);
        }
        for (let s = 0; s < 4; s++) {
          expect((await journal.readStream(`s${s}`)).map((e) => e.version)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
        }
        expect((await journal.verify()).ok).toBe(true);
      });
    });

    describe('optimistic concurrency', () => {
      it('checks no_stream, exact and any', async () => {
        await journal.append('c', [ev('c.made')], { expectedVersion: 'no_stream' });
        await expect(journal.append('c', [ev('c.made')], { expectedVersion: 'no_stream' })).rejects.toBeInstanceOf(JournalConflictError);
        await expect(journal.append('c', [ev('c.next')], { expectedVersion: 0 })).rejects.toMatchObject({
          code: 'journal_conflict',
          actual: 1,
        });
        await journal.append('c', [ev('c.next')], { expectedVersion: 1 });
        await journal.append('c', [ev('c.any')], { expectedVersion: 'any' });
        expect(await journal.streamVersion('c')).toBe(3);
      });

      it('lets exactly one of two concurrent writers with the same expected version win', async () => {
        await journal.append('race', [ev('r.start')]);
        for (let round = 1; round <= 20; round++) {
          const outcomes = await Promise.allSettled([
            journal.append('race', [ev('r.write', { w: 'a' })], { expectedVersion: round }),
            journal.append('race', [ev('r.write', { w: 'b' })], { expectedVersion: round }),
          ]);
          expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
          const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
          expect(lost.reason).toBeInstanceOf(JournalConflictError);
        }
        expect(await journal.streamVersion('race')).toBe(21);
      });

      it('given an append over several streams, writes them as one contiguous batch with each stream numbered on its own', async () => {
        await journal.append('one', [ev('o.made')]);
        const applied: number[][] = [];
        const [a, b] = await journal.appendAll(
          [
            { stream: 'one', events: [ev('o.next')], expectedVersion: 1 },
            { stream: 'two', events: [ev('t.made'), ev('t.next')], expectedVersion: 'no_stream' },
          ],
          { apply: (results) => applied.push(results.map((r) => r.version)) },
        );
        expect([a.version, b.version]).toEqual([2, 2]);
        expect(applied).toEqual([[2, 2]]);
        expect([...a.events, ...b.events].map((e) => e.seq)).toEqual([2, 3, 4]);
        expect((await journal.readStream('two')).map((e) => e.type)).toEqual(['t.made', 't.next']);
      });

      it('given one stale stream in an append over several, writes none of it and names the stale stream', async () => {
        await journal.append('one', [ev('o.made')]);
        await journal.append('two', [ev('t.made')]);
        const head = journal.head();
        await expect(
          journal.appendAll([
            { stream: 'one', events: [ev('o.next')], expectedVersion: 1 },
            { stream: 'two', events: [ev('t.next')], expectedVersion: 0 },
          ]),
        ).rejects.toMatchObject({ code: 'journal_conflict', stream: 'two', actual: 1 });
        expect(journal.head()).toEqual(head);
        expect(await journal.streamVersion('one')).toBe(1);
        await expect(journal.appendAll([{ stream: 'one', events: [ev('x')] }, { stream: 'one', events: [ev('y')] }])).rejects.toMatchObject({
          code: 'journal_invalid_event',
        });
      });

      it('given more streams appended to than it keeps versions of, still checks and numbers a stream that fell out', async () => {
        await journal.append('old', [ev('o.made'), ev('o.next')]);
        // Every group has its own streams: the cache is trimmed between groups.
        for (let from = 0; from <= VERSION_CACHE_STREAMS; from += 1000) {
          await Promise.all(Array.from({ length: 1000 }, (_, i) => journal.append(`many-${from + i}`, [ev('m.made')])));
        }
        await expect(journal.append('old', [ev('o.stale')], { expectedVersion: 1 })).rejects.toMatchObject({ code: 'journal_conflict', actual: 2 });
        const { events } = await journal.append('old', [ev('o.last')], { expectedVersion: 2 });
        expect(events[0].version).toBe(3);
        expect((await journal.verify()).ok).toBe(true);
      });
    });

    describe('snapshots', () => {
      it('recovers as snapshot plus exactly the one-event tail', async () => {
        for (let i = 1; i <= 5; i++) await journal.append('counter', [ev('counter.incremented', { by: i })]);
        await journal.saveSnapshot('counter', { version: 5, state: { total: 15 } });
        await journal.append('counter', [ev('counter.incremented', { by: 6 })]);
        await journal.close();
        journal = await harness.open({ now });
        const snap = await journal.loadSnapshot<{ total: number }>('counter');
        expect(snap).toMatchObject({ stream: 'counter', version: 5, seq: 5, state: { total: 15 } });
        const tail = await journal.readStream('counter', (snap?.version ?? 0) + 1);
        expect(tail).toHaveLength(1);
        expect(tail[0].data).toEqual({ by: 6 });
      });

      it('refuses to snapshot a version that does not exist', async () => {
        await journal.append('s', [ev('s.one')]);
        await expect(journal.saveSnapshot('s', { version: 2, state: {} })).rejects.toMatchObject({ code: 'journal_invalid_event' });
      });

      it('keeps a projection over many streams as of a seq, apart from every stream of that name, across a reopen', async () => {
        await journal.append('a', [ev('a.one'), ev('a.two')]);
        await journal.append('usage', [ev('b.one')]);
        expect(await journal.loadProjection('usage')).toBeNull();
        await journal.saveProjection('usage', { seq: 2, state: { folded: ['a.one', 'a.two'] } });
        await journal.saveSnapshot('usage', { version: 1, state: { stream: true } });
        await journal.close();
        journal = await harness.open({ now });
        expect(await journal.loadProjection('usage')).toMatchObject({ seq: 2, state: { folded: ['a.one', 'a.two'] } });
        expect(await journal.loadSnapshot('usage')).toMatchObject({ version: 1, state: { stream: true } });
        await expect(journal.saveProjection('usage', { seq: 99, state: {} })).rejects.toMatchObject({ code: 'journal_invalid_event' });
        await expect(journal.saveProjection('no/slash', { seq: 1, state: {} })).rejects.toMatchObject({ code: 'journal_invalid_event' });
      });
    });

    describe('persistence', () => {
      it('reopens with the same head, versions and verified chain, past several checkpoints', async () => {
        for (let i = 0; i < 12; i++) await journal.append(`p${i % 3}`, Array.from({ length: 10 }, (_, j) => ev('p.e', { i, j })));
        const head = journal.head();
        await journal.close();
        journal = await harness.open({ now, checkpointEvery: 50 });
        expect(journal.head()).toEqual(head);
        expect(await journal.streamVersion('p1')).toBe(40);
        await journal.append('p1', [ev('p.more')], { expectedVersion: 40 });
        expect(journal.openedHead()).toEqual(head);
        expect(await journal.verify()).toMatchObject({ ok: true, head_seq: 121, checked: 121 });
      });

      it('after a reopen, checks an append over many streams it knows no version of (indexed, in the tail, new) against each one', async () => {
        // Given streams written before a checkpoint, one after the last, and a reopen (no version is known)
        for (let i = 0; i < 6; i++) await journal.append(`m${i % 3}`, Array.from({ length: 10 }, (_, j) => ev('m.e', { i, j })));
        await journal.append('late', [ev('l.e')]);
        await journal.close();
        journal = await harness.open({ now, checkpointEvery: 50 });
        const append = (late: number, stale: number) =>
          journal.appendAll([
            { stream: 'm0', events: [ev('m.e')], expectedVersion: 20 },
            { stream: 'm2', events: [ev('m.e')], expectedVersion: stale },
            { stream: 'late', events: [ev('l.e')], expectedVersion: late },
            ...Array.from({ length: 20 }, (_, i) => ({ stream: `new-${i}`, events: [ev('n.e')], expectedVersion: 'no_stream' as const })),
          ]);
        // When one expected version is stale, Then none of it is written and the stale stream is named
        const head = journal.head();
        await expect(append(1, 19)).rejects.toMatchObject({ code: 'journal_conflict', stream: 'm2', actual: 20 });
        await journal.close();
        journal = await harness.open({ now, checkpointEvery: 50 });
        await expect(append(0, 20)).rejects.toMatchObject({ code: 'journal_conflict', stream: 'late', actual: 1 });
        expect(journal.head()).toEqual(head);
        // And when every one holds, Then each stream goes on from its own version
        const results = await append(1, 20);
        expect(results.map((r) => r.version)).toEqual([21, 21, 2, ...Array.from({ length: 20 }, () => 1)]);
        expect(await journal.verify()).toMatchObject({ ok: true, head_seq: 61 + 23 });
      });
      it('reads each stream whole, from any version and with a limit, across checkpoints and a reopen', async () => {
        // Given three interleaved streams, appended one and ten events at a time, past several checkpoints
        const seqs = new Map<string, number[]>();
        const add = async (stream: string, n: number) => {
          const res = await journal.append(stream, Array.from({ length: n }, (_, j) => ev('r.e', { j })));
          seqs.set(stream, [...(seqs.get(stream) ?? []), ...res.events.map((e) => e.seq)]);
        };
        for (let i = 0; i < 40; i++) await add(`r${i % 3}`, i % 4 === 0 ? 10 : 1);
        const readsMatch = async () => {
          for (const [stream, expected] of seqs) {
            expect((await journal.readStream(stream)).map((e) => [e.version, e.seq])).toEqual(expected.map((seq, i) => [i + 1, seq]));
            expect((await journal.readStream(stream, 7, 5)).map((e) => e.seq)).toEqual(expected.slice(6, 11));
            expect(await journal.readStream(stream, expected.length + 1)).toEqual([]);
            expect(await journal.streamVersion(stream)).toBe(expected.length);
          }
        };
        // Then reads agree before a reopen, after it, and after more appends
        await readsMatch();
        await journal.close();
        journal = await harness.open({ now, checkpointEvery: 50 });
        await readsMatch();
        for (let i = 0; i < 30; i++) await add(`r${i % 2}`, 2);
        await readsMatch();
      });
    });

    describe('subscriptions', () => {
      it('publishes committed events in seq order after the append resolved', async () => {
        const seen: number[] = [];
        const sub = journal.committed$.subscribe((e) => seen.push(e.seq));
        const r = await journal.append('pub', [ev('p.a'), ev('p.b')]);
        expect(seen).toEqual(r.events.map((e) => e.seq));
        sub.unsubscribe();
      });

      it('runs every apply step of a group commit before it publishes any of the group, in seq order', async () => {
        const log: string[] = [];
        const sub = journal.committed$.subscribe((e) => log.push(`published ${e.seq}`));
        const apply = (r: { events: JournalEvent[] }) => log.push(`applied ${r.events.map((e) => e.seq).join(',')}`);
        // Issued in the same tick: one group.
        await Promise.all([journal.append('ap1', [ev('a.x'), ev('a.y')], { apply }), journal.append('ap2', [ev('a.z')], { apply })]);
        sub.unsubscribe();
        expect(log).toEqual(['applied 1,2', 'applied 3', 'published 1', 'published 2', 'published 3']);
      });

      it('given an apply step that throws, rejects that append with its error and still publishes what is durable', async () => {
        const seen: number[] = [];
        const sub = journal.committed$.subscribe((e) => seen.push(e.seq));
        const broken = journal.append('ap3', [ev('a.x')], {
          apply: () => {
            throw new Error('apply failed');
          },
        });
        await expect(broken).rejects.toThrow('apply failed');
        await journal.append('ap3', [ev('a.y')], { expectedVersion: 1 });
        sub.unsubscribe();
        expect(seen).toEqual([1, 2]);
      });

      it('hands over from catch-up to live with no gap and no duplicate under 1,000 concurrent appends', async () => {
        for (let i = 0; i < 300; i++) await journal.append(`h${i % 7}`, [ev('h.before', { i })]);
        const total = 1300;
        const received = firstValueFrom(journal.subscribe(0).pipe(take(total), toArray()));
        const writers = Array.from({ length: 1000 }, (_, i) => journal.append(`h${i % 7}`, [ev('h.during', { i })]));
        await Promise.all(writers);
        const events = await received;
        expect(events.map((e: JournalEvent) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      });

      it('starts after the given seq', async () => {
        for (let i = 0; i < 5; i++) await journal.append('t', [ev('t.e', { i })]);
        const got = firstValueFrom(journal.subscribe(3).pipe(take(3), toArray()));
        await journal.append('t', [ev('t.e', { i: 5 })]);
        expect((await got).map((e) => e.seq)).toEqual([4, 5, 6]);
      });
    });

    it('refuses appends after close, and says it is no longer open', async () => {
      expect(journal.isOpen()).toBe(true);
      await journal.close();
      expect(journal.isOpen()).toBe(false);
      await expect(journal.append('x', [ev('x.y')])).rejects.toMatchObject({ code: 'journal_closed' });
      journal = await harness.open();
    });
  });
}

function canonical(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]));
  }
  return v;
}
