import { MAX_TIMER_DELAY_MS } from './deadline-timer';
import { RetentionSweeper } from './retention-sweeper';

const S = 1000;
const DAY = 86_400 * S;

describe('retention sweeper (virtual time)', () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  function sweeper(retentionMs: number, held: Set<string> = new Set()) {
    const evicted: string[] = [];
    let sweeps = 0;
    const s = new RetentionSweeper(
      retentionMs,
      Date.now,
      (ids) => {
        evicted.push(...ids.filter((id) => !held.has(id)));
        return ids.filter((id) => held.has(id));
      },
      () => sweeps++,
    );
    return { s, evicted, sweeps: () => sweeps };
  }

  it('given an item that ended, when its retention passes, then it is evicted then and not a millisecond before', () => {
    const { s, evicted } = sweeper(24 * 3600 * S);
    s.start();
    s.ended('a', Date.now());
    jest.advanceTimersByTime(DAY - 1);
    expect(evicted).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(evicted).toEqual(['a']);
  });

  it('given items ending at different times, then each leaves at its own deadline and the timer re-arms for the next', () => {
    const { s, evicted, sweeps } = sweeper(10 * S);
    s.start();
    s.ended('a', Date.now());
    jest.advanceTimersByTime(4 * S);
    s.ended('b', Date.now());
    jest.advanceTimersByTime(6 * S);
    expect(evicted).toEqual(['a']);
    jest.advanceTimersByTime(4 * S - 1);
    expect(evicted).toEqual(['a']);
    jest.advanceTimersByTime(1);
    expect(evicted).toEqual(['a', 'b']);
    expect(sweeps()).toBe(2);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('given a retention longer than a Node timer can hold, then it is reached in steps, exactly', () => {
    const retention = 30 * DAY;
    expect(retention).toBeGreaterThan(MAX_TIMER_DELAY_MS);
    const { s, evicted } = sweeper(retention);
    s.start();
    s.ended('a', Date.now());
    jest.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(evicted).toEqual([]);
    jest.advanceTimersByTime(retention - MAX_TIMER_DELAY_MS - 1);
    expect(evicted).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(evicted).toEqual(['a']);
  });

  it('given an item still held when due, then its retention starts again, and it leaves once no longer held', () => {
    const held = new Set(['a']);
    const { s, evicted } = sweeper(10 * S, held);
    s.start();
    s.ended('a', Date.now());
    jest.advanceTimersByTime(10 * S);
    expect(evicted).toEqual([]);
    expect(s.queue.clockOf('a')).toBe(Date.now());
    held.delete('a');
    jest.advanceTimersByTime(10 * S - 1);
    expect(evicted).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(evicted).toEqual(['a']);
  });

  it('given items queued before start (boot), then nothing leaves until start, and those already due leave at once', () => {
    const { s, evicted } = sweeper(10 * S);
    s.ended('old', Date.now() - 60 * S);
    s.ended('new', Date.now());
    jest.advanceTimersByTime(60 * S);
    expect(evicted).toEqual([]);
    s.start();
    jest.advanceTimersByTime(0);
    expect(evicted).toEqual(['old', 'new']);
  });

  it('given a stopped sweeper, then nothing leaves and no timer is left armed', () => {
    const { s, evicted } = sweeper(10 * S);
    s.start();
    s.ended('a', Date.now());
    s.stop();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(60 * S);
    expect(evicted).toEqual([]);
  });
});
