import { firstValueFrom, take } from 'rxjs';
import { DomainError } from '../common/domain-error';
import { CommandStream, Decision, Evolve, handleCommand } from './command-handler';
import { EventJournal } from './event-journal';
import { JournalConflictError, JournalEvent } from './journal.port';
import { MemoryStorage } from './memory.storage';

/** A counter: the smallest domain with a rule (it never goes below zero). */
type Added = { type: 'counter.added'; data: { by: number } };
const evolve: Evolve<number> = (n, e) => (e.type === 'counter.added' ? n + (e.data as Added['data']).by : n);
const add =
  (by: number) =>
  (n: number): Decision<Added> =>
    n + by < 0 ? { events: [], error: { code: 'invalid_input', message: `the counter is ${n}: it cannot take ${by}` } } : { events: [{ type: 'counter.added', data: { by } }] };

/** The counter as a feature holds it: in memory, with the version it includes. */
function counter(name = 'counter'): CommandStream<number> & { n: number; v: number } {
  return {
    name,
    n: 0,
    v: 0,
    current() {
      return { state: this.n, version: this.v };
    },
    adopt(state, version) {
      this.n = state;
      this.v = version;
    },
  };
}

/** Folds what the journal holds beyond the counter's version: how a follower catches up. */
const catchUpFrom = (journal: EventJournal, c: ReturnType<typeof counter>) => async () => {
  for (const e of await journal.readStream(c.name, c.v + 1)) c.adopt(evolve(c.n, e), e.version, [e]);
};

