import { Observable, SchedulerLike, Subject, throwError, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { wakeRounds } from './wake-pipeline';

interface T {
  s: string;
  r: string;
  now?: boolean;
}

const key = (t: T) => `${t.s}:${t.r}`;

describe('wake pipeline (virtual time)', () => {
  let scheduler: TestScheduler;
  beforeEach(() => {
    scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
  });

  /** A round lasts `frames` virtual frames. */
  const rounds = (frames: number) => () => timer(frames, scheduler);

  it('given a burst inside the window, when it settles, then one round carries all of it', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const triggers = hot<T>('a-b-c-----|', { a: { s: 'w1', r: 'ask' }, b: { s: 'w2', r: 'done' }, c: { s: 'w3', r: 'blocked' } });
      const out = wakeRounds(triggers, rounds(2), { debounceMs: 3, key, scheduler });
      expectObservable(out).toBe('-------x--', {
        x: [
          { s: 'w1', r: 'ask' },
          { s: 'w2', r: 'done' },
          { s: 'w3', r: 'blocked' },
        ],
      });
    });
  });

  it('given two bursts further apart than the window, then two rounds', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const triggers = hot<T>('a-------b-------|', { a: { s: 'w1', r: 'ask' }, b: { s: 'w2', r: 'done' } });
      const out = wakeRounds(triggers, rounds(1), { debounceMs: 3, key, scheduler });
      expectObservable(out).toBe('---x-------y----', { x: [{ s: 'w1', r: 'ask' }], y: [{ s: 'w2', r: 'done' }] });
    });
  });

  it('given triggers during an in-flight round, then exactly one follow-up round starts as the round ends', () => {
    scheduler.run(({ hot, expectObservable }) => {
      // Round 1 starts at 3 and lasts 10 frames (ends at 13). b, c, d arrive during it; their window
      // closes at 9 while the round still runs: the flush is dropped, the triggers are not.
      const triggers = hot<T>('a----bcd----------|', {
        a: { s: 'w1', r: 'ask' },
        b: { s: 'w2', r: 'done' },
        c: { s: 'w3', r: 'blocked' },
        d: { s: 'w2', r: 'done' },
      });
      const out = wakeRounds(triggers, rounds(10), { debounceMs: 3, key, scheduler });
      expectObservable(out).toBe('---x---------y----', {
        x: [{ s: 'w1', r: 'ask' }],
        // w2 repeated (d) after w3, so it sorts after w3: reasons keep the order of their latest arrival.
        y: [
          { s: 'w3', r: 'blocked' },
          { s: 'w2', r: 'done' },
        ],
      });
    });
  });

  it('given triggers that never pause for a whole window, when the max wait has passed since the first, then their round starts anyway', () => {
    scheduler.run(({ hot, expectObservable }) => {
      // A trigger every 2 frames, the window 3: a plain debounce would never fire. The max wait (6) bounds it.
      const triggers = hot<T>('a-b-c-d-e-f-g-h-|', {
        a: { s: 'w1', r: 'turn' },
        b: { s: 'w1', r: 'turn' },
        c: { s: 'w2', r: 'ask' },
        d: { s: 'w1', r: 'turn' },
        e: { s: 'w1', r: 'turn' },
        f: { s: 'w1', r: 'turn' },
        g: { s: 'w1', r: 'turn' },
        h: { s: 'w1', r: 'turn' },
      });
      const out = wakeRounds(triggers, rounds(1), { debounceMs: 3, maxWaitMs: 6, key, scheduler });
      // Round 1 at 6 takes a..d (w1 once, the latest); round 2's first trigger (e at 8) bounds it to 14, but h at 14
      // is folded into it first (same frame), and the stream ends before anything else arrives.
      expectObservable(out).toBe('------x-------y--', {
        x: [
          { s: 'w2', r: 'ask' },
          { s: 'w1', r: 'turn' },
        ],
        y: [{ s: 'w1', r: 'turn' }],
      });
    });
  });

  it('given a burst that settles before the max wait, then the debounce alone decides, as without one', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const triggers = hot<T>('a-b-------|', { a: { s: 'w1', r: 'ask' }, b: { s: 'w2', r: 'done' } });
      const out = wakeRounds(triggers, rounds(1), { debounceMs: 3, maxWaitMs: 9, key, scheduler });
      expectObservable(out).toBe('-----x----', { x: [{ s: 'w1', r: 'ask' }, { s: 'w2', r: 'done' }] });
    });
  });

  it('de-duplicates a (session, reason) within a round, keeping the latest', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const triggers = hot<T>('abc------|', {
        a: { s: 'w1', r: 'ask' },
        b: { s: 'w1', r: 'done' },
        c: { s: 'w1', r: 'ask' },
      });
      const out = wakeRounds(triggers, rounds(1), { debounceMs: 2, key, scheduler });
      expectObservable(out).toBe('----x----', {
        x: [
          { s: 'w1', r: 'done' },
          { s: 'w1', r: 'ask' },
        ],
      });
    });
  });

  it('starts an immediate trigger without waiting for the window', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const triggers = hot<T>('i-----|', { i: { s: '-', r: 'initial', now: true } });
      const out = wakeRounds(triggers, rounds(1), { debounceMs: 5, key, immediate: (t) => !!t.now, scheduler });
      expectObservable(out).toBe('x-----', { x: [{ s: '-', r: 'initial', now: true }] });
    });
  });

  it('releases the lock when a round fails, and the next burst gets its round', () => {
    scheduler.run(({ hot, expectObservable }) => {
      const triggers = hot<T>('a---b------|', { a: { s: 'w1', r: 'ask' }, b: { s: 'w2', r: 'ask' } });
      let n = 0;
      const run = () => (n++ === 0 ? throwError(() => new Error('brain unreachable')) : timer(1, scheduler));
      const out = wakeRounds(triggers, run, { debounceMs: 1, key, scheduler });
      expectObservable(out).toBe('-x---y-----', { x: [{ s: 'w1', r: 'ask' }], y: [{ s: 'w2', r: 'ask' }] });
    });
  });

  it('loses no trigger under a long stream of bursts and slow rounds', () => {
    scheduler.run(({ cold, flush }) => {
      const sent: T[] = Array.from({ length: 200 }, (_, i) => ({ s: `w${i % 37}`, r: `r${i}` }));
      const marbles = sent.map((_, i) => (i % 7 === 0 ? '--x' : 'x')).join('');
      const triggers: Observable<T> = cold<T>(marbles, { x: { s: '', r: '' } }).pipe((src) =>
        new Observable<T>((sub) => {
          let i = 0;
          return src.subscribe({ next: () => sub.next(sent[i++]), complete: () => sub.complete() });
        }),
      );
      const received: T[] = [];
      wakeRounds(triggers, rounds(5), { debounceMs: 2, key, scheduler }).subscribe((b) => received.push(...b));
      flush();
      expect(received.map(key).sort()).toEqual(sent.map(key).sort());
    });
  });
  it('arms one timer for a burst, not one per trigger', () => {
    scheduler.run(({ flush }) => {
      // Given a scheduler that counts the timers armed, and 1,000 triggers, one a frame, inside a window of 5
      let armed = 0;
      const counting: SchedulerLike = { now: () => scheduler.now(), schedule: (...args: Parameters<SchedulerLike['schedule']>) => (armed++, scheduler.schedule(...args)) };
      const triggers = new Subject<T>();
      const batches: T[][] = [];
      wakeRounds(triggers, rounds(1), { debounceMs: 5, key, scheduler: counting }).subscribe((b) => batches.push(b));
      for (let i = 0; i < 1000; i++) scheduler.schedule(() => triggers.next({ s: `w${i}`, r: 'done' }), i);
      // When the burst settles; Then one round takes it all, its window timed by one timer (re-armed when it fired
      // early) and the round's end by one more, where a timer per trigger armed 1,000
      flush();
      expect(batches.map((b) => b.length)).toEqual([1000]);
      expect(armed).toBe(2);
    });
  });
});