describe('handleCommand: load, decide, append at the expected version, apply, publish', () => {
  let journal: EventJournal;
  beforeEach(async () => {
    journal = await EventJournal.open(new MemoryStorage());
  });
  afterEach(() => journal.close());

  it('given a new stream, when a command is decided, then its events are appended as the stream\'s first and adopted', async () => {
    const c = counter();
    const handled = await handleCommand(journal, c, add(3), evolve, { meta: { actor: 'user' } });
    expect(handled).toMatchObject({ state: 3, version: 1, events: [{ type: 'counter.added', data: { by: 3 } }] });
    expect([c.n, c.v]).toEqual([3, 1]);
    const [stored] = await journal.readStream('counter');
    expect(stored).toMatchObject({ type: 'counter.added', version: 1, meta: { actor: 'user' } });
  });

  it('given a subscriber, when the events are published, then the stream has already adopted them', async () => {
    const c = counter();
    const seen = firstValueFrom(journal.committed$.pipe(take(1))).then(() => c.n);
    await handleCommand(journal, c, add(2), evolve);
    expect(await seen).toBe(2);
  });

  it('given another writer moved the stream first, when the command conflicts, then it catches up and is decided again on the new state', async () => {
    const c = counter();
    await journal.append('counter', [{ type: 'counter.added', data: { by: 5 } }]);
    const states: number[] = [];
    const handled = await handleCommand(
      journal,
      c,
      (n) => {
        states.push(n);
        return add(-4)(n);
      },
      evolve,
      { catchUp: catchUpFrom(journal, c) },
    );
    // Refused on 0, so caught up and decided again on 5.
    expect(states).toEqual([0, 5]);
    expect(handled).toMatchObject({ state: 1, version: 2 });
  });

  it('given another writer moved the stream first, when the command is accepted on the stale state, then the append conflicts and it is decided again', async () => {
    const c = counter();
    await journal.append('counter', [{ type: 'counter.added', data: { by: 5 } }]);
    const states: number[] = [];
    const handled = await handleCommand(
      journal,
      c,
      (n) => {
        states.push(n);
        return add(1)(n);
      },
      evolve,
      { catchUp: catchUpFrom(journal, c) },
    );
    expect(states).toEqual([0, 5]);
    expect(handled).toMatchObject({ state: 6, version: 2 });
  });

  it('given a stream that stays stale, when it conflicts more often than the retries allow, then the conflict is answered', async () => {
    const c = counter();
    await journal.append('counter', [{ type: 'counter.added', data: { by: 1 } }]);
    let decided = 0;
    const attempt = handleCommand(
      journal,
      c,
      (n) => {
        decided++;
        return add(1)(n);
      },
      evolve,
      { retries: 3, catchUp: async () => undefined },
    );
    await expect(attempt).rejects.toBeInstanceOf(JournalConflictError);
    expect(decided).toBe(4);
  });

  it('given a refusal, when it is decided, then a DomainError with its code is thrown and nothing is appended', async () => {
    const c = counter();
    await expect(handleCommand(journal, c, add(-1), evolve)).rejects.toMatchObject({ code: 'invalid_input', message: 'the counter is 0: it cannot take -1' });
    expect(journal.head().seq).toBe(0);
  });

  it('given a refusal that still records events, then the events are appended and adopted before the refusal is thrown', async () => {
    const c = counter();
    const refuse = (): Decision<Added> => ({ events: [{ type: 'counter.added', data: { by: 1 } }], error: { code: 'conflict', message: 'recorded, then refused' } });
    const effects: number[] = [];
    const attempt = handleCommand(journal, c, refuse, evolve, { afterAppend: async (h) => void effects.push(h.state) });
    await expect(attempt).rejects.toBeInstanceOf(DomainError);
    expect([c.n, c.v, journal.head().seq]).toEqual([1, 1, 1]);
    // The effects of what was recorded ran before the refusal was answered.
    expect(effects).toEqual([1]);
  });

  it('given a decision with no events, then nothing is appended', async () => {
    const c = counter();
    const handled = await handleCommand(journal, c, () => ({ events: [] }), evolve);
    expect(handled).toEqual({ events: [], stored: [], state: 0, version: 0 });
    expect(journal.head().seq).toBe(0);
  });

  it('given the journal refuses for another reason, then that error is thrown at once, never retried', async () => {
    const c = counter();
    await journal.close();
    let decided = 0;
    const attempt = handleCommand(
      journal,
      c,
      (n) => {
        decided++;
        return add(1)(n);
      },
      evolve,
    );
    await expect(attempt).rejects.toMatchObject({ code: 'journal_closed' });
    expect(decided).toBe(1);
    journal = await EventJournal.open(new MemoryStorage());
  });

  describe('writes alongside', () => {
    it('given a decision that implies events on another stream, then both are written in one batch and each owner adopts its own', async () => {
      const c = counter();
      const mirror = counter('mirror');
      await handleCommand(journal, c, add(2), evolve, {
        alongside: (events) => [
          {
            stream: 'mirror',
            expectedVersion: mirror.v,
            events,
            apply: (r) => mirror.adopt(r.events.reduce(evolve, mirror.n), r.version, r.events),
          },
        ],
      });
      expect([c.n, mirror.n]).toEqual([2, 2]);
      const all: JournalEvent[] = await journal.readAll();
      expect(all.map((e) => `${e.stream}@${e.version}`)).toEqual(['counter@1', 'mirror@1']);
    });

    it('given the other stream moved first, then nothing is written until it is caught up, and the command is decided again', async () => {
      const c = counter();
      const mirror = counter('mirror');
      await journal.append('mirror', [{ type: 'counter.added', data: { by: 7 } }]);
      let attempts = 0;
      await handleCommand(journal, c, add(1), evolve, {
        alongside: (events) => {
          attempts++;
          return [{ stream: 'mirror', expectedVersion: mirror.v, events, apply: (r) => mirror.adopt(r.events.reduce(evolve, mirror.n), r.version, r.events) }];
        },
        catchUp: catchUpFrom(journal, mirror),
      });
      expect(attempts).toBe(2);
      expect([c.v, mirror.n, mirror.v]).toEqual([1, 8, 2]);
      expect((await journal.readAll()).map((e) => `${e.stream}@${e.version}`)).toEqual(['mirror@1', 'counter@1', 'mirror@2']);
    });
  });
});
